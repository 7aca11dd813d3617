"""The in-memory reference evaluator runs the same QueryPlan conformance bodies as the embedded store and Neo4j
(tests/conformance/test_query_plans.py), so its semantics cannot drift from theirs: a path never reuses a
relationship, superlatives skip missing values, min/max keep the value type, count of nothing is 0."""

from __future__ import annotations

import inspect
from collections.abc import Iterator
from typing import Any

import pytest

from esc.agents.query.memstore import MemoryGraphStore
from esc.agents.query.plan import NodePattern, QueryPlan, ReturnItem
from esc.agents.stores.base import GraphStore
from tests.conformance import test_query_plans as suite
from tests.conformance.conftest import names  # noqa: F401  (fixture)
from tests.conformance.test_query_plans import music  # noqa: F401  (fixture)

_BODIES = [name for name in dir(suite) if name.startswith("test_")]


@pytest.fixture
def graph_store() -> Iterator[GraphStore]:
    store = MemoryGraphStore()
    yield store
    store.close()


@pytest.mark.parametrize("body", _BODIES)
def test_plan_semantics_match_the_conformance_suite(body: str, request: pytest.FixtureRequest) -> None:
    fn = getattr(suite, body)
    fixtures = [p for p in inspect.signature(fn).parameters]
    cases: list[dict[str, Any]] = [{}]
    for mark in getattr(fn, "pytestmark", []):  # the suite's own parametrize cases
        if mark.name == "parametrize":
            names_arg = mark.args[0]
            argnames = (
                [a.strip() for a in names_arg.split(",")] if isinstance(names_arg, str) else list(names_arg)
            )
            cases = [dict(zip(argnames, v if len(argnames) > 1 else (v,), strict=True)) for v in mark.args[1]]
    for case in cases:
        kwargs = {p: case[p] if p in case else request.getfixturevalue(p) for p in fixtures}
        fn(**kwargs)


def test_sum_of_nothing_is_zero_and_min_keeps_integers(graph_store: GraphStore, music: suite.Music) -> None:  # noqa: F811
    plan = QueryPlan(
        kind="aggregate",
        start=NodePattern(var="n0", label=music.track),
        returns=[
            ReturnItem(var="n0", prop="NoSuchProp", agg="sum", alias="s"),
            ReturnItem(var="n0", prop="Milliseconds", agg="min", alias="lo"),
            ReturnItem(var="n0", prop="NoSuchProp", agg="avg", alias="a"),
        ],
    )
    [row] = graph_store.run_plan(plan)
    assert row.values["s"] == 0 and type(row.values["s"]) is int
    assert row.values["lo"] == min(v[1] for v in suite.TRACKS.values() if v[1] is not None)
    assert type(row.values["lo"]) is int
    assert row.values["a"] is None
