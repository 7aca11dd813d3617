from __future__ import annotations

from esc.agents.query.plan import Filter, Hop, NodePattern, OrderBy, QueryPlan, ReturnItem
from esc.agents.query.validate import problems


def _plan(**kw) -> QueryPlan:  # type: ignore[no-untyped-def]
    base = dict(
        kind="lookup",
        start=NodePattern(var="n0", label="Track"),
        returns=[ReturnItem(var="n0", prop="Name", alias="v")],
    )
    base.update(kw)
    return QueryPlan(**base)  # type: ignore[arg-type]


def test_valid_plan_has_no_problems(chinook) -> None:  # type: ignore[no-untyped-def]
    plan = _plan(hops=[Hop(rel_type="ALBUM", direction="out", target=NodePattern(var="n1", label="Album"))])
    assert problems(plan, chinook.contract) == []


def test_unknown_names_and_wrong_direction_are_reported(chinook) -> None:  # type: ignore[no-untyped-def]
    c = chinook.contract
    assert any(
        "unknown entity type" in p for p in problems(_plan(start=NodePattern(var="n0", label="User")), c)
    )
    assert any(
        "no attribute" in p for p in problems(_plan(returns=[ReturnItem(var="n0", prop="pw", alias="v")]), c)
    )
    bad_filter = _plan(start=NodePattern(var="n0", label="Track", filters=[Filter(prop="nope", value=1)]))
    assert any("no attribute 'nope'" in p for p in problems(bad_filter, c))
    wrong = _plan(hops=[Hop(rel_type="ALBUM", direction="in", target=NodePattern(var="n1", label="Album"))])
    assert any("no relationship" in p for p in problems(wrong, c))
    unbound = _plan(order_by=OrderBy(var="n9", prop="Name"))
    assert any("unbound" in p for p in problems(unbound, c))
    assert any("limit" in p for p in problems(_plan(limit=0), c))
