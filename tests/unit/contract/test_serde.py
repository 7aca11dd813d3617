from __future__ import annotations

import json
import math

import pytest
import yaml

from esc.contract import serde
from esc.contract.evolve import evolve
from esc.contract.model import FORMAT_VERSION, Contract
from esc.contract.serde import ContractFormatError, dump_json, dump_yaml, load_json, load_yaml, migrate
from tests.fakes.contracts import chinook_like


def produced() -> Contract:
    c, _ = evolve(None, chinook_like())
    return c


def test_yaml_round_trip_is_byte_identical() -> None:
    c = produced()
    text = dump_yaml(c)
    again = load_yaml(text)
    assert dump_yaml(again) == text
    assert again.version == c.version and again.content_hash == c.content_hash
    assert again.sources.keys() == c.sources.keys()
    assert again.foreign_keys[0].from_.source == c.foreign_keys[0].from_.source


def test_json_round_trip_and_yaml_agree() -> None:
    c = produced()
    text = dump_json(c)
    assert dump_json(load_json(text)) == text
    assert json.loads(text) == yaml.safe_load(dump_yaml(c))
    assert load_yaml(text) == load_json(text)  # YAML reads JSON too


def test_minimal_design_shape_is_present() -> None:
    data = yaml.safe_load(dump_yaml(produced()))
    assert data["version"] == 1
    src = data["sources"]["Artist"]
    assert src["format"] == "csv" and src["identity_key"] == ["ArtistId"]
    assert {"id", "path", "type", "null_rate", "distinct"} <= set(src["fields"][0])
    fk = data["foreign_keys"][0]
    assert set(fk) >= {"from", "to", "confidence"} and "from_" not in fk
    assert fk["from"] == {"source": "Album", "fields": ["ArtistId"]}
    assert data["hierarchy"][0]["path"] == "$[*].InvoiceLine"
    assert data["entities"] and data["relationships"]


def test_unproven_key_is_an_empty_list_not_missing() -> None:
    c = produced()
    c.sources["Artist"].identity_key = []
    data = yaml.safe_load(dump_yaml(c))
    assert data["sources"]["Artist"]["identity_key"] == []
    assert "min_length" not in data["sources"]["Artist"]["fields"][0]  # unset optionals are left out


def test_order_independent_of_construction_order() -> None:
    a = produced()
    b = a.model_copy(deep=True)
    b.sources = dict(reversed(list(b.sources.items())))
    b.foreign_keys = list(reversed(b.foreign_keys))
    b.sources["Artist"].key_evidence = dict(reversed(list(b.sources["Artist"].key_evidence.items())))
    assert dump_yaml(a) == dump_yaml(b)
    assert dump_json(a) == dump_json(b)


def test_floats_are_stable_and_non_finite_values_are_safe() -> None:
    c = produced()
    f = c.sources["Artist"].fields[0]
    f.null_rate = 1 / 3
    f.min = math.nan
    f.max = math.inf
    f.examples = [0.1 + 0.2, -math.inf]
    text = dump_yaml(c)
    assert "null_rate: 0.333333" in text
    again = load_yaml(text)
    assert dump_yaml(again) == text
    assert json.loads(dump_json(c))["sources"]["Artist"]["fields"][0]["examples"] == [0.3, "-Infinity"]


def test_unicode_and_awkward_strings_survive() -> None:
    c = produced()
    c.sources["Artist"].fields[1].examples = [
        "Motörhead",
        "yes",
        "2024-01-01",
        "null",
        "a: b",
        "#x",
        "  pad  ",
    ]
    again = load_yaml(dump_yaml(c))
    assert again.sources["Artist"].fields[1].examples == c.sources["Artist"].fields[1].examples
    assert "Motörhead" in dump_yaml(c)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[1, 2", "not valid YAML"),
        ("- a\n- b\n", "mapping at the top level"),
        ("version: 1\nsources: {a: {format: nope}}\n", "invalid contract"),
        ("format_version: 99\n", "newer than this ESC"),
        ("format_version: zero\n", "positive integer"),
    ],
)
def test_bad_text_gives_a_clear_error(text: str, message: str) -> None:
    with pytest.raises(ContractFormatError, match=message):
        load_yaml(text)


def test_bad_json_gives_a_clear_error() -> None:
    with pytest.raises(ContractFormatError, match="not valid JSON"):
        load_json("{")


def test_hand_written_minimal_contract_loads() -> None:
    text = """
version: 3
sources:
  orders:
    format: json
    identity_key: [id]
    fields:
      - {id: f_1, path: id, type: int, null_rate: 0.0, distinct: 10}
foreign_keys: []
"""
    c = load_yaml(text)
    assert c.version == 3 and c.format_version == FORMAT_VERSION
    assert c.sources["orders"].fields[0].name == "id"


def test_migrate_steps_one_format_version_at_a_time(monkeypatch: pytest.MonkeyPatch) -> None:
    assert migrate({"version": 2})["format_version"] == FORMAT_VERSION
    calls: list[int] = []

    def step(n: int):  # type: ignore[no-untyped-def]
        def run(d: dict) -> dict:  # type: ignore[type-arg]
            calls.append(n)
            return {**d, f"step{n}": True}

        return run

    monkeypatch.setattr(serde, "FORMAT_VERSION", 3)
    monkeypatch.setattr(serde, "MIGRATIONS", {1: step(1), 2: step(2)})
    out = serde.migrate({"format_version": 1, "version": 5})
    assert calls == [1, 2] and out["format_version"] == 3 and out["step1"] and out["step2"]
    assert serde.migrate({"format_version": 2})["format_version"] == 3 and calls == [1, 2, 2]
    monkeypatch.setattr(serde, "MIGRATIONS", {1: step(1)})
    with pytest.raises(ContractFormatError, match="no migration from format_version 2"):
        serde.migrate({"format_version": 1})


def test_dumps_and_loads_pick_the_format_from_the_name() -> None:
    c = produced()
    assert serde.dumps(c, "x.json").startswith("{")
    assert serde.dumps(c, "x.yaml").startswith("format_version")
    assert serde.loads(serde.dumps(c, "c.JSON"), "c.JSON") == load_yaml(dump_yaml(c))
