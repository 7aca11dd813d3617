"""The resolver reads time fields and units from the contract's marks (contract/annotations.py): a unit column
scales each record by its own unit, value ranges put cents and dollars on one scale without a unit word, and the
update-time mark decides the current value; the records keep their values as written."""

from __future__ import annotations

import json

from esc.agents.reconcile.consolidate import consolidate
from esc.agents.reconcile.model import CONFLICTS, Member
from esc.agents.reconcile.resolver import Resolver
from esc.contract.er_fields import ResolutionSpec, TypeSpec

CANON = {"name": "name", "email": "email", "amount": "amount", "amount_unit": "amount_unit", "changed": "changed"}


def _spec(**extra: object) -> ResolutionSpec:
    t = TypeSpec(label="Payer", source="payers", roles={"name": "name", "email": "email"}, time_field="changed",
                 canon=CANON, **extra)  # type: ignore[arg-type]  # fmt: skip
    return ResolutionSpec({"Payer": t})


def member(rid: str, **values: object) -> Member:
    return Member(sid=f"payers\x1f{rid}", label="Payer", key=(("id", rid),), values=tuple(sorted(values.items())),
                  source="payers", record_id=rid)  # fmt: skip


def test_a_unit_column_puts_every_record_on_one_scale() -> None:
    spec = _spec(columns={"amount": ("amount_unit", {"cents": 0.01, "dollars": 1.0})})
    a = member("1", name="Ada Byron", email="ada@x.org", amount=1250, amount_unit="cents", changed="2023-01-02")
    b = member("2", name="A. Byron", email="ADA@x.org", amount=12.5, amount_unit="dollars", changed="2023-05-02")
    c = member("3", name="Ada Byron", email="ada@x.org", amount=7, amount_unit="parsecs", changed="2021-01-01")
    r = Resolver(spec)
    out = r.upsert([a, b, c]).upserts
    assert len(out) == 1
    canon = out[0].props
    assert canon["amount"] == 12.5  # 1250 cents agree with 12.5 dollars; the unknown unit stays as written
    conflicts = json.loads(canon[CONFLICTS])
    values = [v["value"] for c in conflicts if c["field"] == "amount" for v in c["values"]]
    assert values == [12.5, 7]  # the agreeing records are one value, the one in an unknown unit another
    assert a.value("amount") == 1250  # the record keeps what it says


def test_a_scale_mark_and_the_update_time_decide_the_current_value() -> None:
    spec = _spec(scale={"amount": 0.01})
    older = member("1", name="Ada Byron", email="ada@x.org", amount=99900, changed="2022-03-01")
    newer = member("2", name="Ada Byron", email="ada@x.org", amount=123456, changed="2023-03-01")
    got = consolidate("c1", [older, newer], spec)
    assert got.props["amount"] == 1234.56
    conflict = json.loads(got.props[CONFLICTS])[0]
    assert [v["value"] for v in conflict["values"]] == [1234.56, 999.0]
    assert [v["as_of"] for v in conflict["values"]] == ["2023-03-01", "2022-03-01"]


def test_as_of_a_date_without_a_recorded_history_is_not_confident() -> None:
    from datetime import date

    from esc.agents.query.answer import Answer, Citation, Conflict, ConflictValue
    from esc.agents.reconcile.answers import apply_as_of

    plain = Answer(answer="open", route="lookup", confidence=0.97, contract_version=1)
    apply_as_of(plain, date(2021, 5, 1))
    assert plain.answer == "open" and plain.confidence < 0.8 and "no earlier value" in (plain.note or "")
    cite = [Citation(source="crm", record_id="1", location="crm.csv:row=2")]
    history = Conflict(field="city", values=[ConflictValue(value="Lyon", as_of="2023-02-01", citations=cite),
                                             ConflictValue(value="Paris", as_of="2021-03-04", citations=cite)])  # fmt: skip
    then = Answer(answer="Lyon", route="lookup", confidence=0.97, contract_version=1, conflicts=[history])
    apply_as_of(then, date(2022, 1, 1))
    assert (then.answer, then.confidence) == ("Paris", 0.97)
    before = Answer(answer="Lyon", route="lookup", confidence=0.97, contract_version=1, conflicts=[history])
    apply_as_of(before, date(2020, 1, 1))
    assert before.answer == "Lyon" and before.confidence < 0.8


def test_cents_found_from_value_ranges_are_normalized_and_the_record_keeps_its_value() -> None:
    from bench._reconcile_qa import SUPPLIERS, load_reconciled
    from esc.agents.query.agent import QueryAgent
    from esc.agents.query.memstore import MemoryGraphStore
    from esc.agents.query.plan import Filter, NodePattern, QueryPlan, ReturnItem

    graph = MemoryGraphStore()
    contract, _ = load_reconciled(SUPPLIERS / "drop", graph)
    answer = QueryAgent(contract, graph).ask("What is the balance of Lindgren Glass?")
    assert answer.answer == 17871.21  # only the procurement source holds it, in cents, with no unit word
    plan = QueryPlan(kind="lookup", start=NodePattern(var="n", label="ProcurementSupplier",
                                                      filters=[Filter(prop="supplier", value="Lindgren Glass")]),
                     returns=[ReturnItem(var="n", prop="outstanding_balance", alias="v")])  # fmt: skip
    assert [r.values["v"] for r in graph.run_plan(plan)] == [1787121]
