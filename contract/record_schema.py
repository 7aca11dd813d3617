"""Per-source JSON Schemas (draft 2020-12) of records, derived from a contract version: the executable half of a
contract's field catalog. Pure: the same contract gives the same schemas.

A record of source S is a JSON object (the ``payload`` of a record envelope); its keys are field names. The schema
lists every field of S in the contract with the values its type admits, and allows fields the contract does not
know yet (contracts grow: a new field makes a new version, not an invalid record). Nothing is required: a record
may leave any field out (a missing field is a null).

The values a field admits are those that do not widen its type (``contract.typing.widen``), as the profiler reads
values (``contract.semantic.physical_of``): an ``int`` field takes integers, booleans and integers written as text
(``"17"``, not ``"007"``, which is a code); ``float`` takes any number; ``date`` takes ``YYYY-MM-DD`` text;
``string`` and ``text`` take any scalar (a number is a string's wider case) but not an object or array; ``json``
takes anything. Two relaxations, for producers that write JSON: ``decimal`` also takes JSON numbers (JSON has no
decimal type), and a string field takes long text (``string`` and ``text`` differ only by length). A field that
was only ever null has no known type and takes anything. Every null is allowed: a null never widens a type.

So the records a contract version was inferred from validate against its schemas, and a record that would make
the contract widen a type does not: ``esc push`` and the worker's intake reject such a pushed record to the DLQ
with the reason instead of changing the contract under its readers.
"""

from __future__ import annotations

from typing import Any

from esc.contract.model import Contract, FieldSpec, SourceSpec
from esc.contract.sketches import DEC_RE, INT_RE
from esc.contract.typing import PhysicalType, widen

DIALECT = "https://json-schema.org/draft/2020-12/schema"
KINDS: tuple[PhysicalType, ...] = ("null", "bool", "int", "decimal", "float", "date", "datetime", "string", "text",
                                   "json")  # fmt: skip

_BOOL = r"^(?:[Tt][Rr][Uu][Ee]|[Ff][Aa][Ll][Ss][Ee]|[Yy][Ee][Ss]|[Nn][Oo]|[TtFfYyNn])$"
_INT = rf"^{INT_RE.pattern}$"
_DEC = rf"^{DEC_RE.pattern}$"
# contract.semantic: a float written as text is shorter than 40 characters, has a '.', 'e' or 'E', and does not
# start with '0' or '-0' (those are codes, or decimals matched above)
_FLOAT = r"^(?=.{1,39}$)(?=.*[.eE])(?!-?0)[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?$"
_DATE = r"^\d{4}-\d{2}-\d{2}$"
_DATETIME = r"^(?=.{1,39}$)\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?$"

_JSON_TYPES: dict[str, list[str]] = {"null": ["null"], "bool": ["boolean"], "int": ["integer"], "float": ["number"]}
_PATTERNS: dict[str, str] = {"bool": _BOOL, "int": _INT, "decimal": _DEC, "float": _FLOAT, "date": _DATE,
                             "datetime": _DATETIME}  # fmt: skip
_SCALARS = ["boolean", "null", "number", "string"]


def admitted(t: PhysicalType) -> list[PhysicalType]:
    """The kinds of value a field of type ``t`` admits (see the module doc for the two relaxations)."""
    if t == "null":
        return list(KINDS)
    out = [k for k in KINDS if widen(t, k) == t]
    if t == "decimal":
        out.append("float")
    if t == "string":
        out.append("text")
    return out


def value_schema(t: PhysicalType) -> dict[str, Any]:
    """The JSON Schema of one field's values."""
    kinds = admitted(t)
    if "json" in kinds:
        return {}
    if "string" in kinds:
        return {"type": list(_SCALARS)}
    types = sorted({jt for k in kinds for jt in _JSON_TYPES.get(k, [])})
    alternatives: list[dict[str, Any]] = [{"type": types[0] if len(types) == 1 else types}] if types else []
    alternatives += [{"type": "string", "pattern": _PATTERNS[k]} for k in kinds if k in _PATTERNS]
    return alternatives[0] if len(alternatives) == 1 else {"anyOf": alternatives}


def _property(f: FieldSpec) -> dict[str, Any]:
    return {**value_schema(f.type), "description": f"{f.type} field {f.id} ({f.path})"}


def schema_id(contract: Contract, source: str) -> str:
    return f"urn:esc:{contract.contract_id}:v{contract.version}:{source}"


def record_schema(contract: Contract, source: str) -> dict[str, Any]:
    """The JSON Schema of one source's records under this contract version (KeyError for an unknown source)."""
    spec: SourceSpec = contract.sources[source]
    return {
        "$schema": DIALECT,
        "$id": schema_id(contract, source),
        "title": f"{source} record (contract {contract.contract_id} v{contract.version})",
        "type": "object",
        "properties": {f.name: _property(f) for f in spec.fields},
        "additionalProperties": True,
    }


def record_schemas(contract: Contract) -> dict[str, dict[str, Any]]:
    """Every source's record schema, by source name."""
    return {name: record_schema(contract, name) for name in sorted(contract.sources)}
