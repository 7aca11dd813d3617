"""Closed-world validation of schema proposals (from an LLM, or a person) against the field catalog.

A proposal may only reference field ids that are in the catalog. Every reference is checked:

* ``valid``: the id is in the catalog (and belongs to the source it is used for);
* ``repaired``: not an id, but an exact name or path of a real field of that source (``Email``,
  ``InvoiceLine[*].Quantity``, or ``Customer.Email`` qualified by the source), replaced by that field's id;
* ``dropped``: anything else (a hallucinated id or name, or a field of another source), reported and removed.

``FieldValidity`` = valid references / all references (ESC paper Eq. 1). :class:`ValidationReport` gives it for
the proposal as received (``field_validity_received``) and for what was applied (``field_validity``), which is
1.0 by construction: nothing that reaches the contract references a field outside the catalog.

Applying a proposal is **add-only**: new entity types, new attributes on existing types, new relationships.
Existing keys, attributes, names and relationships are never changed or removed; a proposal that tries is
reported as ignored. Identity keys and foreign keys stay statistical (``esc.contract.inference``); an anchor the
proposal gives becomes the key of a *new* entity type only.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, ValidationError, field_validator

from esc.contract.entities import merge_entities, merge_relationships, pascal, rel_signature, upper_snake
from esc.contract.errors import ProposalFormatError
from esc.contract.model import Attribute, Contract, EntityType, Relationship

RefStatus = Literal["valid", "repaired", "dropped"]


class _Lenient(BaseModel):
    model_config = ConfigDict(extra="ignore", populate_by_name=True)


class AttributeProposal(_Lenient):
    field_id: str = Field(default="", validation_alias=AliasChoices("field_id", "id", "field", "field_ref"))
    name: str | None = None
    type_guess: str | None = None

    @field_validator("field_id", mode="before")
    @classmethod
    def _str(cls, v: Any) -> str:
        return "" if v is None else str(v)


class EntityProposal(_Lenient):
    name: str
    source: str | None = None
    description: str = ""
    anchor: list[str] = Field(
        default_factory=list, validation_alias=AliasChoices("anchor", "key", "identity_key")
    )  # field ids of the natural key
    attributes: list[AttributeProposal] = Field(default_factory=list)
    confidence: float = 0.5

    @field_validator("anchor", mode="before")
    @classmethod
    def _anchor(cls, v: Any) -> list[str]:
        if v is None:
            return []
        return [str(x) for x in v] if isinstance(v, list) else [str(v)]

    @field_validator("attributes", mode="before")
    @classmethod
    def _attributes(cls, v: Any) -> list[Any]:
        if not isinstance(v, list):
            return []
        return [{"field_id": a} if isinstance(a, str) else a for a in v]


class RelationshipProposal(_Lenient):
    name: str = Field(validation_alias=AliasChoices("name", "type", "relationship"))
    from_entity: str = Field(validation_alias=AliasChoices("from_entity", "from", "source_entity", "source"))
    to_entity: str = Field(validation_alias=AliasChoices("to_entity", "to", "target_entity", "target"))
    from_fields: list[str] = Field(
        default_factory=list, validation_alias=AliasChoices("from_fields", "source_fields")
    )
    to_fields: list[str] = Field(
        default_factory=list, validation_alias=AliasChoices("to_fields", "target_fields")
    )
    description: str = ""
    confidence: float = 0.5

    @field_validator("from_fields", "to_fields", mode="before")
    @classmethod
    def _fields(cls, v: Any) -> list[str]:
        if v is None:
            return []
        return [str(x) for x in v] if isinstance(v, list) else [str(v)]


class SchemaProposal(_Lenient):
    entities: list[EntityProposal] = Field(default_factory=list)
    relationships: list[RelationshipProposal] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)


class Reference(BaseModel):
    where: str  # e.g. "entity Customer attribute", "relationship PLACED from_fields"
    given: str
    status: RefStatus
    field_id: str | None = None  # the catalog id it resolved to
    reason: str = ""


class ValidationReport(BaseModel):
    references: list[Reference] = Field(default_factory=list)
    added_entities: list[str] = Field(default_factory=list)
    added_attributes: list[str] = Field(default_factory=list)  # "Entity.attr"
    added_relationships: list[str] = Field(default_factory=list)  # "From-[NAME]->To"
    rejected: list[str] = Field(default_factory=list)  # whole items, with the reason
    ignored: list[str] = Field(default_factory=list)  # proposals to change existing elements (add-only)

    def count(self, status: RefStatus) -> int:
        return sum(1 for r in self.references if r.status == status)

    @property
    def field_validity_received(self) -> float:
        """Valid references / all references, as the proposal arrived (1.0 when it referenced nothing)."""
        total = len(self.references)
        return 1.0 if total == 0 else self.count("valid") / total

    @property
    def field_validity(self) -> float:
        """The same ratio over the references that were applied (after repair and drop)."""
        applied = [r for r in self.references if r.status != "dropped"]
        return 1.0 if not applied else sum(1 for r in applied if r.field_id) / len(applied)

    def summary(self) -> dict[str, Any]:
        return {
            "field_validity_received": round(self.field_validity_received, 4),
            "field_validity": round(self.field_validity, 4),
            "references": len(self.references),
            "repaired": [
                f"{r.where}: {r.given} -> {r.field_id}" for r in self.references if r.status == "repaired"
            ],
            "dropped": [
                f"{r.where}: {r.given} ({r.reason})" for r in self.references if r.status == "dropped"
            ],
            "added_entities": list(self.added_entities),
            "added_attributes": list(self.added_attributes),
            "added_relationships": list(self.added_relationships),
            "rejected": list(self.rejected),
            "ignored": list(self.ignored),
        }


def _items(data: dict[str, Any], key: str, problems: list[str]) -> list[Any]:
    items = data.get(key, [])
    if isinstance(items, list):
        return items
    problems.append(f"{key}: expected a list, got {type(items).__name__}")
    return []


def _first_error(exc: ValidationError) -> str:
    first = exc.errors()[0]
    return f"{'.'.join(str(p) for p in first['loc'])}: {first['msg']}"


def parse_proposal(data: Any) -> tuple[SchemaProposal, list[str]]:
    """Read a proposal dict leniently: unknown keys are ignored, and an item of the wrong shape is skipped and
    reported (the rest of the proposal still counts). Only a non-object raises :class:`ProposalFormatError`."""
    if not isinstance(data, dict):
        raise ProposalFormatError(f"a proposal must be a JSON object, got {type(data).__name__}")
    problems: list[str] = []
    out = SchemaProposal()
    for i, item in enumerate(_items(data, "entities", problems)):
        try:
            out.entities.append(EntityProposal.model_validate(item))
        except ValidationError as exc:
            problems.append(f"entities[{i}]: {_first_error(exc)}")
    for i, item in enumerate(_items(data, "relationships", problems)):
        try:
            out.relationships.append(RelationshipProposal.model_validate(item))
        except ValidationError as exc:
            problems.append(f"relationships[{i}]: {_first_error(exc)}")
    notes = data.get("notes", [])
    out.notes = [str(n) for n in notes] if isinstance(notes, list) else [str(notes)]
    return out, problems


# ------------------------------------------------------------------------------------------------- resolving

_LABEL = re.compile(r"[^A-Za-z0-9_]")


def _label(name: str) -> str:
    return pascal(name) or _LABEL.sub("", name)


class _Catalog:
    def __init__(self, contract: Contract) -> None:
        self.source_of: dict[str, str] = {}
        self.by_source: dict[str, dict[str, str]] = {}  # source -> {name|path|"source.name": id}
        for sname, src in contract.sources.items():
            names: dict[str, str] = {}
            for f in src.fields:
                self.source_of[f.id] = sname
                for alias in (f.name, f.path, f"{sname}.{f.name}", f"{sname}.{f.path}"):
                    names.setdefault(alias, f.id)
            self.by_source[sname] = names

    def resolve(self, given: str, source: str | None, where: str) -> Reference:
        if given in self.source_of:
            if source is None or self.source_of[given] == source:
                return Reference(where=where, given=given, status="valid", field_id=given)
            return Reference(
                where=where,
                given=given,
                status="dropped",
                reason=f"field of source {self.source_of[given]}, not of {source}",
            )
        candidates = [source] if source is not None else list(self.by_source)
        hits = {
            self.by_source[s][given] for s in candidates if s in self.by_source and given in self.by_source[s]
        }
        if len(hits) == 1:
            fid = hits.pop()
            return Reference(
                where=where,
                given=given,
                status="repaired",
                field_id=fid,
                reason="exact field name/path match",
            )
        reason = "ambiguous field name" if hits else "not in the field catalog"
        return Reference(where=where, given=given, status="dropped", reason=reason)


def _entity_source(proposal: EntityProposal, contract: Contract, catalog: _Catalog) -> str | None:
    if proposal.source in contract.sources:
        return proposal.source
    existing = contract.entity(_label(proposal.name))
    if existing is not None:
        return existing.source
    votes: dict[str, int] = {}
    for ref in [a.field_id for a in proposal.attributes] + proposal.anchor:
        src = catalog.source_of.get(ref)
        if src is None and "." in ref:
            head = ref.rsplit(".", 1)[0]
            src = head if head in contract.sources else None
        if src is not None:
            votes[src] = votes.get(src, 0) + 1
    if not votes:
        return None
    return sorted(votes.items(), key=lambda kv: (-kv[1], kv[0]))[0][0]


def apply_proposal(contract: Contract, proposal: SchemaProposal) -> tuple[Contract, ValidationReport]:
    """Validate ``proposal`` against ``contract``'s catalog and add what survives. Returns a new contract."""
    catalog = _Catalog(contract)
    report = ValidationReport()
    field_types = {f.id: f for src in contract.sources.values() for f in src.fields}
    new_entities: list[EntityType] = []
    known = {e.name: e for e in contract.entities}

    for p in proposal.entities:
        label = _label(p.name)
        if not label:
            report.rejected.append(f"entity {p.name!r}: not a usable label")
            continue
        source = _entity_source(p, contract, catalog)
        if source is None:
            for a in p.attributes:
                report.references.append(
                    Reference(
                        where=f"entity {label} attribute",
                        given=a.field_id,
                        status="dropped",
                        reason="no source",
                    )
                )
            report.rejected.append(f"entity {label}: references no field of any source")
            continue
        existing = known.get(label)
        if existing is not None and existing.source != source:
            report.rejected.append(f"entity {label}: label already used for source {existing.source}")
            continue
        attributes: list[Attribute] = []
        seen: set[str] = set()
        for a in p.attributes:
            ref = catalog.resolve(a.field_id, source, f"entity {label} attribute")
            report.references.append(ref)
            if ref.field_id is None or ref.status == "dropped" or ref.field_id in seen:
                continue
            seen.add(ref.field_id)
            spec = field_types[ref.field_id]
            attributes.append(
                Attribute(name=spec.name, field_id=spec.id, type=spec.type, semantic=spec.semantic)
            )
        key: list[str] = []
        for given in p.anchor:
            ref = catalog.resolve(given, source, f"entity {label} anchor")
            report.references.append(ref)
            if ref.field_id is not None and ref.status != "dropped":
                key.append(ref.field_id)
        if existing is not None:
            if key and list(key) != list(existing.key):
                report.ignored.append(f"entity {label}: key change ignored (add-only)")
            have = {a.field_id for a in existing.attributes}
            report.added_attributes.extend(f"{label}.{a.name}" for a in attributes if a.field_id not in have)
            new_entities.append(existing.model_copy(update={"attributes": attributes}))
            continue
        if not attributes:
            report.rejected.append(f"entity {label}: no valid attribute left after validation")
            continue
        for fid in key:
            if fid not in seen:
                spec = field_types[fid]
                attributes.append(
                    Attribute(name=spec.name, field_id=fid, type=spec.type, semantic=spec.semantic)
                )
                seen.add(fid)
        entity = EntityType(name=label, source=source, key=key, attributes=attributes)
        new_entities.append(entity)
        known[label] = entity
        report.added_entities.append(label)

    merged_entities = merge_entities(contract.entities, new_entities)
    by_name = {e.name: e for e in merged_entities}
    new_rels: list[Relationship] = []
    existing_sigs = {rel_signature(r) for r in contract.relationships}
    existing_names = {(r.name, r.from_entity, r.to_entity) for r in contract.relationships}
    for rp in proposal.relationships:
        name = upper_snake(rp.name)
        src_e, dst_e = by_name.get(_label(rp.from_entity)), by_name.get(_label(rp.to_entity))
        where = f"relationship {name or rp.name}"
        if not name or src_e is None or dst_e is None:
            for side, givens in (("from_fields", rp.from_fields), ("to_fields", rp.to_fields)):
                for given in givens:
                    report.references.append(
                        Reference(
                            where=f"{where} {side}", given=given, status="dropped", reason="unknown entity"
                        )
                    )
            missing = rp.from_entity if src_e is None else rp.to_entity
            report.rejected.append(
                f"{where}: unknown entity {missing!r}" if name else f"{where}: no usable name"
            )
            continue
        pairs: list[tuple[str, str]] = []
        for i in range(max(len(rp.from_fields), len(rp.to_fields))):
            refs: list[str | None] = []
            for side, fields, ent in (
                ("from_fields", rp.from_fields, src_e),
                ("to_fields", rp.to_fields, dst_e),
            ):
                if i < len(fields):
                    ref = catalog.resolve(fields[i], ent.source, f"{where} {side}")
                    report.references.append(ref)
                    refs.append(ref.field_id if ref.status != "dropped" else None)
                else:
                    refs.append(None)
            left, right = refs
            if left is not None and right is not None:
                pairs.append((left, right))
        if not pairs:
            report.rejected.append(f"{where}: no valid pair of link fields")
            continue
        rel = Relationship(
            name=name,
            kind="foreign_key",
            from_entity=src_e.name,
            to_entity=dst_e.name,
            from_fields=[a for a, _ in pairs],
            to_fields=[b for _, b in pairs],
            confidence=min(1.0, max(0.0, rp.confidence)),
        )
        target = f"{rel.from_entity}-[{rel.name}]->{rel.to_entity}"
        if rel_signature(rel) in existing_sigs:
            report.ignored.append(f"{target}: already in the contract")
            continue
        if (rel.name, rel.from_entity, rel.to_entity) in existing_names:
            report.ignored.append(f"{target}: name already used for another link (add-only)")
            continue
        existing_sigs.add(rel_signature(rel))
        existing_names.add((rel.name, rel.from_entity, rel.to_entity))
        new_rels.append(rel)
        report.added_relationships.append(target)

    out = contract.model_copy(deep=True)
    out.entities = merged_entities
    out.relationships = merge_relationships(contract.relationships, new_rels)
    return out, report
