"""Monotonic contract evolution: merge new evidence into a contract, version it, and say what was added.

Rules (DESIGN.md §1, "schema extension is monotonic"):

* Merging only ever **adds**: sources, fields, identity keys, foreign keys, hierarchy edges, entity types,
  attributes, relationships. Nothing known is removed or renamed.
* A field type only **widens** (``contract.typing.widen``); it never narrows.
* **Statistics** (record counts, null rates, distinct counts, min/max, lengths, top values, examples, semantic
  hints, key/FK confidences and evidence, file lists) are refreshed from the latest observation but are *not*
  part of the version identity. The identity is ``content_hash``: a canonical hash (sorted keys, sorted
  collections) of the structural content only, so replaying the same evidence never bumps the version.
* ``version`` grows by exactly 1 per structural change; unchanged structure returns ``None`` as the diff and keeps
  the previous version and hash (with refreshed statistics).
* A key proven earlier and **not re-proved** later (a duplicate or a null arrived) is kept, because old queries and
  MERGE constraints rely on it; the disagreement is recorded in the source's ``key_evidence["violation"]`` with
  the observed key, its confidence and the key fields' observed uniqueness / null rate. Likewise a foreign key
  whose two sources were both observed again without re-proving it gets ``evidence["violation"]``. Neither
  changes the version; readers surface them as warnings.
"""

from __future__ import annotations

import copy
import hashlib
import json
from typing import Any

from esc.contract.contract_diff import check_monotonic, diff_items
from esc.contract.entities import (
    derive,
    merge_entities,
    merge_relationships,
    pinned_names,
    qualified_entity_name,
)
from esc.contract.model import (
    Contract,
    ContractDiff,
    FieldSpec,
    ForeignKey,
    HierarchyEdge,
    SourceSpec,
)
from esc.contract.typing import widen

__all__ = ["check_monotonic", "content_hash", "diff_items", "evolve", "merge", "structure"]

HASH_CHARS = 32

_STAT_FIELDS = (
    "count",
    "null_rate",
    "distinct",
    "uniqueness",
    "min",
    "max",
    "min_length",
    "max_length",
    "top_values",
    "examples",
)


# --------------------------------------------------------------------------------------------------- identity


def structure(contract: Contract) -> dict[str, Any]:
    """The structural content of a contract: everything that defines its version, nothing statistical."""
    return {
        "sources": {
            name: {
                "format": src.format,
                "parent": src.parent,
                "identity_key": list(src.identity_key),
                "fields": sorted(([f.id, f.name, f.path, f.type] for f in src.fields), key=lambda x: x[0]),
            }
            for name, src in contract.sources.items()
        },
        "foreign_keys": sorted(
            [fk.from_.source, list(fk.from_.fields), fk.to.source, list(fk.to.fields)]
            for fk in contract.foreign_keys
        ),
        "hierarchy": sorted(
            [h.parent, h.child, h.path, list(h.parent_fields), list(h.child_fields)]
            for h in contract.hierarchy
        ),
        "entities": sorted(
            (
                {
                    "name": e.name,
                    "source": e.source,
                    "key": list(e.key),
                    "descriptive": e.descriptive,
                    "attributes": sorted([a.field_id, a.name, a.type] for a in e.attributes),
                }
                for e in contract.entities
            ),
            key=lambda d: str(d["name"]),
        ),
        "relationships": sorted(
            [r.name, r.kind, r.from_entity, r.to_entity, list(r.from_fields), list(r.to_fields)]
            for r in contract.relationships
        ),
    }


def content_hash(contract: Contract) -> str:
    """Canonical hash of :func:`structure` (sorted keys, compact separators)."""
    blob = json.dumps(structure(contract), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:HASH_CHARS]


# ----------------------------------------------------------------------------------------------------- merging


def _merge_field(old: FieldSpec, new: FieldSpec) -> FieldSpec:
    """A new field: ``old`` (left as it is) with ``new``'s statistics (copied: ``new`` is an input)."""
    merged = old.model_copy()
    merged.type = widen(old.type, new.type)
    for name in _STAT_FIELDS:
        setattr(merged, name, copy.deepcopy(getattr(new, name)))
    if merged.semantic is None:
        merged.semantic = new.semantic
    return merged


def _key_violation(old: SourceSpec, new: SourceSpec, reason: str) -> dict[str, Any]:
    fields = {}
    for name in old.identity_key:
        f = new.field(name)
        if f is not None:
            fields[name] = {"uniqueness": f.uniqueness, "null_rate": f.null_rate, "distinct": f.distinct}
    return {
        "observed_key": list(new.identity_key),
        "observed_confidence": new.key_confidence,
        "observed_records": new.records,
        "fields": fields,
        "reason": reason or "later evidence did not re-prove this key",
    }


def _merge_source(old: SourceSpec, new: SourceSpec, reason: str) -> SourceSpec:
    """A new source: ``old`` (left as it is) with ``new`` merged in."""
    merged = old.model_copy()
    merged.fields = list(old.fields)
    merged.files = sorted(set(old.files) | set(new.files))
    merged.records = new.records
    merged.parent = old.parent or new.parent
    if not old.identity_key:
        merged.identity_key = list(new.identity_key)
        merged.key_confidence = new.key_confidence
        merged.key_evidence = dict(new.key_evidence)
    elif list(new.identity_key) == list(old.identity_key):
        merged.key_confidence = new.key_confidence
        merged.key_evidence = dict(new.key_evidence)
        near = new.key_evidence.get("near_unique")
        if isinstance(near, dict) and not old.key_evidence.get("near_unique"):  # proven before, repeats now
            why = reason or f"the key now repeats on {near.get('conflicts')} rows that differ (near-unique)"
            merged.key_evidence["violation"] = _key_violation(old, new, why)
    else:
        merged.key_evidence = {**old.key_evidence, "violation": _key_violation(old, new, reason)}
    by_id = {f.id: i for i, f in enumerate(merged.fields)}
    for f in new.fields:
        if f.id in by_id:
            merged.fields[by_id[f.id]] = _merge_field(merged.fields[by_id[f.id]], f)
        else:
            by_id[f.id] = len(merged.fields)
            merged.fields.append(f.model_copy(deep=True))
    return merged


def _merge_fks(old: Contract, new: Contract, reason: str) -> list[ForeignKey]:
    out = [fk.model_copy(deep=True) for fk in old.foreign_keys]
    index = {fk.signature(): fk for fk in out}
    seen = set()
    for fk in new.foreign_keys:
        seen.add(fk.signature())
        have = index.get(fk.signature())
        if have is None:
            copy = fk.model_copy(deep=True)
            out.append(copy)
            index[copy.signature()] = copy
        else:
            have.confidence = fk.confidence
            have.evidence = dict(fk.evidence)
    for fk in out:
        both_observed = fk.from_.source in new.sources and fk.to.source in new.sources
        if (
            both_observed
            and fk.signature() not in seen
            and fk.signature() in {k.signature() for k in old.foreign_keys}
        ):
            fk.evidence = {
                **fk.evidence,
                "violation": reason or "later evidence did not re-prove this foreign key",
            }
    return out


def _merge_hierarchy(old: list[HierarchyEdge], new: list[HierarchyEdge]) -> list[HierarchyEdge]:
    out = [h.model_copy(deep=True) for h in old]
    known = {(h.parent, h.child, h.path) for h in out}
    for h in new:
        if (h.parent, h.child, h.path) not in known:
            known.add((h.parent, h.child, h.path))
            out.append(h.model_copy(deep=True))
    return out


def _align_names(base: Contract, observed: Contract) -> Contract:
    """Make observed labels agree with the labels ``base`` already gave (labels are unique, never renamed).

    An observed entity that is a source's deterministic entity (every field of its source, same key) under a
    different label is folded into the label ``base`` gave that source; an observed label that ``base`` gave
    to a different source is renamed (qualified by the source name, then a numeric suffix).
    """
    owner = {e.name: e.source for e in base.entities}
    pinned = pinned_names(base)
    taken = set(owner) | {e.name for e in observed.entities}
    renames: dict[str, str] = {}
    for e in observed.entities:
        src = observed.sources.get(e.source)
        label = pinned.get(e.source)
        if label is not None and label != e.name and src is not None:
            whole = {a.field_id for a in e.attributes} == {f.id for f in src.fields}
            key = [f.id for f in src.fields if f.name in src.identity_key]
            if whole and sorted(e.key) == sorted(key):
                renames[e.name] = label
                continue
        if e.name in owner and owner[e.name] != e.source:
            candidate, n = qualified_entity_name(e.source), 2
            while candidate in taken:
                candidate = f"{qualified_entity_name(e.source)}{n}"
                n += 1
            taken.add(candidate)
            renames[e.name] = candidate
    if not renames:
        return observed
    aligned = observed.model_copy(deep=True)
    for e in aligned.entities:
        e.name = renames.get(e.name, e.name)
    for r in aligned.relationships:
        r.from_entity = renames.get(r.from_entity, r.from_entity)
        r.to_entity = renames.get(r.to_entity, r.to_entity)
    return aligned


def merge(previous: Contract | None, observed: Contract, reason: str = "") -> Contract:
    """Add-only merge of ``observed`` into ``previous`` plus derived entities/relationships (no versioning).

    Entities and relationships already in ``observed`` (LLM proposals validated by ``contract.proposals``) are
    merged by name; derived ones keep the labels ``previous`` gave their sources. To add proposals to a
    new observation, apply them to ``merge(previous, observed)`` and pass that to :func:`evolve`.
    """
    base = previous if previous is not None else Contract(contract_id=observed.contract_id)
    # A shallow copy: every part below is replaced, never changed in place (``_merge_source`` and ``_merge_field``
    # build new objects), so ``previous`` stays as it was without deep-copying it (on a contract of 20,000 fields
    # the copy was most of a merge, once per version).
    merged = base.model_copy()
    merged.sources = dict(base.sources)
    for name in observed.sources:
        src = observed.sources[name]
        have = merged.sources.get(name)
        merged.sources[name] = src.model_copy(deep=True) if have is None else _merge_source(have, src, reason)
    merged.foreign_keys = _merge_fks(base, observed, reason)
    merged.hierarchy = _merge_hierarchy(base.hierarchy, observed.hierarchy)
    observed = _align_names(base, observed)
    merged.entities = merge_entities(base.entities, observed.entities)
    merged.relationships = merge_relationships(base.relationships, observed.relationships)
    entities, relationships = derive(merged, pinned_names(merged))
    merged.entities = merge_entities(merged.entities, entities)
    merged.relationships = merge_relationships(merged.relationships, relationships)
    return merged


# ---------------------------------------------------------------------------------------------------- evolving


def evolve(
    previous: Contract | None, observed: Contract, reason: str = ""
) -> tuple[Contract, ContractDiff | None]:
    """Merge ``observed`` into ``previous``; a structural change gives version + 1 and the diff, else ``None``.

    ``previous=None`` starts a contract: version 1, and a diff from version 0 listing everything. The inputs are
    never modified. Unchanged structure returns the merged contract (fresh statistics) with the previous version
    and hash, and ``None``.
    """
    merged = merge(previous, observed, reason)
    new_hash = content_hash(merged)
    if previous is not None and content_hash(previous) == new_hash:
        merged.version = previous.version
        merged.content_hash = new_hash
        return merged, None
    old = previous if previous is not None else Contract(contract_id=merged.contract_id)
    merged.version = old.version + 1
    merged.content_hash = new_hash
    diff = ContractDiff(
        contract_id=merged.contract_id,
        from_version=old.version,
        to_version=merged.version,
        added=diff_items(old, merged),
        reason=reason,
    )
    return merged, diff
