"""Check a ``QueryPlan`` against the contract before it runs: every label, property and relationship exists, every
hop follows a relationship the contract declares in that direction, and every var is bound.

Returns a list of problems (empty means valid) so a planner can report or repair them; ``ensure_valid`` raises.
Plans are read-only by construction (the IR has no write operations), so this is about grounding, not safety.
"""

from __future__ import annotations

from esc.agents.query.plan import QueryPlan
from esc.contract.errors import InvalidPlan
from esc.contract.model import Contract

MAX_HOPS = 6
MAX_LIMIT = 10_000


def problems(plan: QueryPlan, contract: Contract) -> list[str]:
    out: list[str] = []
    labels: dict[str, set[str]] = {e.name: {a.name for a in e.attributes} for e in contract.entities}
    rels = {(r.name, r.from_entity, r.to_entity) for r in contract.relationships}
    bound: dict[str, str] = {}
    if len(plan.hops) > MAX_HOPS:
        out.append(f"too many hops ({len(plan.hops)} > {MAX_HOPS})")
    prev = plan.start
    for i, node in enumerate(plan.vars()):
        if node.label not in labels:
            out.append(f"unknown entity type {node.label!r}")
        if node.var in bound:
            out.append(f"var {node.var!r} bound twice")
        bound[node.var] = node.label
        for f in node.filters:
            if node.label in labels and f.prop not in labels[node.label]:
                out.append(f"{node.label} has no attribute {f.prop!r}")
        if i > 0:
            hop = plan.hops[i - 1]
            src, dst = (prev.label, node.label) if hop.direction == "out" else (node.label, prev.label)
            if (hop.rel_type, src, dst) not in rels:
                out.append(f"no relationship ({src})-[:{hop.rel_type}]->({dst}) in the contract")
            prev = node

    def check_prop(var: str, prop: str | None, what: str) -> None:
        if var not in bound:
            out.append(f"{what} uses unbound var {var!r}")
        elif prop is not None and bound[var] in labels and prop not in labels[bound[var]]:
            out.append(f"{bound[var]} has no attribute {prop!r}")

    if not plan.returns:
        out.append("a plan must return something")
    aliases = set()
    for r in plan.returns:
        check_prop(r.var, r.prop, "return")
        if r.expr is not None:
            for p in r.expr.props():
                check_prop(r.var, p, "expression")
        if r.alias in aliases:
            out.append(f"alias {r.alias!r} used twice")
        aliases.add(r.alias)
        if r.agg in ("sum", "avg") and r.prop is None and r.expr is None:
            out.append(f"{r.agg} needs a property")
    for v in [*plan.cite, *plan.group_by]:
        if v not in bound:
            out.append(f"unbound var {v!r}")
    if plan.order_by is not None:
        ob = plan.order_by
        if ob.alias is not None:
            if ob.alias not in {r.alias for r in plan.returns if r.agg is not None}:
                out.append(f"order_by alias {ob.alias!r} is not an aggregate")
        else:
            check_prop(ob.var, ob.prop, "order_by")
    if plan.limit is not None and not 0 < plan.limit <= MAX_LIMIT:
        out.append(f"limit must be in 1..{MAX_LIMIT}")
    return out


def ensure_valid(plan: QueryPlan, contract: Contract) -> None:
    found = problems(plan, contract)
    if found:
        raise InvalidPlan("; ".join(found))
