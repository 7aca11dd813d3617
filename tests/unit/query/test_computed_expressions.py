"""The query-scoped extension for computed expressions (agents/query/computed.py): an attribute the contract lacks
but two fields of one entity give is derived for one question, answered with the records cited, and reverted.

Asked of the hand-written expeditions set (tests/data/expeditions: words no pack has) and of Northwind (a public
pack), on the reference in-memory store and the embedded DuckDB store; every expected value is computed here from
the CSV files. Expressions the contract does not allow are declined with the reason; questions with no expression
("between 2018 and 2020") go to the planner as before. With an LLM, a proposed expression is checked against the
closed-world catalog: an invented field id is rejected."""

from __future__ import annotations

import csv
import json
from datetime import date
from pathlib import Path
from typing import Any

import pytest

import bench.qa as qa
from esc.agents.query.agent import QueryAgent
from esc.agents.query.memstore import MemoryGraphStore
from esc.agents.stores.embedded.graph import EmbeddedGraphStore
from esc.streams.events import QueryOptions
from tests.paths import REPO

EXPEDITIONS = REPO / "tests" / "data" / "expeditions" / "drop"
NORTHWIND = REPO / "tests" / "data" / "eval" / "relational" / "northwind" / "drop"


def rows(path: Path) -> dict[str, dict[str, str]]:
    with path.open(encoding="utf-8") as f:
        return {r["name"]: r for r in csv.DictReader(f)}


def _agent(folder: Path, backend: str) -> QueryAgent:
    graph: Any = MemoryGraphStore() if backend == "memory" else EmbeddedGraphStore()
    contract, _, _ = qa.load(folder, graph)
    return QueryAgent(contract, graph)


@pytest.fixture(scope="module", params=["memory", "embedded"])
def expeditions(request: pytest.FixtureRequest) -> QueryAgent:
    return _agent(EXPEDITIONS, request.param)


def days(a: str, b: str) -> int:
    return (date.fromisoformat(b) - date.fromisoformat(a)).days


E = rows(EXPEDITIONS / "expeditions.csv")


@pytest.mark.parametrize(("question", "want"), [
    ("What is the difference between the budget and the cost of the expedition Northern Arc?",
     float(E["Northern Arc"]["budget"]) - float(E["Northern Arc"]["cost"])),
    ("What is the ratio of the cost to the distance of Coral Drift?",
     float(E["Coral Drift"]["cost"]) / float(E["Coral Drift"]["distance"])),
    ("What was the cost per crew of the expedition Iron Coast?",
     float(E["Iron Coast"]["cost"]) / float(E["Iron Coast"]["crew"])),
    ("What is the cost minus the budget of Salt Road?", float(E["Salt Road"]["cost"]) - float(E["Salt Road"]["budget"])),
    ("What is the sum of the budget and the cost of Glass Lake?",
     float(E["Glass Lake"]["budget"]) + float(E["Glass Lake"]["cost"])),
    ("How many days between the start date and the end date of the expedition Salt Road?",
     days(E["Salt Road"]["start_date"], E["Salt Road"]["end_date"])),
    ("How many weeks passed between the start date and the end date of Pale Reef?",
     days(E["Pale Reef"]["start_date"], E["Pale Reef"]["end_date"]) / 7),
])  # fmt: skip
def test_an_expression_over_two_fields_is_derived_for_the_question(expeditions: QueryAgent, question: str,
                                                                   want: float) -> None:  # fmt: skip
    before = expeditions.grounding().contract.content_hash
    a = expeditions.ask(question)
    assert a.route == "lookup", a.reason
    assert a.answer == pytest.approx(round(want, 2), abs=0.006)
    assert a.confidence >= 0.8
    row = list(E).index(next(n for n in E if n in question)) + 1  # the record of that expedition, cited
    assert len(a.citations) == 1 and a.citations[0].source == "expeditions" and f":row={row}:" in a.citations[0].record_id
    ext = a.extension or {}
    assert ext.get("scope") == "query" and ext.get("derived_from") == "expression" and ext.get("reverted") is True
    assert ext["added"]["type"] == "Expedition" and len(ext["added"]["fields"]) == 2
    assert expeditions.grounding().contract.content_hash == before  # nothing was added to the contract
    assert not any(ext["added"]["attribute"] in {x.name for x in e.attributes} for e in expeditions.grounding().contract.entities)


@pytest.mark.parametrize(("question", "why"), [
    ("What is the difference between the leader and the budget of Northern Arc?", "not a quantity"),
    ("What is the difference between the budget and the tonnage of Northern Arc?", "not fields of one entity"),
    ("How many days between the start date and the budget of Northern Arc?", "two time fields"),
])  # fmt: skip
def test_an_expression_the_contract_does_not_allow_is_declined(expeditions: QueryAgent, question: str, why: str) -> None:
    a = expeditions.ask(question)
    assert a.route == "abstain" and a.answer is None
    assert why in (a.reason or "")


def test_questions_without_an_expression_are_planned_as_before(expeditions: QueryAgent) -> None:
    from esc.agents.query.computed import read_expression

    g = expeditions.grounding()
    for q in ("Which expeditions had a crew between 5 and 8?", "What is the total cost of all expeditions?",
              "How many expeditions per region?", "What is the budget of Red Mesa?"):  # fmt: skip
        assert read_expression(q, g) is None, q
    a = expeditions.ask("Which expeditions had a crew between 5 and 8?")
    assert sorted(a.answer) == sorted(n for n, r in E.items() if 5 <= int(r["crew"]) <= 8) and a.extension is None
    assert expeditions.ask("What is the budget of Red Mesa?").answer == int(E["Red Mesa"]["budget"])
    # an expression over many entities is not one value: declined, not guessed
    a = expeditions.ask("What is the average difference between the budget and the cost?")
    assert a.route == "abstain" and "extension" in (a.reason or "")


@pytest.fixture(scope="module")
def northwind() -> QueryAgent:
    return _agent(NORTHWIND, "embedded")


def test_a_public_pack_too(northwind: QueryAgent) -> None:
    order = next(o for o in json.loads((NORTHWIND / "Orders.json").read_text("utf-8")) if o.get("ShippedDate"))
    want = days(order["OrderDate"][:10], order["ShippedDate"][:10])
    a = northwind.ask(f"How many days between the order date and the shipped date of order {order['OrderID']}?")
    assert a.route == "lookup" and a.answer == want, a.reason
    assert len(a.citations) == 1 and a.citations[0].source == "Orders"
    with (NORTHWIND / "Products.csv").open(encoding="utf-8") as f:
        p = next(r for r in csv.DictReader(f) if int(r["UnitsInStock"]) > 0)
    a = northwind.ask(f"What is the units in stock times the unit price of the product {p['ProductName']}?")
    assert a.answer == pytest.approx(round(int(p["UnitsInStock"]) * float(p["UnitPrice"]), 2), abs=0.006), a.reason


# ------------------------------------------------------------------------------------------------ LLM mode


def _field_id(agent: QueryAgent, name: str) -> str:
    c = agent.grounding().contract
    return next(f.id for f in c.sources["expeditions"].fields if f.name == name)


def test_an_llm_expression_is_checked_against_the_catalog() -> None:
    from esc.agents.llm import LLMConfig
    from esc.agents.query.llm_planner import LLMPlanner
    from tests.fakes.openai_server import FakeOpenAI

    agent = _agent(EXPEDITIONS, "memory")
    plan = {"kind": "lookup", "start": {"var": "n0", "label": "Expedition",
                                        "filters": [{"prop": "name", "op": "eq", "value": "Quiet Fjord"}]},
            "returns": [{"var": "n0", "prop": "name", "alias": "name"}]}  # fmt: skip
    invented = {"derive": {"op": "sub", "fields": [_field_id(agent, "budget"), "f_00000000deadbeef"], "plan": plan}}
    text = {"derive": {"op": "sub", "fields": [_field_id(agent, "budget"), _field_id(agent, "leader")], "plan": plan}}
    good = {"derive": {"op": "sub", "fields": [_field_id(agent, "budget"), _field_id(agent, "cost")], "plan": plan}}
    with FakeOpenAI([invented, text, good, {"text": "ok"}]) as server:
        config = LLMConfig(base_url=server.base_url, model="fake", timeout=5.0, max_retries=0)
        agent.llm = LLMPlanner(config)
        a = agent.ask("How far under budget was Quiet Fjord?", QueryOptions(mode="llm"))
        sent = [r["messages"][-1]["content"] for r in server.requests]
    assert a.route == "lookup" and a.answer == float(E["Quiet Fjord"]["budget"]) - float(E["Quiet Fjord"]["cost"])
    assert a.extension and a.extension["proposed_by"] == "llm" and a.extension["reverted"] is True
    assert "not in the field catalog" in sent[1] and "not a quantity" in sent[2]  # each rejection went back

    with FakeOpenAI([invented, invented, invented]) as server:
        agent.llm = LLMPlanner(LLMConfig(base_url=server.base_url, model="fake", timeout=5.0, max_retries=0))
        a = agent.ask("How far under budget was Quiet Fjord?", QueryOptions(mode="llm"))
    assert a.route == "abstain" and "not in the field catalog" in (a.reason or "")
