"""Where each source's records are in the records partitions a worker read (streams/runtime/source_offsets.py): a
replay reads only those spans where the worker read the partition without a gap from its low watermark."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from esc.streams.runtime.source_offsets import OPEN, SourceOffsets, merge, scan_spans


def ev(partition: int, offset: int, source: str | None) -> Any:
    key = None if source is None else f"{source}\x1f{offset}".encode()
    return SimpleNamespace(message=SimpleNamespace(partition=partition, offset=offset, key=key))


def read(idx: SourceOffsets, partition: int, offsets: range, source: str | None) -> None:
    idx.observe([ev(partition, o, source) for o in offsets])


def test_a_partition_read_from_its_start_is_scanned_in_the_sources_spans_and_after_the_last_offset_read() -> None:
    idx = SourceOffsets(gap=3)
    read(idx, 0, range(0, 5), "a")
    read(idx, 0, range(5, 10), "b")
    read(idx, 0, range(10, 20), "a")
    read(idx, 0, range(20, 22), "b")  # b again, 11 offsets after its last record: a span of its own
    read(idx, 1, range(0, 3), "c")
    known = idx.snapshot({"b"})
    assert known == {0: (0, [(5, 10), (20, OPEN)]), 1: (0, [(3, OPEN)])}  # (20, 22) and what came after: one
    assert scan_spans(0, 0, 30, known) == [(5, 10), (20, 30)]
    assert scan_spans(1, 0, 3, known) == []  # no b here, and nothing written after the last record read
    assert scan_spans(1, 0, 9, known) == [(3, 9)]
    assert scan_spans(2, 0, 9, known) == [(0, 9)]  # never read here: all of it
    assert scan_spans(0, 7, 30, known) == [(7, 10), (20, 30)]  # the low watermark cuts into a span
    assert scan_spans(0, 0, 8, known) == [(5, 8)]  # the end offset as well
    assert idx.snapshot({"a", "b"})[0][1] == [(0, OPEN)]  # every record of the partition is a's or b's


def test_records_a_few_offsets_apart_are_one_span() -> None:
    idx = SourceOffsets(gap=3)
    idx.observe([ev(0, o, "a" if o % 3 == 0 else "x") for o in range(0, 30)])  # every third record is a's
    assert idx.snapshot({"a"})[0][1] == [(0, 28), (30, OPEN)]  # one span to its last record, then what comes
    assert merge([(5, 8), (1, 3), (3, 4), (7, 9)]) == [(1, 4), (5, 9)]


def test_a_partition_first_read_above_its_low_watermark_is_scanned_whole() -> None:
    idx = SourceOffsets()
    read(idx, 0, range(100, 110), "b")  # resumed at a committed offset: what lies below is unknown here
    assert scan_spans(0, 0, 120, idx.snapshot({"b"})) == [(0, 120)]
    assert scan_spans(0, 100, 120, idx.snapshot({"b"})) == [(100, 120)]  # retention moved the low watermark up


def test_a_gap_starts_the_partitions_range_over_and_a_re_read_does_not() -> None:
    idx = SourceOffsets()
    read(idx, 0, range(0, 10), "b")
    read(idx, 0, range(4, 12), "a")  # a seek back (after a rebalance): 4..9 read again (they are b's), 10, 11 new
    assert idx.snapshot({"b"}) == {0: (0, [(0, 10), (12, OPEN)])}
    read(idx, 0, range(20, 25), "a")  # 12..19 read by another worker (or compacted away): unknown here
    assert idx.snapshot({"b"}) == {0: (20, [(25, OPEN)])}
    assert scan_spans(0, 0, 30, idx.snapshot({"b"})) == [(0, 30)]
    assert scan_spans(0, 20, 30, idx.snapshot({"a"})) == [(20, 30)]


def test_keyless_messages_and_an_empty_snapshot() -> None:
    idx = SourceOffsets()
    assert idx.snapshot({"a"}) == {} and scan_spans(0, 3, 9, None) == [(3, 9)] and scan_spans(0, 3, 3, None) == []
    read(idx, 0, range(0, 3), None)
    assert idx.snapshot({"a"}) == {0: (0, [(3, OPEN)])}
