from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from esc.contract.evolve import evolve
from esc.contract.jsonschema import contract_json_schema, render
from esc.contract.serde import dump_json, dump_yaml
from tests.fakes.contracts import chinook_like

SCHEMA_FILE = Path(__file__).resolve().parents[3] / "contract" / "contract.schema.json"


def validator() -> Any:
    schema = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def produced() -> dict[str, Any]:
    c, _ = evolve(None, chinook_like())
    data: dict[str, Any] = yaml.safe_load(dump_yaml(c))
    return data


def test_published_schema_file_is_up_to_date() -> None:
    assert SCHEMA_FILE.read_text(encoding="utf-8") == render(), (
        "regenerate: python -m esc.contract.jsonschema > contract/contract.schema.json"
    )


def test_produced_contract_validates_in_yaml_and_json() -> None:
    v = validator()
    c, _ = evolve(None, chinook_like())
    for data in (yaml.safe_load(dump_yaml(c)), json.loads(dump_json(c))):
        errors = sorted(str(e.message) for e in v.iter_errors(data))
        assert errors == []


def _broken(mutate: Any) -> dict[str, Any]:
    data = copy.deepcopy(produced())
    mutate(data)
    return data


@pytest.mark.parametrize(
    "mutate",
    [
        lambda d: d["sources"]["Artist"].pop("identity_key"),
        lambda d: d["sources"]["Artist"]["fields"][0].pop("id"),
        lambda d: d["sources"]["Artist"]["fields"][0].update(type="varchar"),
        lambda d: d["sources"]["Artist"]["fields"][0].update(null_rate=1.5),
        lambda d: d["foreign_keys"][0].update({"from_": d["foreign_keys"][0].pop("from")}),
        lambda d: d["foreign_keys"][0].update(confidence=2),
        lambda d: d.pop("version"),
        lambda d: d["entities"][0].update(surprise=True),
        lambda d: d.update(format_version=99),
    ],
)
def test_schema_rejects_broken_contracts(mutate: Any) -> None:
    assert list(validator().iter_errors(_broken(mutate))), "a broken contract must not validate"


def test_schema_is_draft_2020_12_with_an_id() -> None:
    schema = contract_json_schema()
    assert schema["$schema"].endswith("2020-12/schema")
    assert "from" in schema["$defs"]["ForeignKey"]["properties"]
