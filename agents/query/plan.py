"""Backend-neutral query plans (the IR between the planner and the stores).

The planner (deterministic or LLM) produces a ``QueryPlan`` that names only contract vocabulary: entity labels,
attribute names, relationship types. ``validate`` (in agents/query/validate.py) checks every name against the
contract before anything runs; each graph backend compiles the plan to its own language (Cypher for Neo4j, SQL
for the embedded store) with every value as a parameter, and runs it read-only.

Shape: a start node pattern, zero or more hops, then what to return. Examples:
- lookup "email of customer Frank Ralston": start Customer{FirstName=Frank, LastName=Ralston}, return Email
- count "how many tracks in album X": start Album{Title=X}, hop <-[ALBUM]- Track, return count(Track)
- superlative "longest track": start Track, order by Milliseconds desc, limit 1, return Name
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

Op = Literal["eq", "ieq", "contains", "gt", "gte", "lt", "lte", "in"]
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


class ReturnItem(BaseModel):
    var: str
    prop: str | None = None  # None with agg=count counts nodes
    agg: Agg | None = None
    alias: str


class OrderBy(BaseModel):
    var: str
    prop: str
    desc: bool = True


class QueryPlan(BaseModel):
    kind: PlanKind
    start: NodePattern
    hops: list[Hop] = Field(default_factory=list)
    returns: list[ReturnItem]
    order_by: OrderBy | None = None
    limit: int | None = None
    distinct: bool = True
    cite: list[str] = Field(default_factory=list)  # vars whose source records are returned as citations

    def vars(self) -> list[NodePattern]:
        return [self.start, *(h.target for h in self.hops)]


class PlanRow(BaseModel):
    """One result row: the returned values by alias, and the source records behind the cited nodes."""

    values: dict[str, Any]
    citations: list[dict[str, Any]] = Field(default_factory=list)  # {source, record_id, location}
