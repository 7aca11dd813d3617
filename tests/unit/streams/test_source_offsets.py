"""Where each source's records begin in the records partitions a worker read (streams/runtime/source_offsets.py):
a replay starts there only where the worker read the partition without a gap from its low watermark."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from esc.streams.runtime.source_offsets import SourceOffsets, scan_start


def ev(partition: int, offset: int, source: str | None, rid: int = 0) -> Any:
    key = None if source is None else f"{source}\x1f{rid}".encode()
    return SimpleNamespace(message=SimpleNamespace(partition=partition, offset=offset, key=key))


def read(idx: SourceOffsets, partition: int, offsets: range, source: str | None) -> None:
    idx.observe([ev(partition, o, source, o) for o in offsets])


def test_a_partition_read_from_its_start_is_scanned_from_the_sources_first_record() -> None:
    idx = SourceOffsets()
    read(idx, 0, range(0, 5), "a")
    read(idx, 0, range(5, 10), "b")
    read(idx, 1, range(0, 3), "c")
    read(idx, 0, range(10, 12), "a")  # a again, later: its first record is still at 0
    known = idx.snapshot({"b"})
    assert known == {0: (0, 5), 1: (0, 3)}
    assert scan_start(0, 0, known) == 5
    assert scan_start(1, 0, known) == 3  # no b here: only what comes after the last record read
    assert scan_start(2, 0, known) == 0  # never read here: from its start
    both = idx.snapshot({"a", "b"})
    assert scan_start(0, 0, both) == 0
    assert scan_start(0, 4, idx.snapshot({"b"})) == 5 and scan_start(0, 7, idx.snapshot({"b"})) == 7  # low above


def test_a_partition_first_read_above_its_low_watermark_is_scanned_whole() -> None:
    idx = SourceOffsets()
    read(idx, 0, range(100, 110), "b")  # resumed at a committed offset: what lies below is unknown here
    assert scan_start(0, 0, idx.snapshot({"b"})) == 0
    assert scan_start(0, 100, idx.snapshot({"b"})) == 100  # retention moved the low watermark up to it


def test_a_gap_starts_the_partitions_range_over_and_a_re_read_does_not() -> None:
    idx = SourceOffsets()
    read(idx, 0, range(0, 10), "b")
    read(idx, 0, range(4, 12), "b")  # a seek back (after a rebalance): read again, no gap
    assert idx.snapshot({"b"}) == {0: (0, 0)}
    read(idx, 0, range(20, 25), "a")  # 12..19 read by another worker (or compacted away): unknown here
    assert idx.snapshot({"b"}) == {0: (20, 25)}
    assert scan_start(0, 0, idx.snapshot({"b"})) == 0
    assert scan_start(0, 20, idx.snapshot({"a"})) == 20


def test_keyless_messages_and_an_empty_snapshot() -> None:
    idx = SourceOffsets()
    assert idx.snapshot({"a"}) == {} and scan_start(0, 3, None) == 3
    read(idx, 0, range(0, 3), None)
    assert idx.snapshot({"a"}) == {0: (0, 3)}
