"""Superlatives: "the longest track on X", "which genre has the most tracks", "top 3 customers by total spent",
"the most recent invoice", "which country has the most customers".

Two shapes: rows of one type ordered by one of its own fields (longest, oldest, highest price), or groups (nodes
of a type, or values of a field) ordered by a count or a sum/average over related rows. The plan asks for a few
more rows than the question wants so that ties at the cut are kept (``Planned.ties``).
"""

from __future__ import annotations

from esc.agents.query.assemble import AMBIGUOUS, Job, hops_of, route
from esc.agents.query.build import attach_extras, choose_readings, item
from esc.agents.query.interpret import Decline, Focus, Planned
from esc.agents.query.paths import Step
from esc.agents.query.phrases import Element
from esc.agents.query.plan import NodePattern, OrderBy, QueryPlan, ReturnItem
from esc.agents.query.reading import OpMention, SchemaMention
from esc.agents.query.vocabulary import AttrInfo
from esc.agents.query.words import DURATION_WORDS, MONEY_WORDS, QUANTITY_WORDS

MEASURE_HINT_WORDS = DURATION_WORDS | frozenset({"price", "cost", "amount"})

TIE_EXTRA = 10
"""Rows fetched past the cut to see whether the last ones tie."""


def superlative(job: Job, op: OpMention) -> Planned:
    if op.hint == "judged":
        job.penalize(0.75, f"'{job.r.text(op.start, op.end)}' read as the highest value")
        op.hint = None
    named = _named_by_cue(job, op)
    if named is not None:
        return named
    free = job.free()
    desc = op.kind in ("most", "recent")
    n = op.n or 1
    before = [m for m in free if m.start < op.start]
    after = [m for m in free if m.start >= op.end]
    ranked_m: SchemaMention | None = None
    out_attr: tuple[str, str] | None = None
    own_measure: AttrInfo | None = None
    # "the tail number of the oldest plane": the type right after the cue is ranked by its own field
    if after and after[0].of("type") and (op.hint is not None or op.kind == "recent"):
        f = job.focus_from(after[0], prefer_types=True)
        own_measure = _hinted_attr(job, f.entity, op.hint or "time")
        if own_measure is not None:
            ranked_m = after[0]
            for m in before:
                attrs = {e: lk for e, lk in m.of("attr").items() if e.entity == f.entity}
                if attrs:
                    e, _lk = job._pick_attr(attrs, m)
                    out_attr = (e.entity, e.name)
                    break
    if ranked_m is None:
        ranked_m = before[0] if before else (after[0] if after else None)
    if ranked_m is None:
        if job.anchors and own_measure is None:
            raise Decline("a superlative needs something to rank")
        raise Decline("the question names nothing to rank")
    focus = job.focus_from(ranked_m, prefer_types=True)
    job.check_strays(focus, False)
    job.used_schema.add(ranked_m.start)
    rest = [m for m in job.free() if m.start != ranked_m.start]
    rest.sort(key=lambda m: (m.start < op.start, m.start))  # after the cue first
    if own_measure is None and (op.kind == "recent" or op.hint == "time"):
        own_measure = _named_time(job, focus, rest)
    if own_measure is None:
        own_measure = _own_measure(job, focus, rest, op)
    if own_measure is not None:
        return _ordered(job, focus, own_measure, desc, n, out_attr)
    return _grouped(job, focus, rest, op, desc, n)


def _named_time(job: Job, focus: Focus, rest: list[SchemaMention]) -> AttrInfo | None:
    """"Which contact was updated most recently": a date field of the ranked type the question names, or the one
    a verb of the question names ("updated" -> updated_at, "delivered" -> DeliveredAt)."""
    for m in rest:
        for e, _ in sorted(m.of("attr").items(), key=lambda kv: -kv[1].score):
            a = job.vocab.types[e.entity].attrs.get(e.name)
            if e.entity == focus.entity and a is not None and a.temporal:
                job.used_schema.add(m.start)
                return a
    return verb_date(job, focus.entity)


def verb_date(job: Job, entity: str) -> AttrInfo | None:
    """The one date field of ``entity`` an inflected word of the question names ("delivered", "registered",
    "updated"), the word being no part of a type's name; its mention, if any, is taken."""
    from esc.agents.query.anchors import date_attrs, verb_names

    r = job.r
    typed = {k for m in r.schema if m.of("type") and not m.of("attr") for k in m.tokens()}
    words = [t for t in r.tokens if t.base != t.low and t.index not in typed and len(t.low) > 3]
    hits = [(t, a) for a in date_attrs(job.vocab, entity) for t in words if verb_names(t.low, a)]
    if len({a.name for _t, a in hits}) != 1:
        return None
    t, a = hits[0]
    for m in r.schema:
        if m.start <= t.index < m.end:
            job.used_schema.add(m.start)
    r.used.add(t.index)
    if t.text in job.stray_nouns:
        job.stray_nouns.remove(t.text)
    return a


def _named_by_cue(job: Job, op: OpMention) -> Planned | None:
    """"When did X last log in", "when was X last seen": the cue word and the words after it spell a date field's
    name ("last log in" = last_login, "last seen" = last_seen): that field of the record the question names."""
    r = job.r
    if op.kind != "recent" or not job.anchors or r.low(0) != "when":
        return None
    cue = "".join(r.low(k) for k in range(op.start, op.end))
    for size in (2, 1):
        span = range(op.end, op.end + size)
        if op.end + size > len(r.tokens) or any(k in r.used and k not in r.unconsumed for k in span):
            continue
        glued = cue + "".join(r.low(k) for k in span)
        cands = [(job._dist_to_anchors(info.name), info.name, a.name) for info in job.vocab.types.values()
                 for a in info.attrs.values() if a.temporal and "".join(a.words) == glued]  # fmt: skip
        if not cands:
            continue
        cands.sort()
        if len(cands) > 1 and cands[1][0] == cands[0][0]:
            job.penalize(AMBIGUOUS, f"'{glued}' is a field of several types")
        _d, entity, attr = cands[0]
        for k in span:
            r.used.add(k)
            if r.tokens[k].text in job.stray_nouns:
                job.stray_nouns.remove(r.tokens[k].text)
            for m in r.schema:
                if m.start <= k < m.end:
                    job.used_schema.add(m.start)
        from esc.agents.query.build import build_plan

        return build_plan(job, Focus(entity, attr, 1.0, op.start, Element("attr", entity, attr)), None)
    return None


def extreme_value(job: Job, op: OpMention) -> Planned | None:
    """"What is the largest single invoice total?", "the highest unit price among Seafood products", "the
    shortest track length in milliseconds": a superlative whose noun phrase ends in a field (not a type) asks
    for the field's extreme value, a max/min aggregate, not for the record that has it."""
    r = job.r
    if op.kind not in ("most", "least") or op.n is not None:
        return None
    if r.low(0) not in ("what", "what's", "whats") and not (r.low(0) == "the" or r.low(0) in ("give", "tell", "show")):
        return None
    phrase: list[SchemaMention] = []
    k = op.end
    for m in sorted(job.free(), key=lambda x: x.start):
        if m.start < op.end:
            continue
        gap = [r.low(i) for i in range(k, m.start)]
        if any(w not in ("single", "one", "individual", "the", "a") for w in gap):
            break
        phrase.append(m)
        k = m.end
    head_word = r.low(k) if k < len(r.tokens) else ""
    if phrase and phrase[-1].of("attr") and not (len(phrase) == 1 and phrase[0].of("type") and
                                                 max(lk.score for lk in phrase[0].of("type").values()) >= 1.0):
        head = phrase[-1]
        owners = {e.entity for m in phrase[:-1] for e in m.of("type")}
        attrs = {e: lk for e, lk in head.of("attr").items() if _numeric(job, e) and (not owners or e.entity in owners)}
        if not attrs:
            return None
        el, lk = job._pick_attr(attrs, head)
        focus = Focus(el.entity, el.name, lk.score, head.start, el)
    elif phrase and phrase[-1].of("type") and head_word in MEASURE_HINT_WORDS:
        f = job.focus_from(phrase[-1], prefer_types=True)
        a = _hinted_attr(job, f.entity, "duration" if head_word in DURATION_WORDS else "money")
        if a is None:
            return None
        focus = Focus(f.entity, a.name, 0.95, phrase[-1].start)
        r.used.add(k)
    else:
        return None
    for m in phrase:
        job.used_schema.add(m.start)
    from esc.agents.query.build import build_plan

    job.check_strays(focus, False)
    if focus.score < 1.0:
        job.penalize(focus.score, "measure reading")
    return build_plan(job, focus, "max" if op.kind == "most" else "min")


def _hinted_attr(job: Job, entity: str, hint: str) -> AttrInfo | None:
    """The entity's own field a superlative word implies: longest -> a length, latest/oldest -> a date (or year),
    cheapest -> a price, tallest -> a height."""
    info = job.vocab.types[entity]
    if hint == "birth":  # youngest / oldest person: the birth date
        born = [a for a in info.attrs.values() if a.temporal and ({"birth", "born", "dob"} & set(a.words))]
        if born:
            return born[0]
        hint = "time"
    if hint == "time":
        from esc.agents.query.anchors import date_attrs

        dated = date_attrs(job.vocab, entity)
        if dated:
            return verb_date(job, entity) or dated[0]
        years = [a for a in info.attrs.values() if a.semantic == "year" or a.words == ["year"]]
        return years[0] if years else None
    if hint == "duration":
        from esc.agents.query.measures import _duration_fit

        ranked = sorted(((_duration_fit(a), a) for a in info.attrs.values() if a.measure), key=lambda x: -x[0])
        return ranked[0][1] if ranked and ranked[0][0] > 0 else None
    if hint == "money":
        money = [a for a in info.attrs.values() if a.money and a.measure]
        return money[0] if len(money) == 1 else None
    if hint == "size":
        # "the smallest payment": a type with one measure is measured by it
        measures = [a for a in info.attrs.values() if a.measure]
        money = [a for a in measures if a.money]
        return money[0] if len(money) == 1 else measures[0] if len(measures) == 1 else None
    links = job.i.phrases.lookup((hint,))
    cands = [(lk.score, info.attrs[e.name]) for e, lk in links.items() if e.kind == "attr" and e.entity == entity]
    cands = [c for c in cands if c[1].numeric]
    return max(cands, key=lambda c: c[0])[1] if cands else None


def _own_measure(job: Job, focus: Focus, rest: list[SchemaMention], op: OpMention) -> AttrInfo | None:
    """A numeric field of the ranked type named after the cue ("the lowest unit price", "the highest
    altitude"), or one the cue implies when nothing else is named ("the longest track")."""
    if focus.attr is not None:
        return None  # a field is ranked: groups of its values
    for m in rest:
        attrs = {e: lk for e, lk in m.of("attr").items() if e.entity == focus.entity and _numeric(job, e)}
        if attrs:
            e, lk = job._pick_attr(attrs, m)
            job.used_schema.add(m.start)
            if lk.score < 1.0:
                job.penalize(lk.score, "measure reading")
            return job.vocab.types[e.entity].attrs[e.name]
        if m.of("type") or m.of("attr") or m.of("rel"):
            return None  # something else is measured: a group
    words = {t.low for t in job.r.tokens}
    if op.hint is not None and not (words & MONEY_WORDS) and not (words & QUANTITY_WORDS):
        return _hinted_attr(job, focus.entity, op.hint)
    return None


def _numeric(job: Job, e: Element) -> bool:
    a = job.vocab.types[e.entity].attrs.get(e.name)
    return a is not None and (a.numeric or a.temporal)


def _ordered(job: Job, focus: Focus, measure: AttrInfo, desc: bool, n: int, out: tuple[str, str] | None) -> Planned:
    from esc.agents.query.build import chain

    target = focus.entity
    job.anchors = choose_readings(job, target)
    nodes, steps, tindex = chain(job, target, job.anchors)
    attach_extras(job, nodes, tindex)
    tv = nodes[tindex].var
    info = job.vocab.types[target]
    shown = [out[1]] if out is not None else info.display
    if out is None and measure.temporal and job.r.low(0) == "when":
        shown = [measure.name]  # "when was the most recent ticket opened": the date is the answer
    if out is None and not measure.temporal and all(info.attrs[p].identifier for p in shown if p in info.attrs):
        shown = [measure.name]  # "the smallest payment": a type named by its id only is answered by the measure
    returns = [ReturnItem(var=tv, prop=p, alias=f"v{i}") for i, p in enumerate(shown)]
    returns.append(ReturnItem(var=tv, prop=measure.name, alias="score"))
    plan = QueryPlan(kind="superlative", start=nodes[0], hops=hops_of(steps, nodes), returns=returns,
                     limit=n + TIE_EXTRA, order_by=OrderBy(var=tv, prop=measure.name, desc=desc),
                     cite=[x.var for x in nodes])  # fmt: skip
    return Planned(plan, [x.alias for x in returns if x.alias != "score"], "aggregate", round(job.conf, 3), n == 1,
                   job.notes, ties="score", top=n, unmatched=job.unmatched())  # fmt: skip


def _grouped(job: Job, focus: Focus, rest: list[SchemaMention], op: OpMention, desc: bool, n: int) -> Planned:
    """Groups of the ranked type (or of a field's values) ordered by a count of, or a sum over, related rows."""
    agg, m_entity, m_attr = _group_measure(job, focus, rest, op)
    target = focus.entity
    steps: list[Step] = route(job, target, m_entity, prefer_many=True) if m_entity != target else []
    nodes = [NodePattern(var="n0", label=target)]
    for i, s in enumerate(steps, 1):
        nodes.append(NodePattern(var=f"n{i}", label=s.target))
    mindex = len(nodes) - 1
    anchors = choose_readings(job, m_entity)
    job.anchors = anchors
    for a in anchors:
        on = [k for k, x in enumerate(nodes) if x.label == a.entity]
        if on:
            nodes[on[0]].filters.extend(a.filters)
            continue
        extra = route(job, nodes[-1].label, a.entity)
        for s in extra:
            nodes.append(NodePattern(var=f"n{len(nodes)}", label=s.target))
        nodes[-1].filters.extend(a.filters)
        steps = steps + extra
    attach_extras(job, nodes, mindex)
    score = item(job, nodes[mindex].var, m_entity, m_attr, agg, "score")
    if focus.attr is not None:
        returns = [ReturnItem(var="n0", prop=focus.attr, alias="v0"), score]
        group_by: list[str] = []
    else:
        shown = job.vocab.types[target].display
        returns = [*(ReturnItem(var="n0", prop=p, alias=f"v{i}") for i, p in enumerate(shown)), score]
        group_by = ["n0"]
    plan = QueryPlan(kind="superlative", start=nodes[0], hops=hops_of(steps, nodes), returns=returns,
                     group_by=group_by, limit=n + TIE_EXTRA, order_by=OrderBy(alias="score", desc=desc),
                     cite=[x.var for x in nodes])  # fmt: skip
    answer = [x.alias for x in returns if x.agg is None]
    return Planned(plan, answer, "aggregate", round(job.conf, 3), n == 1, job.notes, ties="score", top=n,
                   unmatched=job.unmatched())  # fmt: skip


def _group_measure(job: Job, focus: Focus, rest: list[SchemaMention], op: OpMention) -> tuple[str, str, str | None]:
    """(aggregate, entity, attribute or None): what each group is measured by."""
    r = job.r
    avg = r.op("avg") is not None
    derived = job.derived_measure()
    if derived is not None:
        return ("avg" if avg else "sum"), derived.entity, derived.attr
    for m in rest:
        attrs = {e: lk for e, lk in m.of("attr").items() if _numeric(job, e) and job.vocab.types[e.entity].attrs[e.name].measure}
        types = m.of("type")
        if attrs and (not types or max(lk.score for lk in attrs.values()) > max(lk.score for lk in types.values())):
            e, lk = job._pick_attr(attrs, m)
            if lk.score < 1.0:
                job.penalize(lk.score, "measure reading")
            job.used_schema.add(m.start)
            return ("avg" if avg else "sum"), e.entity, e.name
        if types:
            f = job.focus_from(m, prefer_types=True)
            if f.entity == focus.entity and focus.attr is None:
                continue
            if f.score < 1.0:
                job.penalize(f.score, "counted type reading")
            job.used_schema.add(m.start)
            if f.attr is not None:
                return ("avg" if avg else "sum"), f.entity, f.attr
            return "count", f.entity, None
        rels = m.of("rel")
        if rels:
            el = max(rels.items(), key=lambda kv: kv[1].score)[0]
            other = el.entity if el.target == focus.entity else el.target
            job.used_schema.add(m.start)
            return "count", other, None
    words = {t.low for t in r.tokens} | {t.base for t in r.tokens}
    if words & MONEY_WORDS or r.op("sum") is not None:
        money = job._money_measure([])
        if money is not None:
            return ("avg" if avg else "sum"), money.entity, money.attr
    if words & QUANTITY_WORDS:
        for info in job.vocab.types.values():
            for a in info.attrs.values():
                if a.measure and ("quantity" in a.words or a.words == ["qty"]):
                    job.penalize(0.85, "quantity field inferred")
                    return "sum", info.name, a.name
    if focus.attr is not None:
        return "count", focus.entity, None  # "which country has the most customers" with Country a field
    raise Decline("a superlative without anything to rank by")
