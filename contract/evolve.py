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

from esc.contract.entities import (
    derive,
    merge_entities,
    merge_relationships,
    pinned_names,
    qualified_entity_name,
    rel_signature,
)
from esc.contract.model import (
    Contract,
    ContractDiff,
    DiffItem,
    FieldSpec,
    ForeignKey,
    HierarchyEdge,
    SourceSpec,
)
from esc.contract.typing import widen

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


# ------------------------------------------------------------------------------------------------------- diffs


def _fk_target(fk: ForeignKey) -> str:
    return f"{fk.from_.source}.{','.join(fk.from_.fields)}->{fk.to.source}.{','.join(fk.to.fields)}"


def _evidence_text(evidence: dict[str, Any]) -> str:
    parts = [
        f"{k}={evidence[k]}" for k in sorted(evidence) if isinstance(evidence[k], int | float | str | bool)
    ]
    return ", ".join(parts[:6])


def diff_items(old: Contract, new: Contract) -> list[DiffItem]:
    """Every structural element of ``new`` that ``old`` lacks, with what it is and why it was added."""
    items: list[DiffItem] = []
    for name, src in new.sources.items():
        before = old.sources.get(name)
        if before is None:
            files = ", ".join(src.files[:5]) or "a topic"
            items.append(
                DiffItem(
                    kind="source",
                    target=name,
                    detail={
                        "format": src.format,
                        "files": list(src.files),
                        "records": src.records,
                        "parent": src.parent,
                    },
                    reason=f"new source: {src.records} records from {files}",
                )
            )
        known = {f.id: f for f in before.fields} if before else {}
        for f in src.fields:
            was = known.get(f.id)
            if was is None:
                items.append(
                    DiffItem(
                        kind="field",
                        target=f"{name}.{f.name}",
                        detail={"id": f.id, "path": f.path, "type": f.type},
                        reason=f"observed in {f.count} of {src.records} records (null rate {f.null_rate:.3g})",
                    )
                )
            elif was.type != f.type:
                items.append(
                    DiffItem(
                        kind="type_widened",
                        target=f"{name}.{f.name}",
                        detail={"id": f.id, "from": was.type, "to": f.type},
                        reason=f"values of type {f.type} observed where {was.type} was expected",
                    )
                )
        if src.identity_key and not (before and before.identity_key):
            items.append(
                DiffItem(
                    kind="identity_key",
                    target=name,
                    detail={"fields": list(src.identity_key), "confidence": src.key_confidence},
                    reason=f"unique and non-null over {src.records} records"
                    + (f" ({_evidence_text(src.key_evidence)})" if src.key_evidence else ""),
                )
            )
    old_fks = {fk.signature() for fk in old.foreign_keys}
    for fk in new.foreign_keys:
        if fk.signature() not in old_fks:
            items.append(
                DiffItem(
                    kind="foreign_key",
                    target=_fk_target(fk),
                    detail={
                        "from": fk.from_.model_dump(),
                        "to": fk.to.model_dump(),
                        "confidence": fk.confidence,
                    },
                    reason=f"inclusion dependency, confidence {fk.confidence:.3g}"
                    + (f" ({_evidence_text(fk.evidence)})" if fk.evidence else ""),
                )
            )
    old_edges = {(h.parent, h.child, h.path) for h in old.hierarchy}
    for h in new.hierarchy:
        if (h.parent, h.child, h.path) not in old_edges:
            items.append(
                DiffItem(
                    kind="hierarchy",
                    target=f"{h.parent}>{h.child}",
                    detail={"parent": h.parent, "child": h.child, "path": h.path},
                    reason=f"array {h.path} nested in {h.parent} records",
                )
            )
    old_entities = {e.name: e for e in old.entities}
    for e in new.entities:
        was_e = old_entities.get(e.name)
        if was_e is None:
            items.append(
                DiffItem(
                    kind="entity",
                    target=e.name,
                    detail={
                        "source": e.source,
                        "key": list(e.key),
                        "attributes": [a.name for a in e.attributes],
                        "descriptive": e.descriptive,
                    },
                    reason=f"entity type for source {e.source}",
                )
            )
            continue
        known_attrs = {a.field_id for a in was_e.attributes}
        for a in e.attributes:
            if a.field_id not in known_attrs:
                items.append(
                    DiffItem(
                        kind="attribute",
                        target=f"{e.name}.{a.name}",
                        detail={"field_id": a.field_id, "type": a.type},
                        reason=f"new field of source {e.source}",
                    )
                )
        if e.key and not was_e.key:
            items.append(
                DiffItem(
                    kind="identity_key",
                    target=e.name,
                    detail={"key": list(e.key)},
                    reason="source key proven",
                )
            )
        if e.descriptive and not was_e.descriptive:
            items.append(
                DiffItem(
                    kind="entity",
                    target=e.name,
                    detail={"descriptive": True},
                    reason="long free-text attributes observed; now vectorised",
                )
            )
    old_rels = {rel_signature(r) for r in old.relationships}
    for r in new.relationships:
        if rel_signature(r) not in old_rels:
            items.append(
                DiffItem(
                    kind="relationship",
                    target=f"{r.from_entity}-[{r.name}]->{r.to_entity}",
                    detail={
                        "kind": r.kind,
                        "from_fields": list(r.from_fields),
                        "to_fields": list(r.to_fields),
                    },
                    reason=("from nesting" if r.kind == "nesting" else "from a foreign key")
                    + f", confidence {r.confidence:.3g}",
                )
            )
    return items


def check_monotonic(old: Contract, new: Contract) -> list[str]:
    """Problems that would make ``new`` not a monotonic extension of ``old`` (empty list: it is one)."""
    problems = []
    for name, src in old.sources.items():
        after = new.sources.get(name)
        if after is None:
            problems.append(f"source {name} removed")
            continue
        if src.identity_key and list(after.identity_key) != list(src.identity_key):
            problems.append(f"identity key of {name} changed")
        fields = {f.id: f for f in after.fields}
        for f in src.fields:
            g = fields.get(f.id)
            if g is None:
                problems.append(f"field {name}.{f.name} removed")
            elif widen(f.type, g.type) != g.type:
                problems.append(f"field {name}.{f.name} narrowed {f.type} -> {g.type}")
    if not {fk.signature() for fk in old.foreign_keys} <= {fk.signature() for fk in new.foreign_keys}:
        problems.append("foreign key removed")
    if not {(h.parent, h.child, h.path) for h in old.hierarchy} <= {
        (h.parent, h.child, h.path) for h in new.hierarchy
    }:
        problems.append("hierarchy edge removed")
    new_entities = {e.name: e for e in new.entities}
    for e in old.entities:
        after_e = new_entities.get(e.name)
        if after_e is None:
            problems.append(f"entity {e.name} removed")
            continue
        attrs = {a.field_id: a for a in after_e.attributes}
        for a in e.attributes:
            b = attrs.get(a.field_id)
            if b is None:
                problems.append(f"attribute {e.name}.{a.name} removed")
            elif widen(a.type, b.type) != b.type:
                problems.append(f"attribute {e.name}.{a.name} narrowed")
        if e.key and list(after_e.key) != list(e.key):
            problems.append(f"key of entity {e.name} changed")
    new_rels = {(r.name, *rel_signature(r)) for r in new.relationships}
    for r in old.relationships:
        if (r.name, *rel_signature(r)) not in new_rels:
            problems.append(f"relationship {r.from_entity}-[{r.name}]->{r.to_entity} removed or renamed")
    if new.version < old.version:
        problems.append("version went down")
    return problems


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
