"""The published JSON Schema of the contract file (``contract/contract.schema.json``).

Generated from the pydantic models, then tightened to what :mod:`contract.serde` always writes (the minimal shape
of DESIGN.md §3 is *required*, ratios are bounded). Regenerate the checked-in file after a model change with::

    python -m esc.contract.jsonschema > contract/contract.schema.json

A unit test fails when the file is out of date, and validates a produced contract against it.
"""

from __future__ import annotations

import json
from typing import Any

from esc.contract.model import FORMAT_VERSION, Contract

SCHEMA_ID = f"https://esc.local/schemas/contract-v{FORMAT_VERSION}.schema.json"

_REQUIRED = {
    None: ["format_version", "version", "sources", "foreign_keys", "hierarchy", "entities", "relationships"],
    "SourceSpec": ["format", "identity_key", "fields"],
    "FieldSpec": ["id", "name", "path", "type", "null_rate", "distinct"],
}
_BOUNDS: dict[tuple[str | None, str], dict[str, Any]] = {
    (None, "version"): {"minimum": 0},
    (None, "format_version"): {"minimum": 1, "maximum": FORMAT_VERSION},
    ("FieldSpec", "null_rate"): {"minimum": 0, "maximum": 1},
    ("FieldSpec", "uniqueness"): {"minimum": 0, "maximum": 1},
    ("FieldSpec", "distinct"): {"minimum": 0},
    ("FieldSpec", "count"): {"minimum": 0},
    ("ForeignKey", "confidence"): {"minimum": 0, "maximum": 1},
    ("Relationship", "confidence"): {"minimum": 0, "maximum": 1},
}


def contract_json_schema() -> dict[str, Any]:
    """JSON Schema (draft 2020-12) of a contract file as :func:`contract.serde.dump_yaml` / ``dump_json`` write it."""
    schema = Contract.model_json_schema(by_alias=True, mode="validation")
    defs: dict[str, Any] = schema.get("$defs", {})

    def node(name: str | None) -> dict[str, Any]:
        return schema if name is None else defs[name]

    for name, required in _REQUIRED.items():
        target = node(name)
        target["required"] = sorted(set(target.get("required", [])) | set(required))
    for (name, prop), bounds in _BOUNDS.items():
        node(name)["properties"][prop].update(bounds)
    out = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_ID,
        **schema,
        "title": "ESC executable schema contract",
        "description": (
            "Versioned schema contract: field catalog per source, identity keys, foreign keys, source hierarchy, "
            "entity types whose attributes reference field ids, and relationships. Written by `esc discover`."
        ),
    }
    return out


def render() -> str:
    """Deterministic text of the published schema file."""
    return json.dumps(contract_json_schema(), indent=2, sort_keys=True, ensure_ascii=False) + "\n"


if __name__ == "__main__":
    print(render(), end="")
