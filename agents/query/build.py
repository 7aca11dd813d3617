"""Assemble a ``QueryPlan`` from a focus, an operation and the question's anchors: the anchors' types are joined
to the focus type along the best path (one anchor before the focus, a second one after it), every other filter
(comparisons, dates, flags) lands on the type it belongs to, and the plan returns the focus attribute, its
display name, or the aggregate.
"""

from __future__ import annotations

from esc.agents.query.anchors import Anchor
from esc.agents.query.assemble import AMBIGUOUS, Job, hops_of, route
from esc.agents.query.interpret import Decline, Focus, Planned
from esc.agents.query.paths import Step, distance
from esc.agents.query.plan import NodePattern, OrderBy, QueryPlan, ReturnItem
from esc.agents.query.vocabulary import DERIVED_VALUE

MAX_ROWS = 1000
"""Rows a list question reads at most (its answer shows the first ``answer.MAX_LIST`` values)."""
CONTAINER_PREPS = frozenset({"on", "in", "from", "by", "of", "within", "inside"})


def choose_readings(job: Job, target: str) -> list[Anchor]:
    """Each anchor's reading: the designated one, else the one whose type is nearest the target (display
    names first); an undesignated value held by several types costs confidence."""
    out = []
    for a in job.anchors:
        if a.designated or not a.alts:
            out.append(a)
            continue
        options = [a, *a.alts]
        rank = {"display": 0, "key": 0, "literal": 0, "category": 1, "other": 2}
        # "the tracks on 'Fireball'": a name after a preposition names what holds the target, not the target
        container = job.r.low(a.start - 1) in CONTAINER_PREPS and all(x.role == "display" for x in options)
        options.sort(key=lambda x: (container and x.entity == target, distance(job.vocab, x.entity, target),
                                    rank.get(x.role, 3), -len(x.filters), x.entity, repr(x.filters)))  # fmt: skip
        best = options[0]
        rival = options[1]
        if distance(job.vocab, rival.entity, target) == distance(job.vocab, best.entity, target) and rival.entity != best.entity:
            job.penalize(AMBIGUOUS, f"'{a.text}' is held by several types")
        out.append(best)
    return out


def item(job: Job, var: str, entity: str, attr: str | None, agg: str | None, alias: str) -> ReturnItem:
    if attr == DERIVED_VALUE:
        return ReturnItem(var=var, expr=job.vocab.derived[entity], agg=agg, alias=alias)  # type: ignore[arg-type]
    return ReturnItem(var=var, prop=attr, agg=agg, alias=alias)  # type: ignore[arg-type]


def chain(job: Job, target: str, anchors: list[Anchor], prefer_many: bool = False) -> tuple[list[NodePattern], list[Step], int]:
    """Nodes and steps of a linear pattern through the anchors' types and ``target``; returns the index of the
    target's node. The first anchor on another type starts the pattern, the target is reached from it, and an
    anchor on a further type is reached from the target."""
    own = [a for a in anchors if a.entity == target]
    others = [a for a in anchors if a.entity != target]
    by_entity: dict[str, list[Anchor]] = {}
    for a in others:
        by_entity.setdefault(a.entity, []).append(a)
    ents = list(by_entity)
    steps: list[Step] = []
    if ents:
        start = ents[0]
        steps = route(job, start, target, prefer_many)
        nodes = [NodePattern(var="n0", label=start, filters=[f for a in by_entity[start] for f in a.filters])]
    else:
        nodes = [NodePattern(var="n0", label=target)]
        self_hop = _self_focus(job, target)
        if self_hop is not None:
            steps = self_hop
    for i, s in enumerate(steps, 1):
        nodes.append(NodePattern(var=f"n{i}", label=s.target))
    tindex = len(nodes) - 1
    nodes[tindex].filters.extend(f for a in own for f in a.filters)
    placed = {ents[0]} if ents else set()
    for ent in ents[1:]:
        on_path = [k for k, n in enumerate(nodes) if n.label == ent]
        if on_path:
            nodes[on_path[0]].filters.extend(f for a in by_entity[ent] for f in a.filters)
            placed.add(ent)
            continue
        if len(nodes) - 1 != tindex:
            raise Decline(f"the question ties {', '.join(ents)} to {target} in a way one query path cannot follow")
        more = route(job, target, ent)
        for s in more:
            nodes.append(NodePattern(var=f"n{len(nodes)}", label=s.target))
        nodes[-1].filters.extend(f for a in by_entity[ent] for f in a.filters)
        steps = steps + more
        placed.add(ent)
    return nodes, steps, tindex


def _self_rel_mention(job: Job, target: str):  # type: ignore[no-untyped-def]
    """A self-relationship of ``target`` the question names ("which employee does X report to")."""
    for m in job.r.schema:
        for el in m.of("rel"):
            if el.entity == el.target == target:
                return el
    return None


def _self_focus(job: Job, target: str) -> list[Step] | None:
    """An anchor on the target itself with a self-relationship named ("who reports to X" when X is the anchor)."""
    return None


def attach_extras(job: Job, nodes: list[NodePattern], tindex: int) -> None:
    done: set[int] = set()
    order = [tindex, *[k for k in range(len(nodes)) if k != tindex]]
    for k in order:
        nodes[k].filters.extend(job.extra_filters(nodes[k].label, done))
    pending = len(job.r.compares) + len(job.r.dates) - len([d for d in done if not isinstance(d, int) or d > 10_000])
    left_c = [c for c in job.r.compares if id(c) not in done]
    left_d = [d for d in job.r.dates if id(d) not in done]
    if left_c:
        raise Decline(f"no field for the comparison '{job.r.text(left_c[0].start, left_c[0].end)}'")
    if left_d:
        raise Decline(f"no date field for '{job.r.text(left_d[0].start, left_d[0].end)}'")
    del pending


def build_plan(job: Job, focus: Focus, agg: str | None) -> Planned:
    target = focus.entity
    anchors = choose_readings(job, target)
    from esc.agents.reconcile.scope import scope_anchors

    anchors = job.anchors = scope_anchors(job, target, anchors, agg)  # a named type that shares entities (#16)
    for a in anchors:
        if a.score < 1.0:
            job.penalize(a.score, f"value reading of '{a.text}'")
    if focus.via is None and any(a.entity == target for a in anchors):
        own = _self_rel_mention(job, target)
        if own is not None:
            focus = Focus(target, focus.attr, focus.score, focus.start, focus.element, own)
    if focus.via is not None and focus.via.entity == focus.via.target:
        return _self_relationship(job, focus, agg)
    prefer_many = agg in ("count", "sum", "avg", "count_distinct")
    nodes, steps, tindex = chain(job, target, anchors, prefer_many)
    attach_extras(job, nodes, tindex)
    tvar = nodes[tindex].var
    cite = [n.var for n in nodes]
    info = job.vocab.types[target]
    hops = hops_of(steps, nodes)
    if agg in ("count", "count_distinct", "sum", "avg", "min", "max"):
        prop = None if agg == "count" else focus.attr
        ret = item(job, tvar, target, prop, agg, "agg")
        plan = QueryPlan(kind="count" if agg == "count" else "aggregate", start=nodes[0], hops=hops,
                         returns=[ret], cite=cite)  # fmt: skip
        return Planned(plan, ["agg"], "aggregate", round(job.conf, 3), True, job.notes, unmatched=job.unmatched())
    shown = [focus.attr] if focus.attr is not None else info.display
    returns = [item(job, tvar, target, p, None, f"v{i}") for i, p in enumerate(shown)]
    single = _single_result(job, anchors, steps, target, tindex) or _asks_for_one(job, focus)
    kind = "lookup" if not steps else "traverse"
    plan = QueryPlan(kind=kind, start=nodes[0], hops=hops, returns=returns, cite=cite)  # type: ignore[arg-type]
    if not single:
        # a list: bounded, in a stable order (an answer shows at most MAX_LIST values anyway)
        plan.limit = MAX_ROWS
        plan.order_by = OrderBy(var=tvar, prop=returns[0].prop, desc=False) if returns[0].prop else None
    return Planned(plan, [r.alias for r in returns], kind, round(job.conf, 3), single, job.notes,
                   unmatched=job.unmatched())  # fmt: skip


def _asks_for_one(job: Job, focus: Focus) -> bool:
    """"What is the FAA code of ...", "what's the name of ...": a field asked for in the singular expects one
    value (several values then say the question was not pinned down)."""
    r = job.r
    words = [t.low for t in r.tokens[:3]]
    singular = words[:2] in (["what", "is"], ["what", "was"], ["who", "is"], ["who", "was"]) or words[:1] in (
        ["what's"], ["whats"])
    return singular and focus.attr is not None and not any(t.low in ("all", "every", "each") for t in r.tokens)


def _single_result(job: Job, anchors: list[Anchor], steps: list[Step], target: str, tindex: int) -> bool:
    """One value is expected: the anchor pins one record and the path to the target only follows to-one links."""
    pins = [a for a in anchors if a.role in ("key", "display", "literal")]
    if not pins:
        return False
    if any(a.entity == target for a in pins):
        return not steps or all(s.to_one for s in steps[tindex:])
    return bool(steps) and all(s.to_one for s in steps[:tindex])


def _self_relationship(job: Job, focus: Focus, agg: str | None) -> Planned:
    """"Who does X report to" / "who reports to X" / "X's direct reports": one hop along the self-relationship,
    in the direction the phrase gives it."""
    rel = focus.via
    assert rel is not None
    target = focus.entity
    anchors = [a for a in job.anchors if a.entity == target]
    others = [a for a in job.anchors if a.entity != target]
    fixed = job.self_directions()
    direction = fixed.get(rel.name, "out")
    if others:
        # "the manager of the employee who handled order X": reach the employee from the order first
        first = others[0]
        lead = route(job, first.entity, target, skip=frozenset({rel.name}))
        nodes = [NodePattern(var="n0", label=first.entity, filters=[f for a in others for f in a.filters])]
        for i, s in enumerate(lead, 1):
            nodes.append(NodePattern(var=f"n{i}", label=s.target))
        nodes[-1].filters.extend(f for a in anchors for f in a.filters)
        nodes.append(NodePattern(var=f"n{len(nodes)}", label=target))
        steps = [*lead, Step(rel.name, direction, target, direction == "out")]
    else:
        nodes = [NodePattern(var="n0", label=target, filters=[f for a in anchors for f in a.filters]),
                 NodePattern(var="n1", label=target)]  # fmt: skip
        steps = [Step(rel.name, direction, target, direction == "out")]
    start = nodes[0]
    end = nodes[-1]
    attach_extras(job, nodes, len(nodes) - 1)
    info = job.vocab.types[target]
    hops = hops_of(steps, nodes)
    cite = [n.var for n in nodes]
    if agg == "count":
        plan = QueryPlan(kind="count", start=start, hops=hops, returns=[ReturnItem(var=end.var, agg="count", alias="agg")],
                         cite=cite)  # fmt: skip
        return Planned(plan, ["agg"], "aggregate", round(job.conf, 3), True, job.notes, unmatched=job.unmatched())
    returns = [ReturnItem(var=end.var, prop=p, alias=f"v{i}") for i, p in enumerate(info.display)]
    plan = QueryPlan(kind="traverse", start=start, hops=hops, returns=returns, cite=cite)
    single = direction == "out" and bool(anchors or others) and all(s.to_one for s in steps)
    return Planned(plan, [r.alias for r in returns], "traverse", round(job.conf, 3), single, job.notes,
                   unmatched=job.unmatched())  # fmt: skip
