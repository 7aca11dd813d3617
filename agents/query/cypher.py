"""Compile a ``QueryPlan`` to parameterized, read-only Cypher, and check Cypher text written elsewhere (LLM mode).

``compile_plan`` escapes every label, property and relationship type with ``ident`` and passes every value as a
parameter, so nothing from a question ever becomes Cypher syntax. Rows carry a ``_citations`` column: a list of
``{source, record_id, location}`` maps from ``(node)-[:DERIVED_FROM]->(:SourceRecord)`` of the plan's cited vars.

``check_read_only`` and ``check_against_contract`` guard Cypher text that did not come from ``compile_plan``: no
write clause, no procedure call, and every label, relationship type and property must exist in the contract.
"""

from __future__ import annotations

import re
from typing import Any

from esc.agents.query.plan import CITE_CAP, Expr, Filter, QueryPlan, ReturnItem
from esc.agents.stores.cypher import ident
from esc.contract.errors import UnsafeQuery
from esc.contract.model import Contract

SOURCE_RECORD = "SourceRecord"
DERIVED_FROM = "DERIVED_FROM"
_CITE_MAP = "{source: s.source, record_id: s.record_id, location: s.location}"
_ARITH = {"add": "+", "sub": "-", "mul": "*", "div": "/"}


def _var(name: str) -> str:
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]{0,30}", name):
        raise UnsafeQuery(f"bad variable name {name!r}")
    return name


class _Params:
    def __init__(self) -> None:
        self.values: dict[str, Any] = {}

    def add(self, value: Any) -> str:
        name = f"p{len(self.values)}"
        self.values[name] = value
        return "$" + name


def _filter(var: str, f: Filter, params: _Params) -> str:
    prop = f"{var}.{ident(f.prop)}"
    if f.op == "isnull":
        return f"{prop} IS NULL"
    if f.op == "notnull":
        return f"{prop} IS NOT NULL"
    p = params.add(f.value)
    if f.op == "eq":
        return f"{prop} = {p}"
    if f.op == "ne":
        return f"{prop} <> {p}"
    if f.op == "ieq":
        return f"toLower(trim(toString({prop}))) = toLower(trim(toString({p})))"
    if f.op == "contains":
        return f"toLower(toString({prop})) CONTAINS toLower(toString({p}))"
    if f.op == "startswith":
        return f"toString({prop}) STARTS WITH toString({p})"
    if f.op == "in":
        return f"{prop} IN {p}"
    op = {"gt": ">", "gte": ">=", "lt": "<", "lte": "<="}[f.op]
    return f"{prop} {op} {p}"


def _expr(var: str, e: Expr, params: _Params) -> str:
    if e.prop is not None:
        return f"{var}.{ident(e.prop)}"
    if e.const is not None:
        return params.add(e.const)
    if e.op is None or len(e.args) != 2:
        raise UnsafeQuery("arithmetic needs an operator and two arguments")
    left, right = (_expr(var, a, params) for a in e.args)
    return f"({left} {_ARITH[e.op]} {right})"


def _value(item: ReturnItem, params: _Params) -> str:
    var = _var(item.var)
    if item.expr is not None:
        return _expr(var, item.expr, params)
    if item.prop is None:
        return var
    return f"{var}.{ident(item.prop)}"


def _aggregate(item: ReturnItem, params: _Params) -> str:
    inner = _value(item, params)
    if item.agg == "count":
        return f"count(DISTINCT {inner})" if item.prop is None and item.expr is None else f"count({inner})"
    if item.agg == "count_distinct":
        return f"count(DISTINCT {inner})"
    return f"{item.agg}({inner})"


def _match(plan: QueryPlan, params: _Params, ns: str) -> str:
    start = plan.start
    pattern = f"({_var(start.var)}:{ident(ns + start.label)})"
    for hop in plan.hops:
        target = f"({_var(hop.target.var)}:{ident(ns + hop.target.label)})"
        rel = f"[:{ident(hop.rel_type)}]"
        pattern += f"-{rel}->{target}" if hop.direction == "out" else f"<-{rel}-{target}"
    conditions = [_filter(n.var, f, params) for n in plan.vars() for f in n.filters]
    where = f" WHERE {' AND '.join(conditions)}" if conditions else ""
    return f"MATCH {pattern}{where}"


def _citations_of(nodes_expr: str, ns: str) -> str:
    """Cypher for the citation maps of a list of nodes (flattened)."""
    return (
        f"reduce(acc = [], x IN {nodes_expr} | acc + "
        f"[(x)-[:{DERIVED_FROM}]->(s:{ident(ns + SOURCE_RECORD)}) | {_CITE_MAP}])"
    )


def _order_key(expr: str, desc: bool) -> str:
    """Missing values last in both directions (Neo4j sorts NULL first under DESC, so a superlative would pick an
    entity without the value)."""
    return f"{expr} IS NULL, {expr} {'DESC' if desc else 'ASC'}"


def compile_plan(plan: QueryPlan, namespace: str = "") -> tuple[str, dict[str, Any]]:
    """Parameterized read-only Cypher for a plan (names escaped, values as ``$p0``...) and its parameters;
    ``namespace`` prefixes every label (an app's graph on a shared Neo4j, ``agents.stores.neo4j``)."""
    params = _Params()
    parts = [_match(plan, params, namespace)]
    cite = [_var(v) for v in plan.cite]
    aggs = [r for r in plan.returns if r.agg is not None]
    plain = [r for r in plan.returns if r.agg is None]
    order = plan.order_by
    if not aggs:
        needed = list(dict.fromkeys([_var(r.var) for r in plain] + cite + ([order.var] if order and order.var else [])))
        parts.append(("WITH DISTINCT " if plan.distinct else "WITH ") + ", ".join(needed))
        if order is not None and order.prop is not None:
            parts.append("ORDER BY " + _order_key(f"{_var(order.var)}.{ident(order.prop)}", order.desc))
        if plan.limit is not None:
            parts.append(f"LIMIT {int(plan.limit)}")
        cols = [f"{_value(r, params)} AS {ident(r.alias)}" for r in plain]
        cites = _citations_of("[" + ", ".join(cite) + "]", namespace) if cite else "[]"
        parts.append("RETURN " + ", ".join([*cols, f"{cites} AS _citations"]))
        return " ".join(parts), params.values
    # aggregates: group keys are nodes (group_by) or the plain returned values
    keys: list[str] = []
    out_cols: list[str] = []
    group_nodes = [_var(v) for v in plan.group_by]
    keys.extend(group_nodes)
    for i, r in enumerate(plain):
        if r.var in plan.group_by:
            out_cols.append(f"{_value(r, params)} AS {ident(r.alias)}")
        else:
            keys.append(f"{_value(r, params)} AS _g{i}")
            out_cols.append(f"_g{i} AS {ident(r.alias)}")
    agg_cols = [f"{_aggregate(r, params)} AS _a{i}" for i, r in enumerate(aggs)]
    cite_lists = [f"collect(DISTINCT {v})[..{CITE_CAP}] AS _c{i}" for i, v in enumerate(cite)]
    parts.append("WITH " + ", ".join([*keys, *agg_cols, *cite_lists]))
    if order is not None:
        if order.alias is not None:
            idx = next((i for i, r in enumerate(aggs) if r.alias == order.alias), None)
            if idx is None:
                raise UnsafeQuery(f"order_by alias {order.alias!r} is not an aggregate of the plan")
            parts.append("ORDER BY " + _order_key(f"_a{idx}", order.desc))
        elif order.prop is not None and order.var in plan.group_by:
            parts.append("ORDER BY " + _order_key(f"{_var(order.var)}.{ident(order.prop)}", order.desc))
    if plan.limit is not None:
        parts.append(f"LIMIT {int(plan.limit)}")
    cited = " + ".join(f"_c{i}" for i in range(len(cite))) or "[]"
    cols = [*out_cols, *(f"_a{i} AS {ident(r.alias)}" for i, r in enumerate(aggs))]
    parts.append("RETURN " + ", ".join([*cols, f"{_citations_of(f'({cited})', namespace)}[..{CITE_CAP}] AS _citations"]))
    return " ".join(parts), params.values


# ------------------------------------------------------------------------------------------ checking Cypher text

_WRITE = re.compile(
    r"\b(CREATE|MERGE|DELETE|DETACH|SET|REMOVE|DROP|FOREACH|LOAD|CALL|USE|GRANT|REVOKE|DENY|ALTER|RENAME|"
    r"START|STOP|TERMINATE|SHOW|FINISH)\b",
    re.IGNORECASE,
)
_NAME = r"(?:`(?:[^`]|``)+`|[A-Za-z_][A-Za-z0-9_]*)"
_LABEL = re.compile(r"\(\s*[A-Za-z_][A-Za-z0-9_]*?\s*((?::\s*" + _NAME + r"\s*)+)")
_RELTYPE = re.compile(r"\[\s*[A-Za-z_0-9]*\s*:\s*(" + _NAME + r"(?:\s*\|\s*:?\s*" + _NAME + r")*)")
_PROP = re.compile(r"\.\s*(" + _NAME + r")")
_MAPKEY = re.compile(r"[{,]\s*(" + _NAME + r")\s*:")


_LEXEME = re.compile(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"|`(?:[^`]|``)*`|//[^\n]*|/\*.*?\*/", re.DOTALL)


def _strip(cypher: str, names: bool = False) -> str:
    """Strings become '', comments a space (one left-to-right pass, so quotes inside comments or names and
    comment markers inside strings or names are read correctly); ``names=True`` also blanks `quoted` names."""

    def sub(m: re.Match[str]) -> str:
        t = m.group(0)
        if t[0] in "'\"":
            return "''"
        if t[0] == "`":
            return "``" if names else t
        return " "

    return _LEXEME.sub(sub, cypher)


def _unquote(name: str) -> str:
    name = name.strip()
    if name.startswith("`") and name.endswith("`"):
        return name[1:-1].replace("``", "`")
    return name


def check_read_only(cypher: str) -> None:
    """Raise ``UnsafeQuery`` if the text could write, call procedures or administer the database."""
    if not cypher.strip():
        raise UnsafeQuery("empty query")
    bare = _strip(cypher, names=True)
    if ";" in bare.rstrip().rstrip(";"):
        raise UnsafeQuery("more than one statement")
    hit = _WRITE.search(bare)
    if hit:
        raise UnsafeQuery(f"not read-only: {hit.group(1).upper()} is not allowed")
    if not re.search(r"\bRETURN\b", bare, re.IGNORECASE):
        raise UnsafeQuery("a query must RETURN something")


def referenced_names(cypher: str) -> tuple[set[str], set[str], set[str]]:
    """Labels, relationship types and property keys a Cypher text mentions (strings and comments removed)."""
    bare = _strip(cypher)
    labels = {_unquote(x) for m in _LABEL.finditer(bare) for x in re.split(r"\s*:\s*", m.group(1)) if x.strip()}
    rels = {_unquote(x.strip().lstrip(":")) for m in _RELTYPE.finditer(bare) for x in m.group(1).split("|")}
    props = {_unquote(m.group(1)) for m in _PROP.finditer(bare)}
    props |= {_unquote(m.group(1)) for m in _MAPKEY.finditer(bare)}
    return labels, rels, props


_ALLOWED_PROPS = {"source", "record_id", "location", "file"}  # SourceRecord properties


def check_against_contract(cypher: str, contract: Contract) -> None:
    """Raise ``UnsafeQuery`` unless the text is read-only and names only labels, types and properties the contract
    has (plus ``SourceRecord`` / ``DERIVED_FROM`` provenance)."""
    check_read_only(cypher)
    labels, rels, props = referenced_names(cypher)
    known_labels = {e.name for e in contract.entities} | {SOURCE_RECORD}
    known_rels = {r.name for r in contract.relationships} | {DERIVED_FROM}
    known_props = {a.name for e in contract.entities for a in e.attributes} | _ALLOWED_PROPS
    problems = []
    if bad := sorted(labels - known_labels):
        problems.append(f"unknown label(s) {', '.join(bad)}")
    if bad := sorted(rels - known_rels):
        problems.append(f"unknown relationship type(s) {', '.join(bad)}")
    if bad := sorted(props - known_props):
        problems.append(f"unknown propert(y/ies) {', '.join(bad)}")
    if problems:
        raise UnsafeQuery("; ".join(problems))
