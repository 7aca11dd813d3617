"""Discovery of a folder: profile every source under it, then infer keys, foreign keys and hierarchy.

``profile_sources`` reads (record readers, or the columnar fast path for large CSV files) and profiles, in worker
processes; the inference is the pure ``esc.contract.inference.infer``; ``discover`` does both and returns the
observed contract (version 0, no entities).
"""

from __future__ import annotations

import multiprocessing as mp
import os
import time
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from esc.contract.field_cap import MAX_FIELDS_PER_SOURCE
from esc.contract.field_profile import Caps
from esc.contract.inference import infer
from esc.contract.model import Contract
from esc.contract.profile import SourceProfile
from esc.contract.records import Record, Rejected

BATCH = 20_000
"""Records of one source profiled at a time before merging into its running profile."""
COLUMNAR_MIN_BYTES = 1 << 20
"""CSV files at least this large go through the columnar (pyarrow) fast path."""
PART_BYTES = 96 << 20
"""Byte range of a large CSV file profiled by one worker."""
DISCOVERY_CAPS = Caps(exact=1 << 16, combo=1 << 23)
"""Local discovery keeps exact tuple sets for the whole row and for pairs of id-named columns up to 8M rows (64
MiB each at most), so duplicate rows and the composite keys of large tables are proven rather than estimated;
single fields and other combinations keep exact sets up to 65,536 distinct values (512 KiB each at most), then
HyperLogLog."""

Progress = Callable[[str, int], None]


@dataclass
class DiscoveryResult:
    contract: Contract
    profiles: dict[str, SourceProfile]
    errors: list[Rejected]
    seconds: float
    meta: dict[str, dict[str, Any]] = field(default_factory=dict)


def _flush(source: str, buf: list[Record], profiles: dict[str, SourceProfile], caps: Caps) -> None:
    if not buf:
        return
    prof = SourceProfile.of_records(source, buf, caps)
    old = profiles.get(source)
    profiles[source] = prof if old is None else old.merge(prof)
    buf.clear()


def _note(meta: dict[str, dict[str, Any]], rec: Record, rel: str) -> None:
    m = meta.get(rec.source)
    if m is None:
        m = meta[rec.source] = {"format": rec.format, "files": [], "parent": None, "array_path": None}
    if rel not in m["files"]:
        m["files"].append(rel)
    if rec.parent is not None and m["parent"] is None:
        m["parent"] = rec.parent.source
        m["array_path"] = rec.array_path


def _columnar_jobs(
    files: list[Any], errors: list[Rejected], max_fields: int
) -> tuple[list[tuple[Any, Any, int, int]], list[Any]]:
    """Large CSV files cut into byte ranges for the fast path, and the files left for the record readers."""
    from esc.streams.readers.columnar import plan_csv, split_ranges

    jobs: list[tuple[Any, Any, int, int]] = []
    rest: list[Any] = []
    for sf in files:
        if sf.format in ("csv", "tsv") and not sf.is_corpus and sf.path.stat().st_size >= COLUMNAR_MIN_BYTES:
            plan = plan_csv(sf, max_fields=max_fields)
            if isinstance(plan, list):
                errors.extend(plan)  # why the fast path declined; the record readers take over
                rest.append(sf)
                continue
            parts = max(1, min(64, plan.size // PART_BYTES))
            jobs.extend((sf, plan, a, b) for a, b in split_ranges(sf, plan, parts))
        else:
            rest.append(sf)
    return jobs, rest


def _read_records(
    sf: Any,
    profiles: dict[str, SourceProfile],
    meta: dict[str, dict[str, Any]],
    errors: list[Rejected],
    caps: Caps,
    max_fields: int = MAX_FIELDS_PER_SOURCE,
) -> int:
    from esc.streams.readers import read

    count = 0
    buffers: dict[str, list[Record]] = {}
    for item in read(sf, max_fields=max_fields):
        if isinstance(item, Rejected):
            errors.append(item)
            continue
        count += 1
        _note(meta, item, sf.rel)
        buf = buffers.setdefault(item.source, [])
        buf.append(item)
        if len(buf) >= BATCH:
            _flush(item.source, buf, profiles, caps)
    for source, buf in buffers.items():
        _flush(source, buf, profiles, caps)
    return count


class _RangeMerger:
    """The byte ranges of each large file merged in range order as they arrive (so the result does not depend
    on timing, and a finished range waits only for the ranges before it, not for the whole file)."""

    def __init__(self, jobs: list[tuple[Any, Any, int, int]]) -> None:
        self.files: dict[str, Any] = {}
        self.order: dict[str, list[int]] = {}
        for sf, _, a, _ in jobs:
            self.files[sf.rel] = sf
            self.order.setdefault(sf.rel, []).append(a)
        for starts in self.order.values():
            starts.sort()
        self.waiting: dict[str, dict[int, SourceProfile]] = {rel: {} for rel in self.files}
        self.merged: dict[str, SourceProfile | None] = {}
        self.next: dict[str, int] = {rel: 0 for rel in self.files}
        self.declined: dict[str, list[Rejected]] = {}

    def add(self, rel: str, start: int, part: SourceProfile | list[Rejected]) -> None:
        if isinstance(part, list):
            self.declined.setdefault(rel, []).extend(part)
            self.waiting[rel].clear()
            self.merged.pop(rel, None)
            return
        if rel in self.declined:
            return  # the file is read record by record: its other ranges are not needed
        self.waiting[rel][start] = part
        starts = self.order[rel]
        while self.next[rel] < len(starts) and starts[self.next[rel]] in self.waiting[rel]:
            p = self.waiting[rel].pop(starts[self.next[rel]])
            have = self.merged.get(rel)
            self.merged[rel] = p if have is None else have.merge(p)
            self.next[rel] += 1

    def done(self) -> list[tuple[str, SourceProfile | None]]:
        """(file, its merged profile, or None when a range declined), in file order."""
        return [(rel, None if rel in self.declined else self.merged[rel]) for rel in sorted(self.files)]


def profile_sources(
    root: Path,
    progress: Progress | None = None,
    caps: Caps = DISCOVERY_CAPS,
    workers: int | None = None,
    max_fields: int = MAX_FIELDS_PER_SOURCE,
) -> tuple[dict[str, SourceProfile], dict[str, dict[str, Any]], list[Rejected]]:
    """Profiles and per-source meta (format, files, parent, array_path, parent_link) of every source in root.

    Large CSV files are cut into byte ranges profiled column by column in ``workers`` processes (default: one
    per core) while the other files are read record by record here; the partial profiles are merged (in range
    order, so the result does not depend on timing). A file whose fast path declines is read record by record.
    Each source gets at most ``max_fields`` fields (``contract.field_cap``: the rest go to its overflow field).
    """
    from esc.streams.readers import scan_with_errors
    from esc.streams.readers.columnar import profile_csv_range

    files, errors = scan_with_errors(root)
    profiles: dict[str, SourceProfile] = {}
    meta: dict[str, dict[str, Any]] = {}
    jobs, rest = _columnar_jobs(files, errors, max_fields)
    n_workers = workers if workers is not None else max(1, os.cpu_count() or 1)
    ranges = _RangeMerger(jobs)
    pool = None
    futures: dict[Future[SourceProfile | list[Rejected]], tuple[str, int]] = {}
    if jobs and n_workers > 1 and len(jobs) > 1:
        pool = ProcessPoolExecutor(max_workers=n_workers, mp_context=mp.get_context("spawn"))
        for sf, plan, a, b in sorted(jobs, key=lambda j: j[2] - j[3]):  # largest ranges first
            futures[pool.submit(profile_csv_range, sf, plan, a, b, caps)] = (sf.rel, a)
    else:
        for sf, plan, a, b in jobs:
            ranges.add(sf.rel, a, profile_csv_range(sf, plan, a, b, caps))
    try:
        for sf in rest:
            n = _read_records(sf, profiles, meta, errors, caps, max_fields)
            if progress:
                progress(sf.rel, n)
        for fut in as_completed(list(futures)):
            rel, a = futures.pop(fut)
            ranges.add(rel, a, fut.result())  # merged as soon as the ranges before it are: parts do not pile up
    finally:
        if pool is not None:
            pool.shutdown()
    for rel, merged in ranges.done():
        sf = ranges.files[rel]
        if merged is None:
            errors.extend(ranges.declined[rel][:1])
            n = _read_records(sf, profiles, meta, errors, caps, max_fields)
        else:
            old = profiles.get(sf.source)
            profiles[sf.source] = merged if old is None else old.merge(merged)
            m = meta.setdefault(
                sf.source, {"format": sf.format, "files": [], "parent": None, "array_path": None}
            )
            m["files"].append(sf.rel)
            m["columnar"] = True
            n = merged.records
        if progress:
            progress(rel, n)
    for source, p in profiles.items():
        if p.parent is not None:
            meta[source]["parent_link"] = {"rows": p.parent.rows, "equal_values": dict(p.parent.matches)}
    return profiles, meta, errors


def discover(
    root: Path,
    progress: Progress | None = None,
    caps: Caps = DISCOVERY_CAPS,
    max_fields: int = MAX_FIELDS_PER_SOURCE,
) -> DiscoveryResult:
    t0 = time.perf_counter()
    profiles, meta, errors = profile_sources(root, progress, caps, max_fields=max_fields)
    contract = infer(profiles, meta)
    return DiscoveryResult(contract, profiles, errors, time.perf_counter() - t0, meta)
