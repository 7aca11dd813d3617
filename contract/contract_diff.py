"""What a new contract version adds (:func:`diff_items`: every structural element the old one lacks, with why),
and whether a contract is a monotonic extension of another (:func:`check_monotonic`). Split from
``contract.evolve``, which re-exports both."""

from __future__ import annotations

from typing import Any

from esc.contract.entities import rel_signature
from esc.contract.model import Contract, DiffItem, ForeignKey
from esc.contract.typing import PhysicalType, widen


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


def _members_kept(
    what: str, before: list[tuple[str, str, PhysicalType]], after: list[tuple[str, str, PhysicalType]]
) -> list[str]:
    """Problems when a member (id, name, type) of ``before`` is missing from ``after`` or its type narrowed."""
    types = {mid: typ for mid, _, typ in after}
    problems = []
    for mid, mname, typ in before:
        now = types.get(mid)
        if now is None:
            problems.append(f"{what}.{mname} removed")
        elif widen(typ, now) != now:
            problems.append(f"{what}.{mname} narrowed {typ} -> {now}")
    return problems


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
        problems += _members_kept(
            f"field {name}",
            [(f.id, f.name, f.type) for f in src.fields],
            [(f.id, f.name, f.type) for f in after.fields],
        )
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
        problems += _members_kept(
            f"attribute {e.name}",
            [(a.field_id, a.name, a.type) for a in e.attributes],
            [(a.field_id, a.name, a.type) for a in after_e.attributes],
        )
        if e.key and list(after_e.key) != list(e.key):
            problems.append(f"key of entity {e.name} changed")
    new_rels = {(r.name, *rel_signature(r)) for r in new.relationships}
    for r in old.relationships:
        if (r.name, *rel_signature(r)) not in new_rels:
            problems.append(f"relationship {r.from_entity}-[{r.name}]->{r.to_entity} removed or renamed")
    if new.version < old.version:
        problems.append("version went down")
    return problems
