"""Structural inference from profiles alone: identity keys, foreign keys (single, composite, nesting) and
hierarchy. Works on any profiles, including merged streaming ones; the folder reading half of discovery is
``esc.streams.discover``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from esc.contract.fk_composite import dedupe, infer_composite, infer_nesting, nesting_fks
from esc.contract.foreign_keys import infer_single
from esc.contract.hierarchy import infer_hierarchy
from esc.contract.keys import KeyResult, infer_key, junction_key
from esc.contract.model import Contract, ForeignKey, SourceSpec
from esc.contract.profile import SourceProfile


def _all_fks(
    profiles: Mapping[str, SourceProfile], keys: Mapping[str, KeyResult | None]
) -> tuple[list[ForeignKey], list[tuple[str, str, list[str], list[str], float]]]:
    nest = infer_nesting(profiles, keys)
    fks = infer_single(profiles, keys) + infer_composite(profiles, keys) + nesting_fks(nest)
    return dedupe(fks), nest


def infer_keys_and_fks(
    profiles: Mapping[str, SourceProfile],
) -> tuple[dict[str, KeyResult | None], list[ForeignKey], list[tuple[str, str, list[str], list[str], float]]]:
    keys: dict[str, KeyResult | None] = {s: infer_key(p, profiles) for s, p in sorted(profiles.items())}
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
