"""Discovery end to end: a small mixed folder, and the three evaluation packs (tests/data/eval) against their truth."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from esc.contract.inference import infer
from esc.streams.discover import discover, profile_sources
from tests.paths import RELATIONAL as EVAL


def _write(root: Path) -> None:
    (root / "Customer.csv").write_text(
        "CustomerId;Name;Email\n" + "".join(f"{i};Name {i};c{i}@shop.org\n" for i in range(1, 31)),
        encoding="utf-8",
    )
    invoices = [
        {
            "InvoiceId": i,
            "CustomerId": 1 + i % 30,
            "Total": round(i * 1.1, 2),
            "Line": [{"LineId": i * 10 + j, "InvoiceId": i, "Qty": j + 1} for j in range(i % 4 + 1)],
        }
        for i in range(1, 41)
    ]
    (root / "Invoice.json").write_text(json.dumps(invoices), encoding="utf-8")
    (root / "broken.csv").write_text("a,b\n1,2\n3,4,5\n", encoding="utf-8")


def test_discover_small_folder(tmp_path: Path) -> None:
    _write(tmp_path)
    seen: list[tuple[str, int]] = []
    res = discover(tmp_path, progress=lambda f, n: seen.append((f, n)))
    c = res.contract
    assert c.version == 0 and not c.entities
    assert set(c.sources) == {"Customer", "Invoice", "Invoice.Line", "broken"}
    assert c.sources["Customer"].identity_key == ["CustomerId"]
    assert c.sources["Invoice.Line"].identity_key == ["LineId"]
    assert c.sources["Invoice.Line"].parent == "Invoice"
    assert c.sources["Invoice.Line"].field("Qty").path == "Line[*].Qty"  # type: ignore[union-attr]
    assert {fk.signature() for fk in c.foreign_keys} == {
        ("Invoice", ("CustomerId",), "Customer", ("CustomerId",)),
        ("Invoice.Line", ("InvoiceId",), "Invoice", ("InvoiceId",)),
    }
    (h,) = c.hierarchy
    assert (h.parent, h.child, h.path, h.parent_fields, h.child_fields) == (
        "Invoice",
        "Invoice.Line",
        "$[*].Line",
        ["InvoiceId"],
        ["InvoiceId"],
    )
    assert any("broken.csv" in e.file for e in res.errors)  # the bad row is reported, the rest goes on
    assert {f for f, _ in seen} >= {"Customer.csv", "Invoice.json"}


def test_infer_from_merged_streaming_profiles(tmp_path: Path) -> None:
    _write(tmp_path)
    profiles, meta, _ = profile_sources(tmp_path)
    assert meta["Invoice.Line"]["parent"] == "Invoice" and meta["Invoice.Line"]["array_path"] == "$[*].Line"
    from esc.contract.profile import SourceProfile

    again = {k: SourceProfile.from_dict(json.loads(json.dumps(p.to_dict()))) for k, p in profiles.items()}
    assert infer(again, meta) == infer(profiles, meta)


def _sig(fk: dict) -> tuple:  # type: ignore[type-arg]
    return (fk["from"]["source"], tuple(fk["from"]["fields"]), fk["to"]["source"], tuple(fk["to"]["fields"]))


@pytest.mark.parametrize("db", ["chinook", "sakila", "northwind"])
def test_eval_packs_keys_fks_hierarchy(db: str) -> None:
    assert (EVAL / db).is_dir(), f"eval data missing: {EVAL / db}"
    truth = json.loads((EVAL / db / "truth.json").read_text())
    c = discover(EVAL / db / "drop").contract
    keys = {s: set(spec.identity_key) for s, spec in c.sources.items()}
    assert keys == {s: set(v["identity_key"]) for s, v in truth["sources"].items()}
    want = {_sig(f) for f in truth["foreign_keys"] if f["child_nonnull_rows"] > 0}
    got = {fk.signature() for fk in c.foreign_keys}
    assert got - {_sig(f) for f in truth["foreign_keys"]} == set(), "false positives"
    assert want - got == set(), "missed"
    assert [(h.parent, h.child, h.path, h.parent_fields, h.child_fields) for h in c.hierarchy] == [
        (h["parent"], h["child"], h["path"], h["parent_fields"], h["child_fields"])
        for h in truth["hierarchy"]
    ]
