from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from esc.cli import app
from esc.contract.serde import load_json, load_yaml
from tests.fakes.openai_server import FakeOpenAI
from tests.paths import CHINOOK as CHINOOK_PACK
from tests.paths import REPO

CHINOOK = CHINOOK_PACK / "drop"
HALLUCINATED = "f_feedfacefeedface"

runner = CliRunner()


def write_drop(root: Path, *, with_country: bool = False) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    header = "customer_id,name,email" + (",country" if with_country else "")
    rows = [
        f"{i},Name {i},user{i}@example.com" + (f",Country {i % 3}" if with_country else "")
        for i in range(1, 41)
    ]
    (root / "customers.csv").write_text("\n".join([header, *rows]) + "\n", encoding="utf-8")
    orders = [
        {
            "order_id": 100 + i,
            "customer_id": 1 + (i % 40),
            "placed": f"2024-01-{1 + i % 28:02d}",
            "lines": [{"line_no": j, "sku": f"S{(i + j) % 7}", "qty": j + 1} for j in range(1, 3)],
        }
        for i in range(60)
    ]
    (root / "orders.json").write_text(json.dumps(orders), encoding="utf-8")
    (root / "broken.json").write_text('{"this": is not json', encoding="utf-8")
    return root


def run(*args: str) -> tuple[int, str]:
    result = runner.invoke(app, ["discover", *args])
    return result.exit_code, result.output


def test_missing_dir_is_an_error(tmp_path: Path) -> None:
    code, output = run(str(tmp_path / "nope"))
    assert code == 2 and "does not exist" in output


def test_summary_lists_keys_fks_hierarchy_and_errors(tmp_path: Path) -> None:
    drop = write_drop(tmp_path / "drop")
    out = tmp_path / "contract.yaml"
    code, output = run(str(drop), "--out", str(out))
    assert code == 0, output
    assert "customers" in output and "customer_id" in output
    assert "orders.customer_id" in output and "customers.customer_id" in output
    assert "hierarchy: orders > orders.lines" in output
    assert "broken.json" in output and "errors" in output
    contract = load_yaml(out.read_text(encoding="utf-8"))
    assert contract.version == 1
    assert contract.sources["customers"].identity_key == ["customer_id"]
    assert {e.name for e in contract.entities} >= {"Customer", "Order", "Line"}
    assert any(r.name == "CUSTOMER" and r.from_entity == "Order" for r in contract.relationships)
    assert any(r.name == "HAS_LINE" for r in contract.relationships)


def test_json_output_is_machine_readable(tmp_path: Path) -> None:
    drop = write_drop(tmp_path / "drop")
    code, output = run(str(drop), "--json")
    assert code == 0
    data = json.loads(output)
    assert data["contract"]["version"] == 1 and data["diff"]["to_version"] == 1
    assert any(e["file"].endswith("broken.json") for e in data["errors"])
    assert data["contract"]["foreign_keys"][0]["from"]["source"]


def test_out_json_and_yaml_validate_against_the_published_schema(tmp_path: Path) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads((REPO / "contract" / "contract.schema.json").read_text())
    drop = write_drop(tmp_path / "drop")
    for name in ("c.json", "c.yaml"):
        code, _ = run(str(drop), "--out", str(tmp_path / name))
        assert code == 0
    as_json = json.loads((tmp_path / "c.json").read_text())
    as_yaml = yaml.safe_load((tmp_path / "c.yaml").read_text())
    assert as_json == as_yaml
    jsonschema.validate(as_json, schema)
    assert load_json((tmp_path / "c.json").read_text()).content_hash == as_yaml["content_hash"]


def test_previous_evolves_and_prints_the_diff(tmp_path: Path) -> None:
    drop = write_drop(tmp_path / "drop")
    v1 = tmp_path / "v1.yaml"
    assert run(str(drop), "--out", str(v1))[0] == 0
    code, output = run(str(drop), "--previous", str(v1), "--out", str(tmp_path / "same.yaml"))
    assert code == 0 and "no structural change: contract stays v1" in output
    assert (tmp_path / "same.yaml").read_text() == v1.read_text()  # replay: byte-identical
    write_drop(drop, with_country=True)
    code, output = run(str(drop), "--previous", str(v1), "--out", str(tmp_path / "v2.yaml"))
    assert code == 0, output
    assert "diff v1 -> v2" in output and "field customers.country" in output
    assert "attribute Customer.country" in output
    v2 = load_yaml((tmp_path / "v2.yaml").read_text())
    assert v2.version == 2 and v2.sources["customers"].field("country") is not None


def test_bad_previous_is_an_error(tmp_path: Path) -> None:
    drop = write_drop(tmp_path / "drop")
    bad = tmp_path / "bad.yaml"
    bad.write_text("- not a contract\n")
    code, output = run(str(drop), "--previous", str(bad))
    assert code == 2 and "not a contract" in output


def test_llm_off_without_base_url(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ESC_LLM_BASE_URL", "")
    code, output = run(str(write_drop(tmp_path / "drop")), "--llm")
    assert code == 0 and "LLM off" in output


def test_llm_hallucination_is_rejected_end_to_end(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def answer(request: dict) -> dict:  # type: ignore[type-arg]
        catalog = [
            json.loads(x) for x in request["messages"][1]["content"].splitlines() if x.startswith('{"id"')
        ]
        sku = next(f["id"] for f in catalog if f["name"] == "sku")
        return {
            "entities": [
                {
                    "name": "Product",
                    "anchor": [sku],
                    "attributes": [{"field_id": sku}, {"field_id": HALLUCINATED}],
                }
            ]
        }

    with FakeOpenAI([answer, "{}"]) as server:
        monkeypatch.setenv("ESC_LLM_BASE_URL", server.base_url)
        monkeypatch.setenv("ESC_LLM_MODEL", "fake")
        out = tmp_path / "c.yaml"
        code, output = run(str(write_drop(tmp_path / "drop")), "--llm", "--json", "--out", str(out))
    assert code == 0
    data = json.loads(output)
    first = data["llm"]["passes"][0]
    assert first["ok"] and first["report"]["field_validity"] == 1.0
    assert first["report"]["field_validity_received"] == pytest.approx(2 / 3, abs=1e-3)  # sku twice, one fake
    assert any(HALLUCINATED in d for d in first["report"]["dropped"])
    text = out.read_text()
    assert HALLUCINATED not in text
    assert load_yaml(text).entity("Product") is not None


def test_llm_server_failure_keeps_the_deterministic_contract(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.fakes.openai_server import Fail

    drop = write_drop(tmp_path / "drop")
    assert run(str(drop), "--out", str(tmp_path / "plain.yaml"))[0] == 0
    with FakeOpenAI([Fail(503)]) as server:
        monkeypatch.setenv("ESC_LLM_BASE_URL", server.base_url)
        code, output = run(str(drop), "--llm", "--out", str(tmp_path / "llm.yaml"))
    assert code == 0 and "LLM discover pass failed" in output
    assert (tmp_path / "llm.yaml").read_text() == (tmp_path / "plain.yaml").read_text()


def test_chinook_end_to_end(tmp_path: Path) -> None:
    truth = json.loads((CHINOOK.parent / "truth.json").read_text())
    code, output = run(str(CHINOOK), "--json", "--out", str(tmp_path / "chinook.yaml"))
    assert code == 0
    data = json.loads(output)
    contract = data["contract"]
    for name, spec in truth["sources"].items():
        assert contract["sources"][name]["identity_key"] == spec["identity_key"], name
    found = {
        (f["from"]["source"], tuple(f["from"]["fields"]), f["to"]["source"]) for f in contract["foreign_keys"]
    }
    expected = {
        (f["from"]["source"], tuple(f["from"]["fields"]), f["to"]["source"]) for f in truth["foreign_keys"]
    }
    assert expected <= found
    rels = {(r["from_entity"], r["name"], r["to_entity"]) for r in contract["relationships"]}
    assert {
        ("Customer", "SUPPORT_REP", "Employee"),
        ("Employee", "REPORTS_TO", "Employee"),
        ("Track", "ALBUM", "Album"),
        ("Invoice", "HAS_INVOICE_LINE", "InvoiceLine"),
    } <= rels
    again = load_yaml((tmp_path / "chinook.yaml").read_text())
    assert again.version == 1 and {e.source for e in again.entities} == set(truth["sources"])


def test_duplicate_key_keeps_the_key_and_warns(tmp_path: Path) -> None:
    drop = write_drop(tmp_path / "drop")
    v1 = tmp_path / "v1.yaml"
    assert run(str(drop), "--out", str(v1))[0] == 0
    with (drop / "customers.csv").open("a", encoding="utf-8") as fh:
        fh.write("1,Someone Else,other@example.com\n")  # customer_id 1 again
    code, output = run(str(drop), "--previous", str(v1), "--out", str(tmp_path / "after.yaml"))
    assert code == 0
    assert "warning: identity key of customers (customer_id) was not re-proved" in output.replace("\n", " ")
    after = load_yaml((tmp_path / "after.yaml").read_text())
    assert after.version == 1 and after.sources["customers"].identity_key == ["customer_id"]
    violation = after.sources["customers"].key_evidence["violation"]
    assert violation["reason"].startswith("esc discover")
    assert violation["fields"]["customer_id"]["uniqueness"] < 1.0
