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
from concurrent.futures import Future, ProcessPoolExecutor
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
"""Local discovery keeps exact tuple sets for key-candidate pairs up to 8M rows (64 MiB each at most), so
composite keys of large tables are proven rather than estimated; single fields keep exact sets up to 65,536
distinct values (512 KiB each at most), then HyperLogLog."""

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
    parts: dict[str, list[tuple[int, SourceProfile | list[Rejected]]]] = {}
    n_workers = workers if workers is not None else max(1, os.cpu_count() or 1)
    pool = None
    futures: list[tuple[Any, int, Future[SourceProfile | list[Rejected]]]] = []
    if jobs and n_workers > 1 and len(jobs) > 1:
        pool = ProcessPoolExecutor(max_workers=n_workers, mp_context=mp.get_context("spawn"))
        jobs.sort(key=lambda j: j[2] - j[3])  # largest ranges first
        futures = [(sf, a, pool.submit(profile_csv_range, sf, plan, a, b, caps)) for sf, plan, a, b in jobs]
    else:
        for sf, plan, a, b in jobs:
            parts.setdefault(sf.rel, []).append((a, profile_csv_range(sf, plan, a, b, caps)))
    try:
        for sf in rest:
            n = _read_records(sf, profiles, meta, errors, caps, max_fields)
            if progress:
                progress(sf.rel, n)
        for sf, a, fut in futures:
            parts.setdefault(sf.rel, []).append((a, fut.result()))
    finally:
        if pool is not None:
            pool.shutdown()
    by_rel = {sf.rel: sf for sf, _, _, _ in jobs}
    for rel, got in sorted(parts.items()):
        sf = by_rel[rel]
        got.sort(key=lambda t: t[0])
        declined = [r for _, p in got if isinstance(p, list) for r in p]
        if declined:
            errors.extend(declined[:1])
            n = _read_records(sf, profiles, meta, errors, caps, max_fields)
        else:
            merged: SourceProfile | None = None
            for _, p in got:
                assert isinstance(p, SourceProfile)
                merged = p if merged is None else merged.merge(p)
            assert merged is not None
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
