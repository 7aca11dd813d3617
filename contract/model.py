"""The executable schema contract and its diff, as pydantic models.

The stored shape keeps the minimal interface of DESIGN.md §3 (``version``, ``sources.<name>.format /
identity_key / fields``, ``foreign_keys``, ``hierarchy``, ``entities``, ``relationships``); everything else is
additive. Field references in keys and foreign keys use the field *name* within its source; entities and
attributes reference stable field *ids* from the catalog.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from esc.contract.reports import ExampleReport, SourceDrift
from esc.contract.typing import PhysicalType, RelationshipKind, SemanticType, SourceFormat

FORMAT_VERSION = 1
"""Version of the stored file format (not of the contract's content)."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class FieldSpec(_Model):
    """One catalog entry: an observable field of one source."""

    id: str
    name: str  # name within the source: column, or dotted path for nested objects
    path: str  # full path from the file, e.g. "InvoiceLine[*].Quantity" for a nested child
    type: PhysicalType
    semantic: SemanticType | None = None
    count: int = 0  # records observed
    null_rate: float = 0.0
    distinct: int = 0  # estimate
    uniqueness: float = 0.0  # distinct non-null / non-null count (estimate)
    min: Any = None
    max: Any = None
    min_length: int | None = None
    max_length: int | None = None
    top_values: list[tuple[Any, int]] = Field(default_factory=list)
    examples: list[Any] = Field(default_factory=list)


class SourceSpec(_Model):
    format: SourceFormat
    files: list[str] = Field(default_factory=list)  # files (relative) that feed this source
    records: int = 0
    parent: str | None = None  # for nested child sources
    identity_key: list[str] = Field(default_factory=list)  # field names; empty if none was proven
    key_confidence: float | None = None
    key_evidence: dict[str, Any] = Field(default_factory=dict)
    fields: list[FieldSpec] = Field(default_factory=list)

    def field(self, name: str) -> FieldSpec | None:
        for f in self.fields:
            if f.name == name:
                return f
        return None


class Endpoint(_Model):
    source: str
    fields: list[str]


class ForeignKey(_Model):
    from_: Endpoint = Field(alias="from")
    to: Endpoint
    confidence: float
    evidence: dict[str, Any] = Field(default_factory=dict)

    def signature(self) -> tuple[str, tuple[str, ...], str, tuple[str, ...]]:
        return (self.from_.source, tuple(self.from_.fields), self.to.source, tuple(self.to.fields))


class HierarchyEdge(_Model):
    parent: str
    child: str
    path: str  # JSON path of the embedded array, e.g. "$[*].InvoiceLine"
    parent_fields: list[str] = Field(default_factory=list)
    child_fields: list[str] = Field(default_factory=list)


Granularity = Literal["year", "month", "day", "hour", "minute", "second"]


class TimeMark(_Model):
    """A time field (contract/time_marks.py): the finest unit its values use, how they are written when they are
    text, and what the time says about the record (``updated``: when the record was last changed, which decides
    the current value across linked records; ``birth``)."""

    granularity: Granularity
    format: str | None = None  # text values only: "YYYY-MM", "YYYY", "MM/DD/YYYY", "DD.MM.YYYY", ...; None = ISO
    role: Literal["updated", "birth"] | None = None


class UnitMark(_Model):
    """The unit or scale of a measure (contract/units.py) and the rule that told it: multiply a value by
    ``scale`` to get ``canonical`` in its unit (the original value stays on the record). With ``column``, each
    record's unit is that field's value and ``scales`` maps those values to factors."""

    canonical: str  # the attribute the values are normalized to (shared across sources)
    unit: str | None = None  # "cents", "thousands", "millions", ...
    scale: float = 1.0
    basis: Literal["header", "column", "range"] = "header"
    rule: str = ""  # in words: which header word, unit column or value ranges told it
    column: str | None = None
    scales: dict[str, float] = Field(default_factory=dict)


class Attribute(_Model):
    name: str  # property name in the graph (the field name, escaped where written)
    field_id: str
    type: PhysicalType
    semantic: SemanticType | None = None
    # Annotations derived from the profiles (contract/annotations.py): statistics, not part of the version identity.
    time: TimeMark | None = None
    unit: UnitMark | None = None


class EntityType(_Model):
    name: str  # label, e.g. "Customer", "InvoiceLine"
    source: str
    key: list[str] = Field(default_factory=list)  # field ids of the identity key
    attributes: list[Attribute] = Field(default_factory=list)
    descriptive: bool = False  # has long free-text attributes worth vectorising


class Relationship(_Model):
    name: str  # relationship type, e.g. "HAS_INVOICE" / "SUPPORT_REP"
    kind: RelationshipKind
    from_entity: str
    to_entity: str
    from_fields: list[str]  # field ids on the referencing side
    to_fields: list[str]  # field ids on the referenced side
    confidence: float = 1.0


_FID_INDEX: dict[int, dict[str, tuple[str, int]]] = {}
"""Field id -> (source, position) per contract object (by ``id``; never trusted: every hit is re-checked)."""


class Contract(_Model):
    format_version: int = FORMAT_VERSION
    contract_id: str = "esc"
    version: int = 0
    content_hash: str = ""
    sources: dict[str, SourceSpec] = Field(default_factory=dict)
    foreign_keys: list[ForeignKey] = Field(default_factory=list)
    hierarchy: list[HierarchyEdge] = Field(default_factory=list)
    entities: list[EntityType] = Field(default_factory=list)
    relationships: list[Relationship] = Field(default_factory=list)
    # Statistics beside the structure (contract/reports.py): never part of the version identity, optional.
    drift: dict[str, SourceDrift] = Field(default_factory=dict)  # data drift per source, by the contract agent
    examples: ExampleReport | None = None  # results of the latest version's example queries against a store

    def entity(self, name: str) -> EntityType | None:
        return next((e for e in self.entities if e.name == name), None)

    def entity_for_source(self, source: str) -> EntityType | None:
        return next((e for e in self.entities if e.source == source), None)

    def field_by_id(self, fid: str) -> tuple[str, FieldSpec] | None:
        """(source, field) of a field id. Indexed (asked once per attribute, it was quadratic on a wide source);
        every hit is checked against the fields as they are now, and a miss rebuilds the index once."""
        for rebuilt in (False, True):
            at = _FID_INDEX.get(id(self), {}).get(fid)
            if at is not None:
                src = self.sources.get(at[0])
                if src is not None and at[1] < len(src.fields) and src.fields[at[1]].id == fid:
                    return at[0], src.fields[at[1]]
            if rebuilt:
                return None
            if len(_FID_INDEX) >= 16:
                _FID_INDEX.clear()
            _FID_INDEX[id(self)] = {
                f.id: (s, i) for s, spec in self.sources.items() for i, f in enumerate(spec.fields)
            }
        return None


class DiffItem(_Model):
    kind: str  # one of contract.typing.DIFF_KINDS
    target: str  # e.g. "Customer", "Customer.Email", "Track.AlbumId->Album.AlbumId"
    detail: dict[str, Any] = Field(default_factory=dict)
    reason: str = ""


class ContractDiff(_Model):
    contract_id: str = "esc"
    from_version: int
    to_version: int
    added: list[DiffItem] = Field(default_factory=list)
    reason: str = ""  # which records / profiles triggered it

    def by_kind(self) -> dict[str, list[DiffItem]]:
        out: dict[str, list[DiffItem]] = {}
        for item in self.added:
            out.setdefault(item.kind, []).append(item)
        return out
