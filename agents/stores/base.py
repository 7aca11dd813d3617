"""Ports for the stores ESC writes to and reads from. Backends: neo4j.py, weaviate.py (embedded comes later)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from esc.agents.types import EdgeWrite, EntityWrite, SourceRecordRef, TextObject

if TYPE_CHECKING:
    from esc.agents.query.plan import PlanRow, QueryPlan
    from esc.agents.reconcile.model import CanonicalWrite


@runtime_checkable
class DeletesByRecord(Protocol):
    """Vector stores that can drop the objects of given source records (Weaviate adapter, recording fakes)."""

    def delete_by_record(self, collection: str, source: str, record_ids: Sequence[str]) -> int: ...


class GraphStore(ABC):
    """Entities, relationships and provenance."""

    @abstractmethod
    def ensure_entity_key(self, label: str, key_props: Sequence[str]) -> None:
        """Make (label, key_props) unique (a uniqueness constraint where the backend has one)."""

    def ensure_entity_keys(self, keys: Sequence[tuple[str, Sequence[str]]]) -> None:
        """``ensure_entity_key`` for each; a backend may make them at once (Neo4j: one plan per new label)."""
        for label, key_props in keys:
            self.ensure_entity_key(label, key_props)

    @abstractmethod
    def upsert_entities(self, rows: Sequence[EntityWrite]) -> int:
        """MERGE entities by identity key, attach SourceRecord + DERIVED_FROM. Idempotent. Returns rows written."""

    @abstractmethod
    def upsert_edges(self, rows: Sequence[EdgeWrite]) -> int:
        """MERGE relationships between entities that exist. Idempotent. Returns rows written."""

    def plan_upsert(self, entities: Sequence[EntityWrite], edges: Sequence[EdgeWrite]) -> Any:
        """The part of :meth:`upsert` that needs no server (pure CPU: statement parameters), done while an earlier
        batch is being written and handed back to ``upsert`` as ``ahead``; None: nothing to do ahead."""
        return None

    def upsert(
        self, entities: Sequence[EntityWrite], edges: Sequence[EdgeWrite], ahead: Any = None
    ) -> tuple[int, int]:
        """Entities, then the batch's edges: (entities written, edges written). Backends that can write an
        entity's edges in the same statement as the entity override this (one index seek and round trip less);
        ``ahead``: what :meth:`plan_upsert` returned for these rows."""
        written = self.upsert_entities(entities) if entities else 0
        return written, self.upsert_edges(edges) if edges else 0

    @abstractmethod
    def retract_source_records(self, refs: Sequence[SourceRecordRef]) -> int:
        """Remove source records and the entities nothing else supports."""

    @abstractmethod
    def count(self, label: str) -> int: ...

    @abstractmethod
    def read(self, query: str, params: dict[str, Any] | None = None) -> list[dict[str, Any]]:
        """Run a read-only query in the backend's own language and return rows as dicts."""

    @abstractmethod
    def run_plan(self, plan: QueryPlan) -> list[PlanRow]:
        """Compile a validated plan to the backend's language (values as parameters) and run it read-only."""

    def generation(self) -> int | None:
        """A number that changes whenever the graph's data does, or None when the backend cannot tell (then
        nothing derived from the data is cached across processes)."""
        return None

    def distinct_values(self, label: str, props: Sequence[str], limit: int) -> list[tuple[Any, ...]]:
        """Distinct combinations of ``props`` over the nodes of ``label`` (nodes missing any of them skipped), at
        most ``limit``. The value index of the query agent reads names and categories through this; backends
        override it with one cheap query (this default runs a plan without citations)."""
        from esc.agents.query.plan import NodePattern, QueryPlan, ReturnItem

        plan = QueryPlan(
            kind="list",
            start=NodePattern(var="n0", label=label),
            returns=[ReturnItem(var="n0", prop=p, alias=f"v{i}") for i, p in enumerate(props)],
            limit=limit,
        )
        out: list[tuple[Any, ...]] = []
        seen: set[str] = set()
        for row in self.run_plan(plan):
            vals = tuple(row.values.get(f"v{i}") for i in range(len(props)))
            key = repr(vals)
            if any(v is None for v in vals) or key in seen:
                continue
            seen.add(key)
            out.append(vals)
        return out

    # -- entity resolution (agents/reconcile): canonical entities and their SAME_AS members ------------------------
    def write_canonical(self, upserts: Sequence[CanonicalWrite], deletes: Sequence[str]) -> int:
        """Replace the canonical entities ``upserts`` (properties, ``SAME_AS`` edges from their member entities
        with ``score`` and ``evidence``, ``DERIVED_FROM`` to their members' source records) and delete those of
        the cluster ids ``deletes``. Idempotent. Returns canonical entities written."""
        raise NotImplementedError(f"{type(self).__name__} does not store canonical entities")

    def canonical_ids(self) -> set[str]:
        """Cluster ids of the canonical entities stored (empty when the backend keeps none)."""
        return set()

    @abstractmethod
    def close(self) -> None: ...


class VectorStore(ABC):
    """Text chunks with vectors, pointing back at entities and source records."""

    @abstractmethod
    def ensure_collection(self, name: str) -> None: ...

    @abstractmethod
    def upsert(self, collection: str, objects: Sequence[TextObject]) -> int:
        """Insert or overwrite by deterministic object id. Returns objects written."""

    @abstractmethod
    def near_vector(self, collection: str, vector: Sequence[float], limit: int = 5) -> list[dict[str, Any]]:
        """Nearest objects with their properties and a ``similarity`` in [0, 1]."""

    @abstractmethod
    def count(self, collection: str) -> int: ...

    @abstractmethod
    def close(self) -> None: ...
