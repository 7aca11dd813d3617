"""Discovery: profile every source under a folder, then infer keys, foreign keys and hierarchy.

``profile_sources`` reads (record readers, or the columnar fast path for large CSV files) and profiles;
``infer`` is the deterministic structural inference and works on any profiles, including merged streaming ones;
``discover`` does both and returns the observed contract (version 0, no entities).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from contract.field_profile import Caps
from contract.foreign_keys import dedupe, infer_composite, infer_nesting, infer_single, nesting_fks
from contract.hierarchy import infer_hierarchy
from contract.keys import KeyResult, infer_key, junction_key
from contract.model import Contract, ForeignKey, SourceSpec
from contract.profile import SourceProfile
from contract.records import Record, Rejected

BATCH = 20_000
"""Records of one source profiled at a time before merging into its running profile."""
COLUMNAR_MIN_BYTES = 8 << 20
"""CSV files at least this large go through the columnar (pyarrow) fast path."""
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


def profile_sources(
    root: Path, progress: Progress | None = None, caps: Caps = DISCOVERY_CAPS
) -> tuple[dict[str, SourceProfile], dict[str, dict[str, Any]], list[Rejected]]:
    """Profiles and per-source meta (format, files, parent, array_path, parent_link) of every source in root."""
    from contract.readers import read, scan_with_errors
    from contract.readers.columnar import profile_csv_columnar

    files, errors = scan_with_errors(root)
    profiles: dict[str, SourceProfile] = {}
    meta: dict[str, dict[str, Any]] = {}
    for sf in files:
        count = 0
        if sf.format in ("csv", "tsv") and not sf.is_corpus and sf.path.stat().st_size >= COLUMNAR_MIN_BYTES:
            fast = profile_csv_columnar(sf, caps)
            if isinstance(fast, SourceProfile):
                old = profiles.get(sf.source)
                profiles[sf.source] = fast if old is None else old.merge(fast)
                m = meta.setdefault(
                    sf.source, {"format": sf.format, "files": [], "parent": None, "array_path": None}
                )
                m["files"].append(sf.rel)
                m["columnar"] = True
                if progress:
                    progress(sf.rel, fast.records)
                continue
            errors.extend(fast)  # why the fast path declined; the record readers take over
        buffers: dict[str, list[Record]] = {}
        for item in read(sf):
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
        if progress:
            progress(sf.rel, count)
    for source, p in profiles.items():
        if p.parent is not None:
            meta[source]["parent_link"] = {"rows": p.parent.rows, "equal_values": dict(p.parent.matches)}
    return profiles, meta, errors


def _all_fks(
    profiles: Mapping[str, SourceProfile], keys: Mapping[str, KeyResult | None]
) -> tuple[list[ForeignKey], list[tuple[str, str, list[str], list[str], float]]]:
    nest = infer_nesting(profiles, keys)
    fks = infer_single(profiles, keys) + infer_composite(profiles, keys) + nesting_fks(nest)
    return dedupe(fks), nest


def infer_keys_and_fks(
    profiles: Mapping[str, SourceProfile],
) -> tuple[dict[str, KeyResult | None], list[ForeignKey], list[tuple[str, str, list[str], list[str], float]]]:
    keys: dict[str, KeyResult | None] = {s: infer_key(p) for s, p in sorted(profiles.items())}
    fks, nest = _all_fks(profiles, keys)
    changed = False
    for s, p in profiles.items():
        fk_cols = [
            fk.from_.fields[0]
            for fk in fks
            if fk.from_.source == s and len(fk.from_.fields) == 1 and fk.to.source != s
        ]
        jk = junction_key(p, fk_cols, keys[s])
        if jk is not None and (keys[s] is None or keys[s].fields != jk.fields):  # type: ignore[union-attr]
            keys[s] = jk
            changed = True
    if changed:
        fks, nest = _all_fks(profiles, keys)
    return keys, fks, nest


def infer(
    profiles: Mapping[str, SourceProfile], meta: Mapping[str, Mapping[str, Any]] | None = None
) -> Contract:
    """The observed contract (version 0, no entities) from profiles alone."""
    meta = meta or {}
    keys, fks, nest = infer_keys_and_fks(profiles)
    sources: dict[str, SourceSpec] = {}
    for s, p in sorted(profiles.items()):
        m = meta.get(s, {})
        key = keys.get(s)
        fmt = m.get("format") or (p.formats[0] if p.formats else "json")
        sources[s] = SourceSpec.model_validate(
            {
                "format": fmt,
                "files": list(m.get("files", [])),
                "records": p.records,
                "parent": p.parent.parent if p.parent is not None else m.get("parent"),
                "identity_key": list(key.fields) if key else [],
                "key_confidence": key.confidence if key else None,
                "key_evidence": dict(key.evidence) if key else {},
                "fields": p.field_specs(),
            }
        )
    return Contract(
        version=0, sources=sources, foreign_keys=fks, hierarchy=infer_hierarchy(profiles, keys, nest)
    )


def discover(root: Path, progress: Progress | None = None, caps: Caps = DISCOVERY_CAPS) -> DiscoveryResult:
    t0 = time.perf_counter()
    profiles, meta, errors = profile_sources(root, progress, caps)
    contract = infer(profiles, meta)
    return DiscoveryResult(contract, profiles, errors, time.perf_counter() - t0, meta)
