"""The contract's time and unit marks (contract/annotations.py, time_marks.py, units.py): time fields and their
granularity from the values, units from header words, a unit column and value ranges across linked sources; carried
on the attributes of every derived contract, never part of the version identity, and absent from a contract that
has none (an older contract loads and serializes byte for byte as before)."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from esc.contract.annotations import annotate
from esc.contract.er_fields import build_spec
from esc.contract.evolve import content_hash, evolve
from esc.contract.model import Contract, FieldSpec
from esc.contract.serde import dump_json, dump_yaml, load_yaml
from esc.contract.time_marks import time_mark
from esc.streams.discover import discover
from tests.paths import REPO

PEOPLE = REPO / "tests" / "data" / "people" / "drop"
SUPPLIERS = REPO / "tests" / "data" / "suppliers" / "drop"


def _field(name: str, typ: str, values: list[object], semantic: str | None = None) -> FieldSpec:
    return FieldSpec(id=f"f_{name}", name=name, path=name, type=typ, semantic=semantic, examples=values[:5],  # type: ignore[arg-type]
                     top_values=[(v, 1) for v in values[5:]], min=min(values), max=max(values))  # type: ignore[type-var]


def _marks(contract: Contract) -> dict[tuple[str, str], dict[str, object]]:
    return {(e.source, a.name): {k: v for k, v in (("time", a.time), ("unit", a.unit)) if v is not None}
            for e in contract.entities for a in e.attributes if a.time or a.unit}  # fmt: skip


@pytest.mark.parametrize(
    ("typ", "values", "granularity", "fmt"),
    [
        ("datetime", ["2023-01-05T10:15:07", "2023-02-01T08:00:00", "2022-11-30T23:59:59"], "second", None),
        ("datetime", ["2023-01-05T10:15:00", "2023-02-01T08:30:00", "2022-11-30T23:59:00"], "minute", None),
        ("datetime", ["2013-01-01 05:00:00", "2013-02-01 08:00:00", "2013-11-30 23:00:00"], "hour", None),
        ("datetime", ["2023-01-05T00:00:00", "2023-02-03T00:00:00", "2022-11-30T00:00:00"], "day", None),
        ("date", ["2023-01-05", "2023-02-01"], "day", None),
        ("date", ["2021-01-01", "2021-02-01", "2022-03-01", "2022-07-01", "2023-05-01"], "month", None),
        ("date", ["2021-01-01", "2021-02-01"], "day", None),  # too few values to call it coarser than its type
        ("date", ["2019-01-01", "2020-01-01", "2021-01-01", "2022-01-01", "2023-01-01"], "year", None),
        ("string", ["2021-03", "2022-11", "2019-01", "2023-12"], "month", "YYYY-MM"),
        ("string", ["03/14/2023", "12/01/2022", "07/30/2021"], "day", "MM/DD/YYYY"),
        ("string", ["14/03/2023", "01/12/2022", "30/07/2021"], "day", "DD/MM/YYYY"),
        ("string", ["14.03.2023", "01.12.2022", "30.07.2021"], "day", "DD.MM.YYYY"),
        ("string", ["March 2023", "Dec 2022", "July 2021"], "month", "Month YYYY"),
    ],
)
def test_time_fields_and_their_granularity_come_from_the_values(
    typ: str, values: list[object], granularity: str, fmt: str | None
) -> None:
    mark = time_mark(_field("seen", typ, values))
    assert mark is not None
    assert (mark.granularity, mark.format) == (granularity, fmt)


def test_what_is_not_a_date_gets_no_time_mark_and_names_give_the_role() -> None:
    assert time_mark(_field("code", "string", ["A-17", "B-22", "C-03"])) is None
    assert time_mark(_field("mixed", "string", ["2021-03", "soon", "later", "2022-01"])) is None
    assert time_mark(_field("ambiguous", "string", ["13/02/2021", "02/13/2021", "05/05/2021"])) is None
    assert time_mark(_field("amount", "decimal", [1.5, 2.5, 3.0])) is None
    assert time_mark(_field("year", "int", [1999, 2004, 2021], semantic="year")).granularity == "year"  # type: ignore[union-attr]
    roles = {n: time_mark(_field(n, "date", ["2023-01-05", "2023-02-01"])) for n in
             ("updated_at", "last_modified", "RevisedOn", "as_of", "date_of_birth", "opened_at")}  # fmt: skip
    assert {n: m.role for n, m in roles.items() if m} == {"updated_at": "updated", "last_modified": "updated",
                                                         "RevisedOn": "updated", "as_of": "updated",
                                                         "date_of_birth": "birth", "opened_at": None}  # fmt: skip


def test_the_people_pack_marks_time_fields_and_the_cents_both_by_header_and_by_ranges() -> None:
    contract, _ = evolve(None, discover(PEOPLE).contract)
    marks = _marks(contract)
    assert marks[("crm_contacts", "updated_at")]["time"].granularity == "minute"  # type: ignore[attr-defined]
    assert marks[("crm_contacts", "updated_at")]["time"].role == "updated"  # type: ignore[attr-defined]
    assert marks[("support_tickets", "opened_at")]["time"].granularity == "day"  # type: ignore[attr-defined]
    unit = marks[("billing_accounts", "balance_cents")]["unit"]
    assert (unit.scale, unit.canonical, unit.basis) == (0.01, "balance", "header")  # type: ignore[attr-defined]
    assert "value ranges agree" in unit.rule  # type: ignore[attr-defined]
    assert ("portal_users", "account_balance") not in marks  # the dollars are the canonical unit
    spec = build_spec(contract)
    assert spec.get("BillingAccount").scale == {"balance_cents": 0.01}  # type: ignore[union-attr]
    assert spec.get("CrmContact").time_field == "updated_at"  # type: ignore[union-attr]
    assert spec.get("Subscriber").time_field is None  # type: ignore[union-attr]  # signed_up is no update time


def _rename_column(src: Path, dst: Path, old: str, new: str) -> None:
    for f in src.iterdir():
        text = f.read_text("utf-8")
        (dst / f.name).write_text(text.replace(f'"{old}"', f'"{new}"') if f.suffix == ".json" else text, "utf-8")
    assert old not in (dst / "billing_accounts.json").read_text("utf-8")


def test_cents_without_a_unit_word_are_found_from_value_ranges(tmp_path: Path) -> None:
    """Both packs with no unit word anywhere: the people pack with ``balance_cents`` renamed, and the suppliers
    pack as generated (``outstanding_balance`` in cents beside the ERP's ``balance`` in dollars)."""
    _rename_column(PEOPLE, tmp_path, "balance_cents", "balance")
    for drop, source, field, other in ((tmp_path, "billing_accounts", "balance", "portal_users"),
                                       (SUPPLIERS, "procurement_suppliers", "outstanding_balance", "erp_vendors")):  # fmt: skip
        contract, _ = evolve(None, discover(drop).contract)
        unit = _marks(contract)[(source, field)]["unit"]
        assert (unit.scale, unit.canonical, unit.basis, unit.unit) == (0.01, "balance", "range", "cents")  # type: ignore[attr-defined]
        assert f"{other}." in unit.rule  # type: ignore[attr-defined]
        label = contract.entity_for_source(source).name  # type: ignore[union-attr]
        assert build_spec(contract).get(label).scale == {field: 0.01}  # type: ignore[union-attr]


def _contract(tmp_path: Path, rows: dict[str, list[dict[str, object]]]) -> Contract:
    for name, recs in rows.items():
        buf = io.StringIO()
        w = csv.DictWriter(buf, fieldnames=list(recs[0]), lineterminator="\n")
        w.writeheader()
        w.writerows(recs)
        (tmp_path / f"{name}.csv").write_text(buf.getvalue(), "utf-8")
    return evolve(None, discover(tmp_path).contract)[0]


def _accounts(n: int, scale: float, fractions: bool) -> list[dict[str, object]]:
    out = []
    for i in range(n):
        v = (137.537 + i * 91.2513) * scale
        out.append({"email": f"p{i}@example.org", "city": ["Oslo", "Bergen"][i % 2],
                    "amount_due": round(v, 2) if fractions else round(v)})  # fmt: skip
    return out


def test_value_ranges_that_do_not_tell_leave_the_units_alone(tmp_path: Path) -> None:
    for sub in "abc":
        (tmp_path / sub).mkdir()
    same = _contract(tmp_path / "a", {"crm": _accounts(12, 1, True), "billing": _accounts(12, 1, False)})
    assert not any("unit" in m for m in _marks(same).values())  # alike: nothing to scale
    tenfold = _contract(tmp_path / "b", {"crm": _accounts(12, 1, True), "billing": _accounts(12, 10, False)})
    assert not any("unit" in m for m in _marks(tenfold).values())  # x10 is no unit step ESC knows
    both_fractions = _contract(tmp_path / "c", {"crm": _accounts(12, 1, True), "billing": _accounts(12, 100, True)})
    assert not any("unit" in m for m in _marks(both_fractions).values())  # which side is the sub-unit is unclear


def test_a_unit_column_scales_each_record_by_its_own_unit(tmp_path: Path) -> None:
    rows = [{"email": f"p{i}@example.org", "city": "Oslo", "amount": v, "amount_unit": u}
            for i, (v, u) in enumerate([(1250, "cents"), (12.5, "dollars"), (3000, "cents"), (40, "dollars")])]  # fmt: skip
    contract = _contract(tmp_path, {"payments": rows})
    unit = _marks(contract)[("payments", "amount")]["unit"]
    assert (unit.basis, unit.column, unit.scales) == ("column", "amount_unit", {"cents": 0.01, "dollars": 1.0})  # type: ignore[attr-defined]
    spec = build_spec(contract).get("Payment")
    assert spec is not None and spec.columns == {"amount": ("amount_unit", {"cents": 0.01, "dollars": 1.0})}


def test_marks_are_deterministic_visible_and_outside_the_version_identity() -> None:
    contract, _ = evolve(None, discover(SUPPLIERS).contract)
    again, _ = evolve(None, discover(SUPPLIERS).contract)
    assert dump_yaml(contract) == dump_yaml(again)
    data = json.loads(dump_json(contract))
    attrs = {(e["source"], a["name"]): a for e in data["entities"] for a in e["attributes"]}
    assert attrs[("procurement_suppliers", "onboarded")]["time"] == {"granularity": "month", "format": "YYYY-MM"}
    assert attrs[("purchase_orders", "delivered_at")]["time"] == {"granularity": "minute"}
    assert attrs[("procurement_suppliers", "outstanding_balance")]["unit"]["scale"] == 0.01
    bare = contract.model_copy(deep=True)
    for e in bare.entities:
        for a in e.attributes:
            a.time = a.unit = None
    assert content_hash(bare) == content_hash(contract)
    # a contract written before marks existed: loads and serializes byte for byte as it was
    old = dump_yaml(bare)
    assert "granularity" not in old and "unit:" not in old
    assert dump_yaml(load_yaml(old)) == old
    # and the resolver computes the same marks for it as the contract would carry
    assert build_spec(load_yaml(old)) == build_spec(contract)
    assert annotate(load_yaml(old)).keys() == {a.field_id for e in contract.entities for a in e.attributes if a.time or a.unit}
