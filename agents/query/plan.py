"""Backend-neutral query plans (the IR between the planner and the stores).

The planner (deterministic or LLM) produces a ``QueryPlan`` that names only contract vocabulary: entity labels,
attribute names, relationship types. ``validate`` (in agents/query/validate.py) checks every name against the
contract before anything runs; each graph backend compiles the plan to its own language (Cypher for Neo4j, SQL
for the embedded store) with every value as a parameter, and runs it read-only.

Shape: a start node pattern, zero or more hops, then what to return. Examples:
- lookup "email of customer Frank Ralston": start Customer{FirstName=Frank, LastName=Ralston}, return Email
- count "how many tracks in album X": start Album{Title=X}, hop <-[ALBUM]- Track, return count(Track)
- superlative "longest track": start Track, order by Milliseconds desc, limit 1, return Name
- grouped superlative "genre with the most tracks": start Genre, hop <-[GENRE]- Track, returns Genre.Name and
  count(Track) as ``n``, ``group_by=["n0"]`` (group by the Genre node, not its name), order by alias ``n`` desc, limit 1

Semantics every backend implements (agents/query/memstore.py is the reference evaluator):
- Rows are the matches of the start pattern and the hops (a path; each hop's target filters apply to it).
- Without aggregates: one row per distinct combination of the matched nodes of the returned/ordered/cited vars,
  ordered by ``order_by``, cut at ``limit``; each row cites the source records of its ``cite`` nodes.
- With aggregates: rows are grouped by the nodes of ``group_by`` vars when given, else by the values of the
  non-aggregate returns (no non-aggregate returns: one group over everything; an empty match still gives one
  row, with count 0 and other aggregates null). ``order_by.alias`` orders groups by a returned alias.
  Each group cites (at most ``CITE_CAP``) source records of its ``cite`` nodes.
- ``ReturnItem.expr`` is arithmetic over properties of ``var`` (e.g. UnitPrice * Quantity * (1 - Discount)),
  aggregated like a property. ``Filter`` op ``startswith`` compares the property rendered as text (years of dates);
  ``isnull`` / ``notnull`` test whether the node has the property at all (their ``value`` is ignored); ``ne``
  holds for nodes that have the property with another value.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

Op = Literal["eq", "ne", "ieq", "contains", "gt", "gte", "lt", "lte", "in", "startswith", "isnull", "notnull"]
Agg = Literal["count", "count_distinct", "sum", "avg", "min", "max"]
Direction = Literal["out", "in"]
PlanKind = Literal["lookup", "list", "count", "aggregate", "superlative", "traverse"]


class Filter(BaseModel):
    prop: str
    op: Op = "eq"
    value: Any


class NodePattern(BaseModel):
    var: str  # n0, n1, ... (planner-chosen, never from data)
    label: str
    filters: list[Filter] = Field(default_factory=list)


class Hop(BaseModel):
    rel_type: str
    direction: Direction  # "out": (prev)-[r]->(target); "in": (prev)<-[r]-(target)
    target: NodePattern


ArithOp = Literal["add", "sub", "mul", "div"]
CITE_CAP = 20
"""Most source records cited per result row of an aggregate (each backend caps the same way)."""


class Expr(BaseModel):
    """Arithmetic over properties of one node: exactly one of ``prop``, ``const`` or ``op`` with two ``args``."""

    prop: str | None = None
    const: float | None = None
    op: ArithOp | None = None
    args: list[Expr] = Field(default_factory=list)

    def props(self) -> list[str]:
        if self.prop is not None:
            return [self.prop]
        return [p for a in self.args for p in a.props()]


class ReturnItem(BaseModel):
    var: str
    prop: str | None = None  # None with agg=count counts nodes
    agg: Agg | None = None
    alias: str
    expr: Expr | None = None  # instead of prop: arithmetic over the var's properties


class OrderBy(BaseModel):
    var: str = ""
    prop: str | None = None
    desc: bool = True
    alias: str | None = None  # order by a returned alias (an aggregate) instead of var.prop


class QueryPlan(BaseModel):
    kind: PlanKind
    start: NodePattern
    hops: list[Hop] = Field(default_factory=list)
    returns: list[ReturnItem]
    order_by: OrderBy | None = None
    limit: int | None = None
    distinct: bool = True
    cite: list[str] = Field(default_factory=list)  # vars whose source records are returned as citations
    group_by: list[str] = Field(default_factory=list)  # with aggregates: group by these nodes (identity)

    def vars(self) -> list[NodePattern]:
        return [self.start, *(h.target for h in self.hops)]


class PlanRow(BaseModel):
    """One result row: the returned values by alias, and the source records behind the cited nodes."""

    values: dict[str, Any]
    citations: list[dict[str, Any]] = Field(default_factory=list)  # {source, record_id, location}
