"""Small builders shared by the conformance tests (plans, writes, row normalisation)."""

from __future__ import annotations

from typing import Any

from esc.agents.query.plan import Filter, Hop, NodePattern, PlanRow, QueryPlan, ReturnItem
from esc.agents.stores.base import GraphStore
from esc.agents.types import EntityWrite, SourceRecordRef


def rec(source: str, i: int | str) -> SourceRecordRef:
    return SourceRecordRef(source=source, record_id=str(i), location=f"{source}.csv:row={i}")


def entity(label: str, key: dict[str, Any], props: dict[str, Any], source: str, i: int | str) -> EntityWrite:
    return EntityWrite(label=label, key=key, properties=props, provenance=rec(source, i))


def cites(rows: list[PlanRow]) -> set[tuple[str, str, str]]:
    return {(c["source"], c["record_id"], c["location"]) for r in rows for c in r.citations}


def cite(source: str, i: int | str) -> tuple[str, str, str]:
    return (source, str(i), f"{source}.csv:row={i}")


def lookup(
    store: GraphStore, label: str, prop: str, value: Any, returns: list[str], op: str = "eq"
) -> list[PlanRow]:
    plan = QueryPlan(
        kind="lookup",
        start=NodePattern(var="n0", label=label, filters=[Filter(prop=prop, op=op, value=value)]),  # type: ignore[arg-type]
        returns=[ReturnItem(var="n0", prop=p, alias=p) for p in returns],
        cite=["n0"],
    )
    return store.run_plan(plan)


def neighbours(
    store: GraphStore,
    label: str,
    key: dict[str, Any],
    rel: str,
    direction: str,
    target: str,
    prop: str,
    distinct: bool = True,
) -> list[PlanRow]:
    plan = QueryPlan(
        kind="traverse",
        start=NodePattern(var="n0", label=label, filters=[Filter(prop=k, value=v) for k, v in key.items()]),
        hops=[Hop(rel_type=rel, direction=direction, target=NodePattern(var="n1", label=target))],  # type: ignore[arg-type]
        returns=[ReturnItem(var="n1", prop=prop, alias=prop)],
        cite=["n1"],
        distinct=distinct,
    )
    return store.run_plan(plan)
