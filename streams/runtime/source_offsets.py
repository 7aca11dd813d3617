"""Where each source's records are in each partition of the records topic, as far as this worker has read it: so
that a replay of a few sources reads those stretches of each partition instead of the whole partition.

A backfill replays its sources' records from the records topic (``replay_reader.py``), and nothing in the topic
says where a source's records are: every replay read every partition whole. At TPC-H SF 0.1 each of the bench's
schema-diff trials (a new field in the 25-record ``nation`` source) set off a replay that read 866,602 messages,
whose key filter competed with the contract agent for the interpreter.

The worker sees every record it consumes (the records agent): per partition it remembers the first offset it read
and the offset after the last one it read, and per source the spans of offsets its records came in (two records
of a source less than ``GAP`` offsets apart are one span). A partition read without a gap from its first offset
here covers that whole range: every record of the sources in it lies in one of their spans, or after the last
offset read. So a scan of a partition this worker read from at or below its low watermark reads the sources'
spans and what came after the last offset read; any other partition whole, as before. That holds however
ownership moves later: records another worker reads in a partition land after ``upto``, which the scan covers. A
gap in what this worker reads of a partition (it was read by another worker meanwhile, or compaction removed
records) starts that partition's range over at the message after the gap; re-reads (a seek back after a
rebalance) are inside the range and already counted. Nothing is kept across restarts: the first replays after one
read whole partitions, as before.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from esc.agents.extraction import KEY_SEP

SEP = KEY_SEP.encode()  # between a record key's source and its id (bytes: split on the hot path undecoded)
GAP = 5000
"""Offsets between two records of a source up to which they count as one span (reading a few thousand other
records costs less than a seek and a new fetch)."""

Spans = list[tuple[int, int]]  # [start, end) offset ranges, sorted, disjoint


class SourceOffsets:
    def __init__(self, gap: int = GAP) -> None:
        self.gap = gap
        self.read_from: dict[int, int] = {}  # partition -> first offset of the gapless range read here
        self.upto: dict[int, int] = {}  # partition -> the offset after the last one read
        self.spans: dict[bytes, dict[int, list[list[int]]]] = {}  # source -> partition -> its spans, in order

    def observe(self, events: Iterable[Any]) -> None:
        """Faust events of the records topic, as the records agent takes them (each partition's in order)."""
        spans = self.spans
        upto = self.upto
        gap = self.gap
        for e in events:
            m = e.message
            p, off = m.partition, m.offset
            end = upto.get(p)
            if end is None or off > end:  # the first message here, or a gap before it
                self._start_over(p, off)
                end = off
            if off < end:
                continue  # read again (a seek back to the committed offset): already counted
            upto[p] = off + 1
            key = m.key
            src = key.partition(SEP)[0] if key is not None else b""
            per = spans.get(src)
            if per is None:
                spans[src] = per = {}
            runs = per.get(p)
            if runs is None:
                per[p] = [[off, off + 1]]
            elif off - runs[-1][1] <= gap:
                runs[-1][1] = off + 1
            else:
                runs.append([off, off + 1])

    def _start_over(self, p: int, off: int) -> None:
        self.read_from[p] = off
        self.upto[p] = off
        for per in self.spans.values():
            per.pop(p, None)

    def snapshot(self, sources: Iterable[str]) -> dict[int, tuple[int, Spans]]:
        """Per partition read here: (first offset of its gapless range, the spans holding the records of
        ``sources`` in it, ending with one open from the offset after the last one read). Taken on the event
        loop, handed to a scan's thread."""
        keys = [s.encode("utf-8") for s in sources]
        out = {}
        for p, frm in self.read_from.items():
            runs = [(a, b) for k in keys if (per := self.spans.get(k)) is not None for a, b in per.get(p, ())]
            out[p] = (frm, merge([*runs, (self.upto[p], OPEN)]))  # (merge sorts)
        return out


OPEN = 1 << 62  # the end of the last span: whatever is written after the last record read


def merge(runs: Iterable[tuple[int, int]]) -> Spans:
    """Sorted ranges joined where they touch or overlap."""
    out: Spans = []
    for a, b in sorted(runs):
        if out and a <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return out


def scan_spans(partition: int, low: int, high: int, known: Mapping[int, tuple[int, Spans]] | None) -> Spans:
    """What a scan reads of ``partition`` (offsets ``low``..``high``): the sources' spans in it when this worker
    read the partition from at or below ``low`` (everything in it is covered), else all of it."""
    if known is None or partition not in known or known[partition][0] > low:
        return [(low, high)] if high > low else []
    return [(max(a, low), min(b, high)) for a, b in known[partition][1] if min(b, high) > max(a, low)]
