"""Closed vocabulary of the contract: physical and semantic types, formats, diff kinds, and type widening.

Everything here is pure data; nothing imports from streams/ or agents/.
"""

from __future__ import annotations

from typing import Literal, get_args

PhysicalType = Literal["null", "bool", "int", "float", "decimal", "date", "datetime", "string", "text", "json"]
"""Physical type of a field. ``null`` means every observed value was null; ``json`` holds lists/objects kept whole."""

SemanticType = Literal[
    "identifier",
    "name",
    "email",
    "url",
    "phone",
    "money",
    "percent",
    "year",
    "category",
    "free_text",
    "measure",
    "date",
    "boolean",
    "other",
]

SourceFormat = Literal["csv", "tsv", "json", "jsonl", "excel", "parquet", "text", "markdown", "pdf", "topic"]

DiffKind = Literal[
    "source",
    "field",
    "type_widened",
    "identity_key",
    "foreign_key",
    "hierarchy",
    "entity",
    "attribute",
    "relationship",
]
DIFF_KINDS: tuple[str, ...] = get_args(DiffKind)

RelationshipKind = Literal["foreign_key", "nesting"]

# Widening lattice. A field's type only ever moves up: a merge of two types is their least upper bound.
# null < bool < int < decimal/float < string < text ; date < datetime < string ; json stays json unless mixed.
_RANK: dict[str, int] = {
    "null": 0,
    "bool": 1,
    "int": 2,
    "decimal": 3,
    "float": 4,
    "date": 2,
    "datetime": 3,
    "string": 10,
    "text": 11,
    "json": 12,
}
_NUMERIC = {"bool", "int", "decimal", "float"}
_TEMPORAL = {"date", "datetime"}


def widen(a: PhysicalType, b: PhysicalType) -> PhysicalType:
    """Least upper bound of two physical types (commutative, associative, idempotent)."""
    if a == b:
        return a
    if a == "null":
        return b
    if b == "null":
        return a
    if a in _NUMERIC and b in _NUMERIC:
        return a if _RANK[a] >= _RANK[b] else b
    if a in _TEMPORAL and b in _TEMPORAL:
        return "datetime"
    if "json" in (a, b):
        return "json"
    if "text" in (a, b):
        return "text"
    return "string"
