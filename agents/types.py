"""Models shared by agents and store adapters: what an extractor asks a store to write."""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel, Field

M = TypeVar("M", bound=BaseModel)
_FIELDS: dict[type[BaseModel], int] = {}
_set = object.__setattr__


def build(cls: type[M], **values: Any) -> M:
    """``cls.model_construct(**values)`` (no validation: the planner's values are already typed) at a third of
    its cost when every field is given, which the planner's hot path does for millions of rows. With fields
    missing it falls back to ``model_construct``, which fills in the defaults."""
    n = _FIELDS.get(cls)
    if n is None:
        n = _FIELDS[cls] = len(cls.model_fields)  # (pydantic's class property costs ~3 us a read)
    if len(values) != n:
        return cls.model_construct(**values)
    obj = cls.__new__(cls)
    _set(obj, "__dict__", values)
    _set(obj, "__pydantic_fields_set__", set(values))
    _set(obj, "__pydantic_extra__", None)
    _set(obj, "__pydantic_private__", None)
    return obj


class SourceRecordRef(BaseModel):
    """Provenance: the record an entity or text object came from."""

    source: str
    record_id: str
    location: str = ""
    file: str | None = None
    file_hash: str | None = None

    @property
    def sid(self) -> str:
        return f"{self.source}\x1f{self.record_id}"


class EntityWrite(BaseModel):
    label: str
    key: dict[str, Any]  # identity key properties (names as in the contract)
    properties: dict[str, Any] = Field(default_factory=dict)
    provenance: SourceRecordRef
    contract_version: int = 0


class EdgeWrite(BaseModel):
    type: str
    from_label: str
    from_key: dict[str, Any]
    to_label: str
    to_key: dict[str, Any]
    contract_version: int = 0


class TextObject(BaseModel):
    """One chunk of text for the vector index, pointing back to its entity and source record."""

    object_id: str  # deterministic (uuid5 of source/record/chunk)
    text: str
    provenance: SourceRecordRef
    chunk_index: int = 0
    entity_label: str | None = None
    entity_key: str | None = None  # JSON of the key dict
    contract_version: int = 0
    vector: list[float] | None = None
    context: str = ""  # headings / table header / field name embedded in front of the text (agents/chunking.py)
    field: str = ""  # the text field the chunk comes from
    start: int = 0  # character offset of the chunk in that field's value
