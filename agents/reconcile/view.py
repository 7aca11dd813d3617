"""What questions see of entity resolution: which entity types have canonical entities in the graph (a type with at
least one duplicate, in its source or across sources), how their attributes map to the canonical ones, and which
types share clusters (a ``SAME_AS`` relationship between them in the contract the planner reads, so a question can
name a person by a spelling one source has and ask for a field another source holds).

Read from the graph once per grounding (contract version and graph state); with no canonical entity stored the view
is inactive and questions are planned and run exactly as without entity resolution.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from itertools import combinations

from esc.agents.query.plan import Filter, NodePattern, QueryPlan, ReturnItem
from esc.agents.reconcile.model import CANONICAL, SAME_AS, member_marker
from esc.agents.stores.base import GraphStore
from esc.contract.er_fields import ResolutionSpec, build_spec
from esc.contract.model import Contract, Relationship

log = logging.getLogger(__name__)


@dataclass
class ClusterView:
    spec: ResolutionSpec
    labels: set[str] = field(default_factory=set)  # types whose records have canonical entities
    pairs: set[tuple[str, str]] = field(default_factory=set)  # types that share a cluster

    @property
    def active(self) -> bool:
        return bool(self.labels)

    def canon(self, label: str, attr: str) -> str:
        t = self.spec.get(label)
        return t.canon.get(attr, attr) if t is not None else attr

    def scale(self, label: str, attr: str) -> float | None:
        t = self.spec.get(label)
        return t.scale.get(attr) if t is not None else None

    def identifying(self, label: str, attr: str, display: list[str], key: list[str]) -> bool:
        """Filters on these name a record (matched on any member's value); others test the current value."""
        t = self.spec.get(label)
        if t is None:
            return True
        return (attr in t.roles.values() and t.canon.get(attr) not in ("city", "country", "postal_code", "address")) \
            or attr in display or attr in key or attr in t.quiet

    def contract_for_questions(self, contract: Contract) -> Contract:
        """The contract plus a ``SAME_AS`` relationship between every two types that share a cluster."""
        if not self.pairs:
            return contract
        extra = [Relationship(name=SAME_AS, kind="foreign_key", from_entity=a, to_entity=b, from_fields=[], to_fields=[])
                 for a, b in sorted(self.pairs)]  # fmt: skip
        return contract.model_copy(update={"relationships": [*contract.relationships, *extra]})


def _count(graph: GraphStore, filters: list[Filter]) -> int:
    plan = QueryPlan(kind="count", start=NodePattern(var="c", label=CANONICAL, filters=filters),
                     returns=[ReturnItem(var="c", agg="count", alias="n")])  # fmt: skip
    rows = graph.run_plan(plan)
    return int(rows[0].values.get("n") or 0) if rows else 0


def build_view(contract: Contract, graph: GraphStore | None) -> ClusterView:
    spec = build_spec(contract)
    view = ClusterView(spec)
    if graph is None or not spec.types:
        return view
    try:
        if not graph.canonical_ids():
            return view
        present = {e.name for e in contract.entities}
        for label in sorted(spec.types):
            if label in present and _count(graph, [Filter(prop=member_marker(label), op="notnull", value=None)]):
                view.labels.add(label)
        for a, b in combinations(sorted(view.labels), 2):
            both = [Filter(prop=member_marker(x), op="notnull", value=None) for x in (a, b)]
            if _count(graph, both):
                view.pairs.add((a, b))
    except NotImplementedError:
        return ClusterView(spec)
    except Exception as exc:  # a store that cannot answer: questions go on without the view
        log.warning("entity resolution view unavailable: %s", exc)
        return ClusterView(spec)
    return view
