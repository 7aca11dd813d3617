"""Run a question's plan over canonical entities: a plan written over the contract's types (and the ``SAME_AS``
relationships of ``ClusterView``) becomes one over the ``_Canonical`` nodes of the types that have them.

* Nodes of resolved types joined by ``SAME_AS`` are one canonical node; it must have a member of each of those
  types (``_n_<Label>``), so "how many contacts" counts the people among the contacts, not their records.
* A filter that names a record (a name, e-mail, phone, key) matches any member's value: it is run first over the
  members and becomes ``_cid IN [...]``; any other filter (a city, an amount, a date) tests the current value.
* Returned, ordered and aggregated attributes are the canonical ones (current values, units scaled).
* A relationship of the contract leaves a canonical node through any of its members (``<-[:SAME_AS]-``), so the
  tickets of a person are those of all of its CRM records.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from esc.agents.query.plan import (
    CITE_CAP,
    Expr,
    Filter,
    Hop,
    NodePattern,
    OrderBy,
    PlanRow,
    QueryPlan,
    ReturnItem,
)
from esc.agents.reconcile.model import CANONICAL, CID, CONFLICTS, SAME_AS, member_marker
from esc.agents.reconcile.view import ClusterView
from esc.agents.stores.base import GraphStore

MAX_IDS = 5000


@dataclass
class Rewritten:
    plan: QueryPlan
    canonical_vars: dict[str, str] = field(default_factory=dict)  # original var -> canonical var
    returned: dict[str, tuple[str, str]] = field(default_factory=dict)  # alias -> (label, attr) asked for
    counted: set[str] = field(default_factory=set)  # labels counted as clusters
    empty: bool = False  # an identifying filter matched no record
    coverage: tuple[str, str] | None = None  # (canonical var, attribute) an aggregate takes from another type
    missing: int = 0  # entities in the question's scope without that attribute (set by ``run``)


def _groups(plan: QueryPlan, view: ClusterView) -> list[list[int]]:
    """Positions along the path: runs of resolved nodes joined by SAME_AS hops are one position."""
    nodes = plan.vars()
    out: list[list[int]] = [[0]]
    for i, hop in enumerate(plan.hops, 1):
        prev, node = nodes[i - 1], nodes[i]
        if hop.rel_type == SAME_AS and prev.label in view.labels and node.label in view.labels:
            out[-1].append(i)
        else:
            out.append([i])
    return out


def _map_expr(e: Expr, label: str, view: ClusterView) -> Expr:
    if e.prop is not None:
        return Expr(prop=view.canon(label, e.prop))
    return Expr(const=e.const, op=e.op, args=[_map_expr(a, label, view) for a in e.args])


def _scaled_value(v: Any, factor: float | None) -> Any:
    if factor is None or isinstance(v, bool) or not isinstance(v, int | float):
        return v
    return round(v * factor, 9)


def rewrite(plan: QueryPlan, view: ClusterView, graph: GraphStore, vocab: Any) -> Rewritten | None:
    """The plan over canonical entities, or None when it touches no resolved type."""
    nodes = plan.vars()
    if not any(n.label in view.labels for n in nodes):
        return None
    groups = _groups(plan, view)
    out = Rewritten(plan=plan)
    new_nodes: list[NodePattern] = []
    new_hops: list[Hop] = []
    var_of: dict[str, str] = {}
    label_of: dict[str, str] = {}
    fresh = iter(f"m{i}" for i in range(100))
    marked_of: dict[str, set[str]] = {}
    for gi, group in enumerate(groups):
        members = [nodes[i] for i in group]
        resolved = members[0].label in view.labels
        if not resolved:
            node = members[0]
            target = NodePattern(var=node.var, label=node.label, filters=list(node.filters))
            var_of[node.var] = node.var
        else:
            cvar = f"c{gi}"
            filters: list[Filter] = []
            # the canonical node has a member of each type the question filters on (of the first type when it
            # filters on none): "contacts in Hamburg" are people with a CRM record, whoever holds their balance
            marked = [n for n in members if n.filters] or members[:1]
            marked_of[cvar] = {n.label for n in marked}
            for n in members:
                var_of[n.var] = cvar
                label_of[n.var] = n.label
                out.canonical_vars[n.var] = cvar
                if n in marked:
                    filters.append(Filter(prop=member_marker(n.label), op="notnull", value=None))
                info = vocab.types.get(n.label)
                display, key = (info.display, info.key) if info is not None else ([], [])
                naming = [f for f in n.filters if view.identifying(n.label, f.prop, display, key)]
                for f in n.filters:
                    if f in naming:
                        continue
                    value = _scaled_value(f.value, view.scale(n.label, f.prop))
                    filters.append(Filter(prop=view.canon(n.label, f.prop), op=f.op, value=value))
                if naming:
                    ids = _cluster_ids(graph, n.label, naming)
                    out.empty = out.empty or not ids
                    filters.append(Filter(prop=CID, op="in", value=ids))
            target = NodePattern(var=cvar, label=CANONICAL, filters=filters)
        if gi == 0:
            new_nodes.append(target)
        else:
            hop = plan.hops[group[0] - 1]
            left = nodes[groups[gi - 1][-1]]
            if left.label in view.labels:  # leave the canonical node through a member of the hop's type
                m = NodePattern(var=next(fresh), label=left.label)
                new_hops.append(Hop(rel_type=SAME_AS, direction="in", target=m))
            if resolved:  # arrive at a member, then at its canonical node
                m = NodePattern(var=next(fresh), label=members[0].label)
                new_hops.append(Hop(rel_type=hop.rel_type, direction=hop.direction, target=m))
                new_hops.append(Hop(rel_type=SAME_AS, direction="out", target=target))
            else:
                new_hops.append(Hop(rel_type=hop.rel_type, direction=hop.direction, target=target))
    returns = []
    for r in plan.returns:
        v = var_of[r.var]
        if r.var not in label_of:
            returns.append(r.model_copy(update={"var": v}))
            continue
        label = label_of[r.var]
        if r.agg == "count" and r.prop is None and r.expr is None:
            out.counted.add(label)
        prop = view.canon(label, r.prop) if r.prop is not None else None
        expr = _map_expr(r.expr, label, view) if r.expr is not None else None
        returns.append(ReturnItem(var=v, prop=prop, agg=r.agg, alias=r.alias, expr=expr))
        if r.agg in ("sum", "avg", "min", "max") and prop is not None and label not in marked_of.get(v, {label}):
            out.coverage = (v, prop)  # "the total balance of the subscribers": the balance is another type's
        if r.agg is None and r.prop is not None:
            out.returned[r.alias] = (label, r.prop)
    order = plan.order_by
    if order is not None and order.var in label_of:
        order = OrderBy(var=var_of[order.var], prop=view.canon(label_of[order.var], order.prop) if order.prop else None,
                        desc=order.desc, alias=order.alias)  # fmt: skip
    elif order is not None and order.var:
        order = order.model_copy(update={"var": var_of.get(order.var, order.var)})
    if not any(r.agg for r in returns):
        for v in dict.fromkeys(var_of[x] for x in label_of):
            returns.append(ReturnItem(var=v, prop=CID, alias=f"_cid_{v}"))
            returns.append(ReturnItem(var=v, prop=CONFLICTS, alias=f"_conflicts_{v}"))
    out.plan = QueryPlan(
        kind=plan.kind, start=new_nodes[0], hops=new_hops, returns=returns, order_by=order, limit=plan.limit,
        distinct=plan.distinct, cite=list(dict.fromkeys(var_of.get(v, v) for v in plan.cite)),
        group_by=list(dict.fromkeys(var_of.get(v, v) for v in plan.group_by)),
    )  # fmt: skip
    return out


def _cluster_ids(graph: GraphStore, label: str, filters: list[Filter]) -> list[str]:
    """Clusters having a member of ``label`` that passes ``filters``."""
    plan = QueryPlan(
        kind="traverse", start=NodePattern(var="m", label=label, filters=filters),
        hops=[Hop(rel_type=SAME_AS, direction="out", target=NodePattern(var="c", label=CANONICAL))],
        returns=[ReturnItem(var="c", prop=CID, alias="cid")], limit=MAX_IDS,
    )  # fmt: skip
    return sorted({str(r.values["cid"]) for r in graph.run_plan(plan) if r.values.get("cid") is not None})


def run(rw: Rewritten, graph: GraphStore) -> list[PlanRow]:
    if rw.empty:
        return []
    if rw.coverage is not None:
        rw.missing = _missing(rw.plan, *rw.coverage, graph)
    once = _per_entity(rw)
    if once is not None:
        return _aggregate_once(rw.plan, once, graph)
    return graph.run_plan(rw.plan)


def _missing(plan: QueryPlan, var: str, prop: str, graph: GraphStore) -> int:
    """Entities the plan reaches at ``var`` that hold no ``prop`` (their records of the type holding it were not
    linked to them, or they have none): an aggregate over the rest leaves them out."""
    def lacking(n: NodePattern) -> NodePattern:
        return n.model_copy(update={"filters": [*n.filters, Filter(prop=prop, op="isnull", value=None)]}) if n.var == var else n

    count = QueryPlan(kind="count", start=lacking(plan.start),
                      hops=[h.model_copy(update={"target": lacking(h.target)}) for h in plan.hops],
                      returns=[ReturnItem(var=var, agg="count", alias="n")])  # fmt: skip
    rows = graph.run_plan(count)
    return int(rows[0].values.get("n") or 0) if rows else 0


def _per_entity(rw: Rewritten) -> str | None:
    """The canonical var a sum or average runs over when a path to it may reach one entity more than once (two of
    its members, or two records that point at it): its values are then taken once per entity."""
    plan = rw.plan
    canon = set(rw.canonical_vars.values())
    summed = {r.var for r in plan.returns if r.agg in ("sum", "avg") or (r.agg == "count" and (r.prop or r.expr))}
    if not plan.hops or plan.group_by or len(summed) != 1 or not summed <= canon:
        return None
    var = next(iter(summed))
    if any(r.agg is None or r.var != var for r in plan.returns):
        return None
    return var


def _aggregate_once(plan: QueryPlan, var: str, graph: GraphStore) -> list[PlanRow]:
    """The plan's aggregates over the distinct entities bound to ``var`` (one row per entity, then summed here)."""
    items = [r for r in plan.returns if r.agg != "count" or r.prop or r.expr]
    returns = [ReturnItem(var=var, prop=CID, alias="_cid_once")]
    returns += [ReturnItem(var=var, prop=r.prop, expr=r.expr, alias=r.alias) for r in items]
    distinct = QueryPlan(kind="traverse", start=plan.start, hops=plan.hops, returns=returns, cite=[var], limit=None)
    rows = graph.run_plan(distinct)
    values: dict[str, Any] = {}
    for r in plan.returns:
        got = [row.values.get(r.alias) for row in rows]
        nums = [v for v in got if isinstance(v, int | float) and not isinstance(v, bool)]
        if r.agg == "count":
            values[r.alias] = len([v for v in got if v is not None]) if r.prop or r.expr else len(rows)
        elif r.agg == "sum":
            values[r.alias] = sum(nums) if all(isinstance(v, int) for v in nums) else float(sum(nums))
        elif r.agg == "avg":
            values[r.alias] = sum(nums) / len(nums) if nums else None
        else:
            present = [v for v in got if v is not None]
            values[r.alias] = (min(present) if r.agg == "min" else max(present)) if present else None
    cites: list[dict[str, Any]] = []
    for row in rows:
        for c in row.citations:
            if c not in cites and len(cites) < CITE_CAP:
                cites.append(c)
    return [PlanRow(values=values, citations=cites)]
