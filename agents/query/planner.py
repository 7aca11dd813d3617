"""Deterministic planner: question -> ``QueryPlan`` from the contract's vocabulary and value dictionaries.

Reading order (see ``mentions.py`` for how each is found):

1. **Anchors**: values the question names (quoted, or found in the value dictionary, first + last name included)
   and keys ("invoice 376"). A type word right next to a value says which type the value belongs to.
2. **Focus**: the first type, attribute or relationship the question mentions that is not an anchor's own type
   word: what the answer is. "Which *artist* released the album X" -> Artist; "the *email* of customer X" ->
   Customer.Email; "Who is the *support rep* of X" -> the other end of SUPPORT_REP.
3. **Operation**: count / sum / avg / min / max / superlative / comparison / year from the operation words.
4. **Path**: the shortest path in the contract's relationship graph from the anchor's type to the focus type,
   preferring paths through relationships and types the question names; self-relationships ("reports to") take
   their direction from word order ("X reports to ?" vs "? reports to X", "manager of X").

Nothing grounds the question -> ``Abstain`` with the reason. Plans are validated against the contract by the caller.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from agents.query.mentions import AttrMention, Mentions, RelMention, TypeMention, ValueMention, read
from agents.query.plan import Expr, Filter, Hop, NodePattern, OrderBy, QueryPlan, ReturnItem
from agents.query.vocabulary import (
    DERIVED_VALUE,
    DURATION_ATTR_WORDS,
    ValueHit,
    ValueIndex,
    Vocabulary,
    duration_score,
)

MAX_PATH = 4
DESCRIPTIVE_OPENERS = frozenset({"why", "explain", "describe", "summarize", "summarise", "discuss"})


@dataclass
class Planned:
    plan: QueryPlan
    answer: list[str]  # aliases that form the answer, joined by a space (["first", "last"] for people)
    route: str  # lookup | traverse | aggregate
    confidence: float
    scalar: bool  # a single value is expected (lookup/count/aggregate/superlative)
    notes: list[str] = field(default_factory=list)


@dataclass
class Abstain:
    reason: str
    descriptive: bool = False  # nothing structured grounds it, but it reads like a text question


@dataclass
class Anchor:
    entity: str
    filters: list[Filter]
    start: int
    end: int
    role: str  # display | category | other | key
    designated: bool = False  # a type word next to it names its type


@dataclass
class Step:
    rel: str
    direction: str  # out | in
    target: str


# ------------------------------------------------------------------------------------------------ anchors


def _designators(m: Mentions, start: int, end: int) -> list[TypeMention]:
    """Type words right before a span (articles between allowed) or right after it."""
    out = []
    for t in m.types:
        between = [tok.low for tok in m.tokens[t.end : start]]
        if (t.end <= start and all(w in ("the", "a", "an", "of", "named", "called") for w in between)) or t.start == end:
            out.append(t)
    return out


def _anchors(m: Mentions, vocab: Vocabulary) -> tuple[list[list[Anchor]], set[int]]:
    """Candidate anchors per mention (alternatives), and the indexes of type mentions that designate them."""
    groups: list[list[Anchor]] = []
    designating: set[int] = set()
    for k in m.keys:
        groups.append([Anchor(k.entity, [Filter(prop=k.attr, value=k.value)], k.start, k.end, "key", True)])
        designating |= {i for i, t in enumerate(m.types) if t.start == k.start}
    for v in m.values:
        des = _designators(m, v.start, v.end)
        alts = [_anchor(v, h) for h in v.hits]
        named = {t.entity for t in des}
        if named:
            matching = [a for a in alts if a.entity in named]
            if matching:
                alts = matching
                for a in alts:
                    a.designated = True
                designating |= {i for i, t in enumerate(m.types) if t in des and t.entity in named}
        rank = {"display": 0, "key": 0, "category": 1, "other": 2}
        alts.sort(key=lambda a: (not a.designated, rank.get(a.role, 3), len(a.filters) * -1, a.entity))
        groups.append(alts)
    return groups, designating


def _anchor(v: ValueMention, h: ValueHit) -> Anchor:
    return Anchor(h.entity, [Filter(prop=a, value=val) for a, val in h.values], v.start, v.end, h.role)


# ------------------------------------------------------------------------------------------------ paths


def _paths(vocab: Vocabulary, src: str, dst: str, fixed: dict[str, str]) -> list[list[Step]]:
    """Relationship paths from ``src`` to ``dst`` up to ``MAX_PATH`` hops (self-relationships only in the
    direction ``fixed`` gives them, each relationship edge at most once)."""
    out: list[list[Step]] = []

    def walk(at: str, path: list[Step], used: set[tuple[str, str, str]]) -> None:
        if at == dst:
            out.append(list(path))
        if len(path) >= MAX_PATH:
            return
        for r, direction, other in vocab.neighbours(at):
            edge = (r.name, r.from_entity, r.to_entity)
            if edge in used:
                continue
            if r.from_entity == r.to_entity and r.name in fixed and fixed[r.name] != direction:
                continue
            if r.from_entity == r.to_entity and r.name not in fixed:
                continue  # self-relationships only when the question names them
            path.append(Step(r.name, direction, other))
            used.add(edge)
            walk(other, path, used)
            used.discard(edge)
            path.pop()

    walk(src, [], set())
    return out


def _best_path(
    vocab: Vocabulary, src: str, dst: str, rels: list[RelMention], types: set[str], fixed: dict[str, str]
) -> list[Step] | None:
    paths = _paths(vocab, src, dst, fixed)
    if not paths:
        return None
    wanted = {r.rel for r in rels}

    def score(p: list[Step]) -> tuple[float, int]:
        names = {s.rel for s in p}
        inner = {s.target for s in p[:-1]}
        return (-len(p) + 3 * len(wanted & names) + 0.5 * len(types & inner) - 10 * len(wanted - names), -len(p))

    paths.sort(key=score, reverse=True)
    best = paths[0]
    if wanted and not (wanted & {s.rel for s in best}) and src == dst:
        return None
    return best


# ------------------------------------------------------------------------------------------------ planner


class DeterministicPlanner:
    def __init__(self, vocab: Vocabulary, values: ValueIndex) -> None:
        self.vocab = vocab
        self.values = values

    def plan(self, question: str) -> Planned | Abstain:
        first = question.strip().split(" ", 1)[0].casefold().strip("?,.!:")
        if first in DESCRIPTIVE_OPENERS:
            return Abstain(f"a descriptive question ('{first} ...'): text evidence, not a structured lookup", True)
        state = _Plan(self.vocab, self.values, question)
        try:
            return state.build()
        except _Give as give:
            # nothing names a record: whatever failed structurally, text search may still help
            return Abstain(give.reason, give.descriptive or not any(state.groups))


class _Give(Exception):
    def __init__(self, reason: str, descriptive: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.descriptive = descriptive


class _Plan:
    """One question's planning state."""

    def __init__(self, vocab: Vocabulary, values: ValueIndex, question: str) -> None:
        self.vocab = vocab
        self.q = question
        self.m = read(question, vocab, values)
        self.groups, self.designating = _anchors(self.m, vocab)
        self.notes: list[str] = []

    # -- focus --------------------------------------------------------------------------------------------------
    def _focus(self) -> Any:
        """The first free type / attribute / relationship mention (in question order)."""
        m = self.m
        anchor_spans = [(a.start, a.end) for g in self.groups for a in g[:1]]
        cue_spans = {k for c in m.cues if c.kind in ("most", "least") for k in range(c.start, c.end)}
        items: list[tuple[int, int, Any]] = []
        for i, t in enumerate(m.types):
            if i not in self.designating:
                items.append((t.start, 0, t))
        for a in m.attrs:
            if a.start in cue_spans and a.implicit == "duration":
                continue
            if a.implicit in ("money", "person"):
                continue
            items.append((a.start, 1, a))
        for r in m.rels:
            items.append((r.start, 0, r))
        items = [it for it in items if not any(s <= it[0] < e for s, e in anchor_spans)]
        # "rental rate": an attribute phrase longer than the type word it starts with wins
        longer = {(a.start) for a in m.attrs if a.end - a.start > 1}
        items = [
            it for it in items
            if not (isinstance(it[2], TypeMention) and it[2].start in longer and it[2].end - it[2].start == 1)
        ]  # fmt: skip
        items.sort(key=lambda it: (it[0], it[1]))
        return items

    def build(self) -> Planned:
        m = self.m
        if m.unresolved_quotes and not any(g for g in self.groups):
            raise _Give(f"no record holds the value {m.unresolved_quotes[0]!r}", descriptive=True)
        focus_items = self._focus()
        if not focus_items and not self.groups:
            raise _Give("nothing in the question matches a type, attribute, relationship or value", True)
        anchor = self._pick_anchor(focus_items)
        superlative = m.cue("most", "least")
        if (superlative is not None and anchor is None) or (superlative is not None and self._measure_after(superlative)):
            return self._superlative(focus_items, anchor, superlative)
        return self._direct(focus_items, anchor)

    # -- anchors ------------------------------------------------------------------------------------------------
    def _pick_anchor(self, focus_items: list[Any]) -> Anchor | None:
        if not self.groups:
            return None
        focus_types = self._focus_entities(focus_items)
        best: tuple[float, Anchor] | None = None
        for g in self.groups:
            for rank, a in enumerate(g):
                s = 10.0 if a.designated else 0.0
                s -= rank * 0.1
                if a.role in ("display", "key"):
                    s += 2
                if focus_types:
                    dist = min((self._distance(a.entity, t) for t in focus_types), default=99)
                    s -= dist
                if best is None or s > best[0]:
                    best = (s, a)
        assert best is not None
        return best[1]

    def _focus_entities(self, items: list[Any]) -> list[str]:
        out: list[str] = []
        for _, _, it in items[:1]:
            if isinstance(it, TypeMention):
                out.append(it.entity)
            elif isinstance(it, AttrMention):
                out.extend(e for e, _ in it.candidates)
            elif isinstance(it, RelMention):
                r = next(r for r in self.vocab.rels if r.name == it.rel)
                out.extend([r.from_entity, r.to_entity])
        return out

    def _distance(self, a: str, b: str) -> int:
        if a == b:
            return 0
        paths = _paths(self.vocab, a, b, {})
        return min((len(p) for p in paths), default=99)

    def _other_filters(self, anchor: Anchor | None, entity: str) -> list[Filter]:
        """Filters on ``entity`` from other anchors (values of its own attributes), comparisons, years, flags."""
        out: list[Filter] = []
        for g in self.groups:
            if anchor is not None and any(a is anchor for a in g):
                continue
            a = next((a for a in g if a.entity == entity), None)
            if a is not None:
                out.extend(a.filters)
        info = self.vocab.types[entity]
        for c in self.m.compares:
            attr = self._compare_attr(entity, c.word, c.end)
            if attr is not None:
                out.append(Filter(prop=attr, op=c.op, value=c.value))  # type: ignore[arg-type]
        for _, year in self.m.years:
            date = next((a.name for a in info.attrs.values() if a.type in ("date", "datetime")), None)
            if date is not None:
                out.append(Filter(prop=date, op="startswith", value=str(year)))
        for am in self.m.attrs:
            for (e, attr), _ in am.candidates.items():
                if e == entity and attr in info.attrs and info.attrs[attr].boolean and self._is_predicate(am):
                    out.append(Filter(prop=attr, value=1))
        return out

    def _is_predicate(self, am: AttrMention) -> bool:
        before = self.m.tokens[am.start - 1].low if am.start > 0 else ""
        return before in ("are", "is", "were", "was", "been", "not")

    def _compare_attr(self, entity: str, word: str, end: int) -> str | None:
        info = self.vocab.types[entity]
        unit = self.m.tokens[end].low if end < len(self.m.tokens) else ""
        if word not in ("longer", "shorter") and unit not in ("minutes", "seconds", "milliseconds", "hours"):
            return None
        ranked = [
            (duration_score(a.words), a.name)
            for a in info.attrs.values()
            if a.numeric and set(a.words) & DURATION_ATTR_WORDS
        ]
        return max(ranked)[1] if ranked else None

    # -- direct: lookup, list, count, aggregate -------------------------------------------------------------------
    def _direct(self, items: list[Any], anchor: Anchor | None) -> Planned:
        m = self.m
        count = m.cue("count")
        agg_cue = m.cue("sum", "avg", "min", "max")
        target, attr = self._target(items, anchor)
        if target is None:
            raise _Give("the question names no type or attribute to answer with")
        start_entity = anchor.entity if anchor is not None else target
        steps = self._route(start_entity, target, anchor)
        plan_vars = self._pattern(anchor, start_entity, steps)
        tvar = plan_vars[-1].var
        plan_vars[-1].filters.extend(self._other_filters(anchor, target))
        hops = [Hop(rel_type=s.rel, direction=s.direction, target=v) for s, v in zip(steps, plan_vars[1:], strict=True)]  # type: ignore[arg-type]
        single = (anchor is not None and anchor.role == "key" and anchor.entity == target) or (
            anchor is not None and anchor.role == "display" and anchor.entity == target and not steps
        )
        cite = [v.var for v in plan_vars]  # every node on the path: the evidence chain
        info = self.vocab.types[target]
        # "how many units ... in total": a count cue followed by an attribute is a sum of that attribute
        count_attr = count is not None and attr is not None and self._numeric(target, attr)
        if count is not None and not count_attr:
            plan = QueryPlan(
                kind="count", start=plan_vars[0], hops=hops, cite=cite,
                returns=[ReturnItem(var=tvar, agg="count", alias="count")],
            )  # fmt: skip
            return Planned(plan, ["count"], "aggregate", self._confidence(anchor), True, self.notes)
        if attr is not None and (agg_cue is not None or count_attr) and not single and self._numeric(target, attr):
            kind = agg_cue.kind if agg_cue is not None else "sum"
            plan = QueryPlan(
                kind="aggregate", start=plan_vars[0], hops=hops, cite=cite,
                returns=[self._item(tvar, target, attr, kind, kind)],
            )  # fmt: skip
            return Planned(plan, [kind], "aggregate", self._confidence(anchor), True, self.notes)
        shown = [attr] if attr is not None else info.display
        returns = [self._item(tvar, target, p, None, f"v{i}") for i, p in enumerate(shown)]
        plan = QueryPlan(
            kind="lookup" if not steps else "traverse", start=plan_vars[0], hops=hops, returns=returns, cite=cite
        )
        route = "lookup" if not steps else "traverse"
        return Planned(plan, [r.alias for r in returns], route, self._confidence(anchor), single, self.notes)

    def _target(self, items: list[Any], anchor: Anchor | None) -> tuple[str | None, str | None]:
        """(target entity, attribute or None for the entity's display name) from the first focus item."""
        if not items:
            return (anchor.entity, None) if anchor else (None, None)
        _, _, first = items[0]
        types_named = {t.entity for t in self.m.types}
        if isinstance(first, TypeMention):
            # a type word that is also an attribute of the anchor ("city" of a customer) -> the attribute
            if anchor is not None:
                same = next((am for am in self.m.attrs if am.start == first.start), None)
                if same is not None:
                    own = [a for (e, a) in same.candidates if e == anchor.entity]
                    others = [
                        t for i, t in enumerate(self.m.types) if i not in self.designating and t is not first
                    ]
                    if (
                        own and not others and first.entity != anchor.entity
                        and not self._reachable(anchor.entity, first.entity, 1)
                    ):
                        return anchor.entity, own[0]
            return first.entity, self._attr_of(first.entity, items[1:])
        if isinstance(first, RelMention):
            return self._rel_target(first, anchor), None
        am: AttrMention = first
        return self._attr_owner(am, anchor, types_named)

    def _numeric(self, entity: str, attr: str) -> bool:
        return attr == DERIVED_VALUE or self.vocab.types[entity].attrs[attr].numeric

    def _item(self, var: str, entity: str, attr: str, agg: str | None, alias: str) -> ReturnItem:
        if attr == DERIVED_VALUE:
            return ReturnItem(var=var, expr=self.vocab.derived[entity], agg=agg, alias=alias)  # type: ignore[arg-type]
        return ReturnItem(var=var, prop=attr, agg=agg, alias=alias)  # type: ignore[arg-type]

    def _reachable(self, a: str, b: str, hops: int) -> bool:
        return self._distance(a, b) <= hops

    def _attr_of(self, entity: str, rest: list[Any]) -> str | None:
        """An attribute of ``entity`` mentioned later ("which films ... are longer" is not one; "the
        titles of ..." is)."""
        return None

    def _attr_owner(self, am: AttrMention, anchor: Anchor | None, named: set[str]) -> tuple[str, str]:
        def rank(item: tuple[tuple[str, str], float]) -> tuple[float, ...]:
            (e, _a), score = item
            dist = self._distance(anchor.entity, e) if anchor is not None else 0
            return (score, e in named or (anchor is not None and e == anchor.entity), -dist)

        (entity, attr), _ = max(am.candidates.items(), key=rank)
        return entity, attr

    def _rel_target(self, rm: RelMention, anchor: Anchor | None) -> str:
        r = next(r for r in self.vocab.rels if r.name == rm.rel)
        if anchor is None:
            return r.to_entity if rm.manager else r.from_entity
        if anchor.entity == r.from_entity and r.from_entity != r.to_entity:
            return r.to_entity
        if anchor.entity == r.to_entity and r.from_entity != r.to_entity:
            return r.from_entity
        if r.from_entity == r.to_entity:
            return r.to_entity
        # the anchor is elsewhere: the answer is the end farther along ("support rep of the customer of invoice X")
        d_from, d_to = self._distance(anchor.entity, r.from_entity), self._distance(anchor.entity, r.to_entity)
        return r.to_entity if d_from <= d_to else r.from_entity

    def _self_directions(self, anchor: Anchor | None) -> dict[str, str]:
        fixed: dict[str, str] = {}
        for rm in self.m.rels:
            r = next(r for r in self.vocab.rels if r.name == rm.rel)
            if r.from_entity != r.to_entity:
                continue
            if rm.manager:
                fixed[r.name] = "out"
            elif anchor is not None:
                fixed[r.name] = "out" if anchor.start < rm.start else "in"
            else:
                fixed[r.name] = "out"
        return fixed

    def _route(self, src: str, dst: str, anchor: Anchor | None) -> list[Step]:
        fixed = self._self_directions(anchor)
        named = {t.entity for i, t in enumerate(self.m.types) if i not in self.designating}
        path = _best_path(self.vocab, src, dst, self.m.rels, named, fixed)
        if path is None:
            raise _Give(f"no relationship path from {src} to {dst} in the contract")
        return path

    def _pattern(self, anchor: Anchor | None, start: str, steps: list[Step]) -> list[NodePattern]:
        nodes = [NodePattern(var="n0", label=start, filters=list(anchor.filters) if anchor else [])]
        for i, s in enumerate(steps, 1):
            nodes.append(NodePattern(var=f"n{i}", label=s.target))
        return nodes

    def _confidence(self, anchor: Anchor | None) -> float:
        c = 1.0
        for g in self.groups:
            if len({a.entity for a in g}) > 1 and not g[0].designated:
                c *= 0.8
        return round(c, 3)

    # -- superlatives ----------------------------------------------------------------------------------------------
    def _measure_after(self, cue: Any) -> bool:
        return True

    def _superlative(self, items: list[Any], anchor: Anchor | None, cue: Any) -> Planned:
        m = self.m
        desc = cue.kind == "most"
        if not items:
            raise _Give("a superlative needs something to rank")
        _, _, first = items[0]
        group_attr: str | None = None
        if isinstance(first, TypeMention):
            target = first.entity
        elif isinstance(first, RelMention):
            target = self._rel_target(first, anchor)
        else:
            target, group_attr = self._attr_owner(first, anchor, {t.entity for t in m.types})
        # the measure: the first mention after the cue (else any other mention that is not the focus)
        after = [it for it in items[1:] if it[0] >= cue.start]
        before = [it for it in items[1:] if it[0] < cue.start]
        measure: Any = None
        duration = next((a for a in m.attrs if a.start == cue.start and a.implicit == "duration"), None)
        ordered: list[TypeMention | AttrMention] = [
            it for _, _, it in after if isinstance(it, AttrMention) and self._numeric_candidates(it)
        ]
        ordered += [it for _, _, it in after + before if isinstance(it, TypeMention | AttrMention)]
        measure = ordered[0] if ordered else None
        if duration is not None and (measure is None or not isinstance(measure, TypeMention)):
            measure = duration
        money = next((a for a in m.attrs if a.implicit == "money"), None)
        if measure is None and money is not None:
            measure = money
        if measure is None:
            raise _Give("a superlative without anything to rank by")
        if isinstance(measure, AttrMention):
            top = max(measure.candidates.values())
            own = [
                a for (e, a), sc in sorted(measure.candidates.items(), key=lambda x: -x[1])
                if e == target and sc >= top and self._numeric(e, a)
            ]  # fmt: skip
            if own and group_attr is None:
                # order the target's own rows by its attribute
                start = anchor.entity if anchor is not None else target
                steps = self._route(start, target, anchor) if anchor is not None else []
                nodes = self._pattern(anchor, start, steps)
                nodes[-1].filters.extend(self._other_filters(anchor, target))
                hops = [Hop(rel_type=s.rel, direction=s.direction, target=v) for s, v in zip(steps, nodes[1:], strict=True)]  # type: ignore[arg-type]
                tv = nodes[-1].var
                shown = self.vocab.types[target].display
                returns = [ReturnItem(var=tv, prop=p, alias=f"v{i}") for i, p in enumerate(shown)]
                plan = QueryPlan(
                    kind="superlative", start=nodes[0], hops=hops, returns=returns, limit=1,
                    order_by=OrderBy(var=tv, prop=own[0], desc=desc), cite=[n.var for n in nodes],
                )  # fmt: skip
                return Planned(plan, [r.alias for r in returns], "aggregate", self._confidence(anchor), True, self.notes)
            m_entity, m_attr = self._measure_owner(measure, target)
            agg_item = self._item("", m_entity, m_attr, "sum", "score")
        else:
            m_entity = measure.entity if isinstance(measure, TypeMention) else target
            m_attr = None
            agg_item = ReturnItem(var="", agg="count", alias="score")
        steps = self._route(target, m_entity, None) if m_entity != target else []
        nodes = [NodePattern(var="n0", label=target, filters=self._other_filters(anchor, target))]
        if anchor is not None and anchor.entity == target:
            nodes[0].filters.extend(anchor.filters)
        for i, s in enumerate(steps, 1):
            nodes.append(NodePattern(var=f"n{i}", label=s.target))
        agg_item.var = nodes[-1].var
        if anchor is not None and anchor.entity != target:
            # "the most Comedy films": the anchor restricts what is counted, reached from the measured node
            extra = self._route(m_entity, anchor.entity, None) if anchor.entity != m_entity else []
            if not extra:
                nodes[-1].filters.extend(anchor.filters)
            for s in extra:
                nodes.append(NodePattern(var=f"n{len(nodes)}", label=s.target))
            if extra:
                nodes[-1].filters.extend(anchor.filters)
            steps = steps + extra
        hops = [Hop(rel_type=s.rel, direction=s.direction, target=v) for s, v in zip(steps, nodes[1:], strict=True)]  # type: ignore[arg-type]
        if group_attr is not None:
            returns = [ReturnItem(var="n0", prop=group_attr, alias="v0"), agg_item]
            group_by: list[str] = []
        else:
            shown = self.vocab.types[target].display
            returns = [*(ReturnItem(var="n0", prop=p, alias=f"v{i}") for i, p in enumerate(shown)), agg_item]
            group_by = ["n0"]
        plan = QueryPlan(
            kind="superlative", start=nodes[0], hops=hops, returns=returns, group_by=group_by, limit=1,
            order_by=OrderBy(alias="score", desc=desc), cite=[n.var for n in nodes],
        )  # fmt: skip
        answer = [r.alias for r in returns if r.agg is None]
        return Planned(plan, answer, "aggregate", self._confidence(anchor), True, self.notes)

    def _numeric_candidates(self, am: AttrMention) -> bool:
        return any(self._numeric(e, a) for e, a in am.candidates)

    def _measure_owner(self, measure: AttrMention, target: str) -> tuple[str, str]:
        def rank(item: tuple[tuple[str, str], float]) -> tuple[float, float]:
            (e, _), score = item
            return (score, -self._distance(target, e))

        numeric = {k: v for k, v in measure.candidates.items() if self._numeric(*k)} or measure.candidates
        (e, a), _ = max(numeric.items(), key=rank)
        return e, a


__all__ = ["Abstain", "DeterministicPlanner", "Expr", "Planned"]
