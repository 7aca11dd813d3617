"""Query-scoped extension for computed expressions (ESC paper §3.4): a question that needs an attribute the contract
lacks but that is an expression over two fields of one entity ("the difference between the budget and the spend
of project Alder", "how many days between the start date and the end date of ...", "the ratio of A to B",
"A per B", "A minus B", "the sum of A and B") gets it derived for that question only.

1. **Reading** (:func:`read_expression`, no LLM): an operator phrase of general English (``OPERATORS``,
   ``DURATION_HEADS``, ``INFIX``) with two operands, each read as an attribute through the query agent's phrase
   index (the same phrases the planner uses: names, abbreviations, WordNet); a question with no such phrase, or an
   operand that names no attribute ("between 2010 and 2012"), is not an expression and goes on to the planner.
2. **Check** against the contract (:func:`check`): both attributes of one entity type; both numbers (and neither a
   key, a reference or a flag) for ``sub`` / ``add`` / ``mul`` / ``div``, both times for ``duration``. Anything
   else is declined with the reason (an honest abstention, not a guess).
3. **Entity**: the question with the expression replaced by its first operand ("What is the budget of project
   Alder?") is planned by the deterministic planner; its lookup plan, returning both fields instead of one, is
   validated and run read-only, so the filters, names and citations are the planner's own.
4. **Evaluate** (:func:`evaluate`): the expression per matched entity; one value is the answer (rows that give
   different values: declined as ambiguous). The answer cites the records read and carries ``extension:
   {"scope": "query", "added": {...expression...}, "derived_from": "expression", "reverted": true}``; the derived
   attribute is logged; nothing is stored and the contract is unchanged.

With an LLM (``agents.query.llm_planner``), the model may propose the expression as ``{"derive": {"op", "fields":
[two field ids], "plan": <a plan for the entity>}}``: :func:`from_catalog` checks the ids against the closed-world
catalog (an id outside it is rejected) and the same :func:`check` and :func:`evaluate` run.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any, Literal

from esc.agents.query.answer import Answer, citations_of, round_2
from esc.agents.query.phrases import MAX_PHRASE, Element
from esc.agents.query.plan import PlanRow, QueryPlan, ReturnItem
from esc.agents.query.validate import problems
from esc.agents.query.words import Token, tokenize

log = logging.getLogger(__name__)

Op = Literal["sub", "add", "mul", "div", "duration"]
OPERATORS: dict[str, Op] = {"difference": "sub", "gap": "sub", "ratio": "div", "sum": "add", "total": "add",
                            "product": "mul"}  # fmt: skip
"""Head nouns of "<head> between/of A and/to B"."""
DURATION_HEADS = {"time": 1.0, "days": 1.0, "day": 1.0, "hours": 1 / 24, "minutes": 1 / 1440, "weeks": 7.0,
                  "months": 30.436875, "years": 365.2425, "long": 1.0, "duration": 1.0, "elapsed": 1.0}  # fmt: skip
"""Words that ask for the time between two time fields, with the unit in days ("how many hours between ...")."""
INFIX: dict[tuple[str, ...], Op] = {("minus",): "sub", ("plus",): "add", ("times",): "mul", ("per",): "div",
                                    ("divided", "by"): "div", ("multiplied", "by"): "mul"}  # fmt: skip
SKIP = {"the", "a", "an", "its", "their", "his", "her", "s", "'s", "value", "values"}
ASKING = {"what", "whats", "which", "how", "many", "much", "long", "is", "was", "are", "were", "the", "did", "does",
          "do", "it", "take", "took", "there", "pass", "passed", "elapse", "elapsed", "tell", "me", "give"}  # fmt: skip
SYMBOL = {"sub": "-", "add": "+", "mul": "*", "div": "/", "duration": "->"}
STRONG = 0.9
CONFIDENCE = 0.95
"""A computed value is as sure as the lookup it came from, times this (the operator reading)."""


@dataclass(frozen=True)
class Operand:
    links: dict[Element, float]  # attribute -> phrase score
    start: int  # token span of the phrase
    end: int
    strong: bool = True  # named well (score >= STRONG) and not also a type's name (a plural that names an entity type)


@dataclass(frozen=True)
class Expression:
    op: Op
    entity: str
    left: str  # attribute names
    right: str
    unit_days: float = 1.0  # duration: the unit asked for, in days
    span: tuple[int, int] = (0, 0)  # characters of the question the expression takes
    left_text: str = ""  # the first operand as written
    score: float = 1.0
    strong: bool = True  # both operands plainly named (see Operand)

    def name(self) -> str:
        return f"{self.left} {SYMBOL[self.op]} {self.right}"


class Declined(Exception):
    """An expression was read but the contract does not allow it (the reason is the abstention's). ``strong``: both
    operands named fields plainly, so the question is declined; else the planner reads it as it would anyway."""

    def __init__(self, reason: str, strong: bool = True) -> None:
        super().__init__(reason)
        self.strong = strong


# ------------------------------------------------------------------------------------------------ reading


def _operand(g: Any, tokens: list[Token], start: int, end: int) -> Operand | None:
    found = g.phrases.lookup(tuple(t.base for t in tokens[start:end]))
    links = {e: lk.score for e, lk in found.items() if e.kind == "attr"}
    if not links:
        return None
    strong = max(links.values()) >= STRONG and not any(e.kind == "type" for e in found)
    return Operand(links, start, end, strong)


def _forward(g: Any, tokens: list[Token], i: int, stop: int) -> Operand | None:
    """The longest attribute phrase from token ``i`` on (leading articles and type names skipped)."""
    while i < stop:
        if tokens[i].low in SKIP:
            i += 1
            continue
        for n in range(min(MAX_PHRASE, stop - i), 0, -1):
            found = _operand(g, tokens, i, i + n)
            if found is not None:
                return found
        if any(e.kind == "type" for e in g.phrases.lookup((tokens[i].base,))):
            i += 1  # "the project's budget": a type word before the attribute
            continue
        return None
    return None


def _backward(g: Any, tokens: list[Token], end: int) -> Operand | None:
    """The longest attribute phrase ending just before token ``end``."""
    for n in range(min(MAX_PHRASE, end), 0, -1):
        found = _operand(g, tokens, end - n, end)
        if found is not None:
            return found
    return None


def _pair(g: Any, tokens: list[Token], a: Operand, b: Operand, op: Op, span: tuple[int, int], question: str,
          unit: float = 1.0) -> Expression:  # fmt: skip
    strong = a.strong and b.strong
    common = sorted(set(e.entity for e in a.links) & set(e.entity for e in b.links))
    if not common:
        raise Declined(f"'{_text(question, tokens, a)}' and '{_text(question, tokens, b)}' are not fields of one "
                       "entity type; an expression needs both of one", strong)  # fmt: skip
    named = {e.entity for t in tokens for e in g.phrases.lookup((t.base,)) if e.kind == "type"}

    def best(links: dict[Element, float], entity: str) -> tuple[str, float]:
        el, score = max(((e, s) for e, s in links.items() if e.entity == entity), key=lambda x: (x[1], x[0].name))
        return el.name, score

    def rank(entity: str) -> tuple[bool, float, str]:
        return (entity in named, best(a.links, entity)[1] + best(b.links, entity)[1], entity)

    entity = max(common, key=rank)
    (left, sa), (right, sb) = best(a.links, entity), best(b.links, entity)
    if left == right:
        raise Declined(f"both operands name {entity}.{left}", strong)
    return Expression(op, entity, left, right, unit, span, _text(question, tokens, a), min(sa, sb), strong)


def _text(question: str, tokens: list[Token], o: Operand) -> str:
    return question[tokens[o.start].start : tokens[o.end - 1].end]


def read_expression(question: str, g: Any) -> Expression | None:
    """The expression the question asks for, or None (not an expression question). Raises :class:`Declined` when
    an expression is read over fields that cannot form it."""
    tokens = tokenize(question)
    lows = [t.low for t in tokens]
    for i, low in enumerate(lows):
        duration = DURATION_HEADS.get(low)
        op: Op | None = OPERATORS.get(low)
        if op is None and duration is None:
            continue
        reach = 4 if duration is not None else 1  # "how many days passed between", "the difference between"
        for j in range(i + 1, min(len(tokens), i + 1 + reach)):
            if lows[j] not in ("between", "of", "from"):
                continue
            sep = "to" if lows[j] == "from" or op == "div" else "and"
            k = next((x for x in range(j + 2, len(tokens)) if lows[x] in (sep, "and")), None)
            if k is None:
                break
            a, b = _forward(g, tokens, j + 1, k), _forward(g, tokens, k + 1, len(tokens))
            if a is None or b is None:
                break
            kind: Op = op if op is not None and not (duration is not None and lows[j] == "from") else "duration"
            if op == "sub" and _all_temporal(g, a, b):
                kind = "duration"
            span = (tokens[i].start, tokens[b.end - 1].end)
            return _pair(g, tokens, a, b, kind, span, question, duration or 1.0)
    for i in range(1, len(tokens) - 1):
        for words, op in INFIX.items():
            if tuple(lows[i : i + len(words)]) != words:
                continue
            a, b = _backward(g, tokens, i), _forward(g, tokens, i + len(words), len(tokens))
            if a is not None and b is not None and a.strong and b.strong:  # "tracks per genre": a type, no field
                span = (tokens[a.start].start, tokens[b.end - 1].end)
                return _pair(g, tokens, a, b, op, span, question)
    return None


def _all_temporal(g: Any, a: Operand, b: Operand) -> bool:
    types = g.vocab.types
    return all(types[e.entity].attrs[e.name].temporal for o in (a, b) for e in o.links if e.entity in types)


# ------------------------------------------------------------------------------------------------ checking


def check(expr: Expression, g: Any) -> None:
    """Raise :class:`Declined` unless the contract allows ``expr`` (above)."""
    info = g.vocab.types.get(expr.entity)
    if info is None or expr.left not in info.attrs or expr.right not in info.attrs:
        raise Declined(f"{expr.entity} has no fields {expr.left!r} and {expr.right!r}")
    a, b = info.attrs[expr.left], info.attrs[expr.right]
    if expr.op == "duration":
        if not (a.temporal and b.temporal):
            raise Declined(f"a duration needs two time fields; {expr.entity}.{expr.left} is {a.type} and "
                           f"{expr.right} is {b.type}", expr.strong)  # fmt: skip
        return
    for x in (a, b):
        if not x.numeric or x.identifier or x.reference or x.boolean:
            raise Declined(f"{expr.entity}.{x.name} is not a quantity ({x.type}); '{expr.name()}' cannot be computed",
                           expr.strong)


def from_catalog(contract: Any, g: Any, op: str, field_ids: list[str], label: str) -> Expression:
    """An LLM-proposed expression (``op`` + two catalog field ids) on type ``label``: ids outside the catalog, or
    not attributes of that type, are rejected; then :func:`check`."""
    if op not in SYMBOL or len(field_ids) != 2:
        raise Declined(f"an expression is one of {sorted(SYMBOL)} over two field ids")
    entity = contract.entity(label)
    if entity is None:
        raise Declined(f"unknown entity type {label!r}")
    names = {a.field_id: a.name for a in entity.attributes}
    catalog = {f.id for s in contract.sources.values() for f in s.fields}
    for fid in field_ids:
        if fid not in catalog:
            raise Declined(f"field id {fid!r} is not in the field catalog")
        if fid not in names:
            raise Declined(f"field {fid!r} is not an attribute of {label}")
    expr = Expression(op, label, names[field_ids[0]], names[field_ids[1]])  # type: ignore[arg-type]
    check(expr, g)
    return expr


# ------------------------------------------------------------------------------------------------ evaluating


def _time(v: Any) -> datetime | None:
    if isinstance(v, datetime):
        return v
    if isinstance(v, date):
        return datetime(v.year, v.month, v.day)
    try:
        return datetime.fromisoformat(str(v).strip().replace("Z", "+00:00"))
    except ValueError:
        return None


def _value(expr: Expression, a: Any, b: Any) -> float | None:
    if a is None or b is None:
        return None
    if expr.op == "duration":
        ta, tb = _time(a), _time(b)
        if ta is None or tb is None or (ta.tzinfo is None) != (tb.tzinfo is None):
            return None
        return (tb - ta).total_seconds() / 86400 / expr.unit_days
    try:
        x, y = float(a), float(b)
    except (TypeError, ValueError):
        return None
    if expr.op == "div":
        return None if y == 0 else x / y
    return {"sub": x - y, "add": x + y, "mul": x * y}[expr.op]


def scoped_plan(plan: QueryPlan, expr: Expression) -> QueryPlan | None:
    """``plan`` returning both operands of the node of ``expr.entity`` it returns (None when it returns none)."""
    labels = {n.var: n.label for n in plan.vars()}
    var = next((r.var for r in plan.returns if r.agg is None and labels.get(r.var) == expr.entity), None)
    if var is None or any(r.agg for r in plan.returns):
        return None
    out = plan.model_copy(deep=True)
    out.returns = [ReturnItem(var=var, prop=expr.left, alias="left"), ReturnItem(var=var, prop=expr.right, alias="right")]
    out.cite = sorted({var, *plan.cite})
    out.order_by, out.group_by = None, []
    return out


def evaluate(expr: Expression, rows: list[PlanRow], confidence: float, version: int) -> Answer:
    values = [_value(expr, r.values.get("left"), r.values.get("right")) for r in rows]
    known = sorted({round_2(v) if abs(v) >= 0.01 else v for v in values if v is not None})
    if not rows:
        return Answer.abstain(f"no {expr.entity} matches the question", version)
    if not known:
        return Answer.abstain(f"'{expr.name()}' has no value for the {expr.entity} asked about (a field is empty "
                              "or unreadable)", version)  # fmt: skip
    if len(known) > 1:
        return Answer.abstain(f"the question matches {len(rows)} {expr.entity} records with different values of "
                              f"'{expr.name()}'", version)  # fmt: skip
    value: Any = known[0]
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    added: dict[str, Any] = {"type": expr.entity, "attribute": expr.name(), "op": expr.op,
                             "fields": [expr.left, expr.right]}  # fmt: skip
    if expr.op == "duration":
        added["unit_days"] = expr.unit_days
    extension = {"scope": "query", "derived_from": "expression", "added": added, "reverted": True}
    log.info("query-scoped extension: %s.(%s) derived for one question, reverted", expr.entity, expr.name())
    conf = round(confidence * CONFIDENCE * min(1.0, expr.score), 3)
    return Answer(answer=value, citations=citations_of(rows), route="lookup", confidence=conf,
                  contract_version=version, extension=extension)  # fmt: skip


def sub_question(question: str, expr: Expression) -> str:
    """The question with the expression replaced by its first operand (what the planner finds the entity by)."""
    before, after = question[: expr.span[0]], question[expr.span[1] :]
    if all(t.low in ASKING for t in tokenize(before)):
        before = "What is the "
    return f"{before}{expr.left_text}{after}"


def answer(question: str, g: Any, graph: Any, interpreter: Any) -> Answer | None:
    """The computed answer to ``question``, an abstention saying why it cannot be computed, or None when the
    question asks for no expression. ``interpreter``: the planner (``Interpreter.plan``)."""
    try:
        expr = read_expression(question, g)
        if expr is None:
            return None
        check(expr, g)
    except Declined as exc:
        return Answer.abstain(f"query-scoped extension declined: {exc}", g.version) if exc.strong else None
    if graph is None:
        return Answer.abstain("no graph store configured", g.version)
    planned = interpreter(sub_question(question, expr))
    plan = scoped_plan(planned.plan, expr) if hasattr(planned, "plan") else None
    if plan is None or problems(plan, g.contract):
        reason = f"query-scoped extension: found no single {expr.entity} to compute '{expr.name()}' for"
        return Answer.abstain(reason, g.version) if expr.strong else None
    rows = graph.run_plan(plan)
    return evaluate(expr, rows, planned.confidence, g.version)


def llm_derive(data: Any, g: Any, graph: Any) -> Answer | dict[str, Any]:
    """An LLM's ``{"op", "fields", "plan"}`` (see the module doc): the answer, or a failure summary for its next
    attempt (an invented field id, a field of another type, fields that cannot form the expression, a bad plan)."""
    if not isinstance(data, dict):
        return {"error": "derive must be an object {op, fields, plan}"}
    try:
        plan = QueryPlan.model_validate(data.get("plan"))
    except ValueError as exc:
        return {"error": "derive.plan does not fit the plan schema", "details": str(exc)[:300]}
    fields = [str(f) for f in data.get("fields") or []] if isinstance(data.get("fields"), list) else []
    try:
        expr = from_catalog(g.contract, g, str(data.get("op", "")), fields, plan.start.label)
    except Declined as exc:
        return {"error": f"derive rejected: {exc}"}
    unit = DURATION_HEADS.get(str(data.get("unit", "days")).lower(), 1.0)
    expr = Expression(expr.op, expr.entity, expr.left, expr.right, unit)
    scoped = scoped_plan(plan.model_copy(update={"returns": [ReturnItem(var=plan.start.var, prop=expr.left, alias="x")]}),
                         expr)  # fmt: skip
    found = problems(scoped, g.contract) if scoped is not None else ["no node to compute on"]
    if scoped is None or found:
        return {"error": "derive.plan does not match the contract", "problems": found[:10]}
    answer = evaluate(expr, graph.run_plan(scoped), 0.9, g.version)
    if answer.route == "abstain":
        return {"error": answer.reason or "no value"}
    if answer.extension is not None:
        answer.extension["proposed_by"] = "llm"
    return answer
