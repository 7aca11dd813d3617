"""Where each source's records begin in each partition of the records topic, as far as this worker has read it: so
that a replay of a few sources reads each partition from there instead of from its start.

A backfill replays its sources' records from the records topic (``replay_reader.py``), and nothing in the topic
says where a source's records are: every replay read every partition whole. At TPC-H SF 0.1 each schema-diff trial
of the bench (a new field in a new 25-record source) set off a replay that read 866,602 messages, whose key filter
competed with the contract agent for the interpreter: the diff p95 moved between 0.285 and 0.512 s from run to run.

The worker sees every record it consumes (the records agent): per partition it remembers the first offset it read
and the offset after the last one it read, and per source the lowest offset it read of it. A partition read
without a gap from its first offset here covers that whole range, so a source's records in it that lie below where
the scan would start are ones this worker read, and it saw the lowest of them. The start handed to a scan is, for a
partition this worker read from at or below its low watermark, the lowest offset of any of the sources (or, if
none was read here, the offset after the last one read: newer records are all scanned); for any other partition
its low watermark, as before. It is a lower bound however ownership moves later: records another worker reads in a
partition land after ``upto``, which the scan covers. A gap in what this worker reads of a partition (it was read
by another worker meanwhile, or compaction removed records) starts that partition's range over at the message
after the gap; re-reads (a seek back after a rebalance) stay inside the range. Nothing is kept across restarts: the
first replays after one read whole partitions, as before.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

SEP = b"\x1f"  # between a record key's source and its id


class SourceOffsets:
    def __init__(self) -> None:
        self.read_from: dict[int, int] = {}  # partition -> first offset of the gapless range read here
        self.upto: dict[int, int] = {}  # partition -> the offset after the last one read
        self.first: dict[bytes, dict[int, int]] = {}  # source -> partition -> lowest offset read of it

    def observe(self, events: Iterable[Any]) -> None:
        """Faust events of the records topic, as the records agent takes them (each partition's in order)."""
        first = self.first
        upto = self.upto
        for e in events:
            m = e.message
            p, off = m.partition, m.offset
            end = upto.get(p)
            if end is None or off > end:  # the first message here, or a gap before it
                self._start_over(p, off)
                end = off
            key = m.key
            src = key.partition(SEP)[0] if key is not None else b""
            per = first.get(src)
            if per is None:
                first[src] = per = {}
            if off < per.get(p, off + 1):
                per[p] = off
            if off >= end:
                upto[p] = off + 1
            # below ``end``: read again (a seek back to the committed offset); below ``read_from`` it claims
            # nothing (what lies between it and ``read_from`` is not read yet)

    def _start_over(self, p: int, off: int) -> None:
        self.read_from[p] = off
        self.upto[p] = off
        for per in self.first.values():
            per.pop(p, None)

    def snapshot(self, sources: Iterable[str]) -> dict[int, tuple[int, int]]:
        """Per partition read here: (first offset of its gapless range, where the records of ``sources`` in it
        begin as far as known: their lowest offset read, else the offset after the last one read). Taken on the
        event loop, handed to a scan's thread."""
        keys = [s.encode("utf-8") for s in sources]
        out = {}
        for p, frm in self.read_from.items():
            lows = [per[p] for k in keys if (per := self.first.get(k)) is not None and p in per]
            out[p] = (frm, min(lows) if lows else self.upto[p])
        return out


def scan_start(partition: int, low: int, known: Mapping[int, tuple[int, int]] | None) -> int:
    """Where a scan reads ``partition`` from: the sources' start in it when this worker read the partition from at
    or below its low watermark ``low`` (everything in it is covered), else ``low``."""
    if known is None or partition not in known:
        return low
    frm, start = known[partition]
    return max(low, start) if frm <= low else low
