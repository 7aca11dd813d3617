"""Compile a backend-neutral ``QueryPlan`` (agents/query/plan.py) to DuckDB SQL over the embedded graph tables.

The meaning is the plan's (reference: agents/query/memstore.py; Neo4j: agents/query/cypher.py), so every backend
gives the same answers:

- a path ``(n0)-[:R]->(n1)<-[:S]-(n2)`` is a chain of joins over ``edges``; as in one Cypher MATCH, two hops never
  use the same relationship;
- properties are typed per node: a comparison with a number matches numbers, with a string strings (``1 = "1"`` is
  false), a missing property never matches; ``ieq``/``contains``/``startswith`` compare the value rendered as text;
- without aggregates: one row per distinct combination of the nodes the returns, citations and order use, ordered
  with missing values last; with aggregates: groups by the ``group_by`` nodes and the other plain values, ``sum`` of
  integers stays an integer, ``count`` of nothing is 0 and other aggregates of nothing are null.

Every value, label, relationship type and property name travels as a parameter (property names as JSON pointers);
the SQL text holds only aliases made here (t0, r1, ...).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from esc.agents.query.plan import CITE_CAP, Expr, Filter, QueryPlan, ReturnItem
from esc.agents.stores.cypher import to_property
from esc.agents.stores.embedded.sql_rows import Column, CompiledPlan, decode_row, json_pointer, render
from esc.contract.errors import InvalidPlan

__all__ = ["Column", "CompiledPlan", "InvalidPlan", "compile_plan", "decode_row", "json_pointer", "render"]

NUMERIC = "('UBIGINT', 'BIGINT', 'DOUBLE')"
INTEGER = "('UBIGINT', 'BIGINT')"
_CMP = {"gt": ">", "gte": ">=", "lt": "<", "lte": "<="}
_ARITH = {"add": "+", "sub": "-", "mul": "*"}


@dataclass
class _Val:
    """SQL for one value of a row: as DOUBLE (numbers only), whether it is an integer, and its JSON text."""

    num: str
    isint: str
    text: str
    str_: str | None = None  # strings only (properties)


class _Builder:
    def __init__(self) -> None:
        self.params: dict[str, Any] = {}
        self._pointers: dict[str, str] = {}

    def param(self, value: Any) -> str:
        name = f"p{len(self.params)}"
        self.params[name] = value
        return "$" + name

    def pointer(self, prop: str) -> str:
        if not isinstance(prop, str) or prop == "":
            raise InvalidPlan(f"property name not allowed: {prop!r}")
        if prop not in self._pointers:
            self._pointers[prop] = self.param(json_pointer(prop))
        return self._pointers[prop]

    # typed views of one property of the node bound to table alias ``a``
    def jtype(self, a: str, prop: str) -> str:
        return f"json_type({a}.props, {self.pointer(prop)})"

    def raw(self, a: str, prop: str) -> str:
        return f"json_extract({a}.props, {self.pointer(prop)})"

    def text(self, a: str, prop: str) -> str:
        return f"CAST({self.raw(a, prop)} AS VARCHAR)"

    def num(self, a: str, prop: str) -> str:
        return f"(CASE WHEN {self.jtype(a, prop)} IN {NUMERIC} THEN CAST({self.raw(a, prop)} AS DOUBLE) END)"

    def int_(self, a: str, prop: str) -> str:
        return f"(CASE WHEN {self.jtype(a, prop)} IN {INTEGER} THEN CAST({self.raw(a, prop)} AS HUGEINT) END)"

    def str_(self, a: str, prop: str) -> str:
        return (
            f"(CASE WHEN {self.jtype(a, prop)} = 'VARCHAR' "
            f"THEN json_extract_string({a}.props, {self.pointer(prop)}) END)"
        )

    def bool_(self, a: str, prop: str) -> str:
        return f"(CASE WHEN {self.jtype(a, prop)} = 'BOOLEAN' THEN CAST({self.raw(a, prop)} AS BOOLEAN) END)"

    def rendered(self, a: str, prop: str) -> str:
        """The property as text, as ``render`` writes a Python value."""
        t, num = self.jtype(a, prop), self.num(a, prop)
        return (
            f"(CASE WHEN {t} = 'VARCHAR' THEN {self.str_(a, prop)} "
            f"WHEN {t} IN ('BOOLEAN', 'UBIGINT', 'BIGINT') THEN {self.text(a, prop)} "
            f"WHEN {t} = 'DOUBLE' THEN (CASE WHEN {num} = trunc({num}) AND abs({num}) < 1e15 "
            f"THEN CAST(CAST({num} AS HUGEINT) AS VARCHAR) ELSE CAST({num} AS VARCHAR) END) END)"
        )

    def prop_val(self, a: str, prop: str) -> _Val:
        return _Val(
            num=self.num(a, prop),
            isint=f"({self.jtype(a, prop)} IN {INTEGER})",
            text=self.text(a, prop),
            str_=self.str_(a, prop),
        )

    def expr_val(self, a: str, e: Expr) -> _Val:
        if e.prop is not None:
            return self.prop_val(a, e.prop)
        num, isint = self._arith(a, e)
        text = f"(CASE WHEN {isint} THEN CAST(CAST({num} AS HUGEINT) AS VARCHAR) ELSE CAST({num} AS VARCHAR) END)"
        return _Val(num=num, isint=isint, text=text)

    def _arith(self, a: str, e: Expr) -> tuple[str, str]:
        """(DOUBLE sql, is-integer sql) of arithmetic over numbers; a non-number or a division by 0 gives null."""
        if e.prop is not None:
            return self.num(a, e.prop), f"({self.jtype(a, e.prop)} IN {INTEGER})"
        if e.const is not None:
            return f"CAST({self.param(float(e.const))} AS DOUBLE)", "FALSE"
        if e.op is None or len(e.args) != 2:
            raise InvalidPlan("arithmetic needs an operator and two arguments")
        (left, li), (right, ri) = (self._arith(a, x) for x in e.args)
        if e.op == "div":
            return f"(CASE WHEN {right} <> 0 THEN {left} / {right} END)", "FALSE"
        return f"({left} {_ARITH[e.op]} {right})", f"({li} AND {ri})"


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "num"
    if isinstance(value, str):
        return "str"
    return "list"


def _filter(b: _Builder, a: str, f: Filter) -> str:
    if f.op in ("isnull", "notnull"):
        missing = f"({b.jtype(a, f.prop)} IS NULL OR {b.jtype(a, f.prop)} = 'NULL')"
        return missing if f.op == "isnull" else f"(NOT {missing})"
    if f.op == "in":
        values = f.value if isinstance(f.value, (list, tuple, set)) else [f.value]
        converted = [to_property(v) for v in values]
        parts = []
        if nums := [float(v) for v in converted if _kind(v) == "num"]:
            parts.append(f"list_contains(CAST({b.param(nums)} AS DOUBLE[]), {b.num(a, f.prop)})")
        if strs := [v for v in converted if _kind(v) == "str"]:
            parts.append(f"list_contains(CAST({b.param(strs)} AS VARCHAR[]), {b.str_(a, f.prop)})")
        if bools := [v for v in converted if _kind(v) == "bool"]:
            parts.append(f"list_contains(CAST({b.param(bools)} AS BOOLEAN[]), {b.bool_(a, f.prop)})")
        return "(" + " OR ".join(parts) + ")" if parts else "FALSE"
    value = to_property(f.value)
    kind = _kind(value)
    if kind == "null":
        return "FALSE"  # a comparison with null is never true
    if f.op in ("ieq", "contains", "startswith"):
        text = render(value)
        if text is None:
            return "FALSE"
        have = b.rendered(a, f.prop)
        if f.op == "ieq":
            return f"(lower(trim({have})) = lower(trim({b.param(text)})))"
        if f.op == "contains":
            return f"contains(lower({have}), lower({b.param(text)}))"
        return f"starts_with({have}, {b.param(text)})"
    typed = {"bool": b.bool_, "num": b.num, "str": b.str_}
    if f.op in ("eq", "ne"):
        sign = "=" if f.op == "eq" else "<>"
        if kind == "list":
            return f"({b.text(a, f.prop)} {sign} {b.param(json.dumps(value, ensure_ascii=False, separators=(',', ':')))})"
        return f"({typed[kind](a, f.prop)} {sign} {b.param(float(value) if kind == 'num' else value)})"
    if f.op in _CMP and kind in typed:
        return f"({typed[kind](a, f.prop)} {_CMP[f.op]} {b.param(float(value) if kind == 'num' else value)})"
    return "FALSE"


def _aggregate(b: _Builder, a: str, item: ReturnItem) -> tuple[list[str], Column, str]:
    """SQL columns, their decoding, and an expression to order groups by this aggregate."""
    agg = item.agg
    if agg == "count" and item.prop is None and item.expr is None:
        expr = f"count(DISTINCT {a}.eid)"
        return [expr], Column(item.alias, "int"), expr
    if item.expr is not None:
        val = b.expr_val(a, item.expr)
    elif item.prop is not None:
        val = b.prop_val(a, item.prop)
    elif agg == "count_distinct":
        expr = f"count(DISTINCT {a}.eid)"
        return [expr], Column(item.alias, "int"), expr
    else:
        raise InvalidPlan(f"{agg}({item.var}) needs a property or an expression")
    if agg == "count":
        expr = f"count({val.text})"
        return [expr], Column(item.alias, "int"), expr
    if agg == "count_distinct":
        expr = f"count(DISTINCT {val.text})"
        return [expr], Column(item.alias, "int"), expr
    if agg == "sum":
        ints = f"sum(CASE WHEN {val.isint} THEN CAST({val.num} AS HUGEINT) END)"
        floats = f"sum(CASE WHEN NOT {val.isint} THEN {val.num} END)"
        if item.expr is None and item.prop is not None:  # exact integers straight from the JSON
            ints = f"sum({b.int_(a, item.prop)})"
        order = f"(CASE WHEN count({val.num}) > 0 THEN coalesce(CAST({ints} AS DOUBLE), 0) + coalesce({floats}, 0) END)"
        return [ints, floats], Column(item.alias, "sum", 2), order
    if agg == "avg":
        expr = f"avg({val.num})"
        return [expr], Column(item.alias, "float"), expr
    if agg in ("min", "max"):
        # numbers win over other values when a group holds both
        pick = "arg_min" if agg == "min" else "arg_max"
        parts = [f"{pick}({val.text}, {val.num})"]
        if val.str_ is not None:
            parts.append(f"{pick}({val.text}, {val.str_})")
        expr = f"coalesce({', '.join(parts)})"
        return [expr], Column(item.alias, "json"), f"{agg}({val.num})"
    raise InvalidPlan(f"unknown aggregate {agg!r}")


def compile_plan(plan: QueryPlan) -> CompiledPlan:
    b = _Builder()
    aliases: dict[str, str] = {}
    joins: list[str] = []
    where: list[str] = []

    def bind(var: str, label: str, filters: list[Filter]) -> str:
        a = aliases[var]
        where.append(f"{a}.label = {b.param(label)}")
        where.extend(_filter(b, a, f) for f in filters)
        return a

    aliases[plan.start.var] = "t0"
    prev = bind(plan.start.var, plan.start.label, plan.start.filters)
    hop_types: list[tuple[str, str]] = []
    for i, hop in enumerate(plan.hops, 1):
        r = f"r{i}"
        near, far = ("src", "dst") if hop.direction == "out" else ("dst", "src")
        joins.append(f"JOIN edges AS {r} ON {r}.type = {b.param(hop.rel_type)} AND {r}.{near} = {prev}.eid")
        for other, other_type in hop_types:  # one MATCH pattern never reuses a relationship
            if other_type == hop.rel_type:
                where.append(f"NOT ({r}.src = {other}.src AND {r}.dst = {other}.dst)")
        hop_types.append((r, hop.rel_type))
        target = hop.target
        if target.var in aliases:  # a cycle back to a bound node
            where.append(f"{r}.{far} = {aliases[target.var]}.eid")
        else:
            aliases[target.var] = f"t{i}"
            joins.append(f"JOIN entities AS t{i} ON t{i}.eid = {r}.{far}")
        prev = bind(target.var, target.label, target.filters)

    def alias_of(var: str, what: str) -> str:
        if var not in aliases:
            raise InvalidPlan(f"{what} uses {var!r}, which the plan does not bind (bound: {sorted(aliases)})")
        return aliases[var]

    if not plan.returns:
        raise InvalidPlan("the plan returns nothing")
    if plan.limit is not None and plan.limit < 0:
        raise InvalidPlan(f"limit must be >= 0, not {plan.limit}")
    aggs = [r for r in plan.returns if r.agg is not None]
    order = plan.order_by
    order_var = order.var if order is not None and order.alias is None and order.prop is not None else None

    def plain_value(item: ReturnItem, a: str) -> tuple[str, Column]:
        if item.expr is not None:
            return b.expr_val(a, item.expr).text, Column(item.alias, "json")
        if item.prop is None:
            return f"CAST({a}.props AS VARCHAR)", Column(item.alias, "node")
        return b.text(a, item.prop), Column(item.alias, "json")

    select: list[str] = []
    columns: list[Column] = []
    keys: list[str] = []
    order_sql: list[str] = []
    if not aggs:
        needed = [r.var for r in plan.returns] + list(plan.cite) + ([order_var] if order_var else [])
        grouped = plan.distinct
        keys = [f"{alias_of(v, 'the plan')}.eid" for v in dict.fromkeys(needed)]
        wrap = "any_value" if grouped else ""
        for item in plan.returns:
            expr, col = plain_value(item, alias_of(item.var, f"return item {item.alias!r}"))
            select.append(f"{wrap}({expr})")
            columns.append(col)
        if order_var is not None and order is not None and order.prop is not None:
            a = alias_of(order_var, "order_by")
            ladder = [b.num(a, order.prop), b.bool_(a, order.prop), b.str_(a, order.prop)]
            if not order.desc:
                ladder.reverse()  # strings < booleans < numbers
            direction = "DESC" if order.desc else "ASC"
            order_sql.extend(f"{wrap}({e}) {direction} NULLS LAST" for e in ladder)
    else:
        grouped = True
        group_vars = set(plan.group_by)
        keys = [f"{alias_of(v, 'group_by')}.eid" for v in dict.fromkeys(plan.group_by)]
        agg_order: dict[str, str] = {}
        for item in plan.returns:
            a = alias_of(item.var, f"return item {item.alias!r}")
            if item.agg is None:
                expr, col = plain_value(item, a)
                if item.var in group_vars:
                    expr = f"any_value({expr})"
                else:
                    keys.append(expr)
                select.append(expr)
                columns.append(col)
            else:
                exprs, col, agg_order[item.alias] = _aggregate(b, a, item)
                select.extend(exprs)
                columns.append(col)
        direction = "DESC" if order is not None and order.desc else "ASC"
        if order is not None and order.alias is not None:
            if order.alias not in agg_order:
                raise InvalidPlan(f"order_by alias {order.alias!r} is not an aggregate of the plan")
            order_sql.append(f"{agg_order[order.alias]} {direction} NULLS LAST")
        elif (
            order_var is not None and order_var in group_vars and order is not None and order.prop is not None
        ):
            a = alias_of(order_var, "order_by")
            ladder = [b.num(a, order.prop), b.bool_(a, order.prop), b.str_(a, order.prop)]
            if not order.desc:
                ladder.reverse()
            order_sql.extend(f"any_value({e}) {direction} NULLS LAST" for e in ladder)
    cites = [alias_of(v, "cite") for v in dict.fromkeys(plan.cite)]
    if aggs:
        select.extend(f"list(DISTINCT {a}.eid ORDER BY {a}.eid)[1:{CITE_CAP}]" for a in cites)
    else:
        select.extend(f"[{a}.eid]" for a in cites)
    width = sum(c.width for c in columns)
    order_sql.extend(str(n) for n in range(1, width + 1))  # stable order between ties

    sql = f"SELECT {', '.join(select)} FROM entities AS t0 {' '.join(joins)} WHERE {' AND '.join(where)}"
    if grouped and keys:
        sql += f" GROUP BY {', '.join(keys)}"
    sql += f" ORDER BY {', '.join(order_sql)}"
    if plan.limit is not None:
        sql += f" LIMIT {b.param(int(plan.limit))}"
    return CompiledPlan(
        sql=sql, params=b.params, columns=columns, cite_count=len(cites), cite_cap=CITE_CAP if aggs else None
    )
