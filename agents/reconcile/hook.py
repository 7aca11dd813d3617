"""The ingest step's hook into entity resolution: the entities a batch wrote and the records it retracted go to the
resolver, and the canonical entities it decides go to the graph store (``GraphStore.write_canonical``).

One ``Reconciler`` per graph store. Its resolver state is kept in memory and, with a ``path``, its records in a
SQLite log next to the worker's other state, so a restart rebuilds the same clusters (they are a function of the
records). Merges and splits are counted (``esc_cluster_events_total{kind}``) and logged, one line each.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from pathlib import Path

from esc.agents import metrics
from esc.agents.reconcile.member_log import MemberLog
from esc.agents.reconcile.model import ClusterEvent, Member
from esc.agents.reconcile.resolver import Changes, Resolver
from esc.agents.stores.base import GraphStore
from esc.agents.types import EntityWrite, SourceRecordRef
from esc.contract.er_fields import ResolutionSpec, build_spec
from esc.contract.model import Contract

log = logging.getLogger(__name__)


def members_from(entities: Sequence[EntityWrite], spec: ResolutionSpec) -> list[Member]:
    out = []
    for e in entities:
        if spec.get(e.label) is None:
            continue
        p = e.provenance
        out.append(
            Member(
                sid=p.sid,
                label=e.label,
                key=tuple(sorted(e.key.items())),
                values=tuple(sorted((k, v) for k, v in e.properties.items() if v is not None)),
                source=p.source,
                record_id=p.record_id,
                location=p.location or "",
            )
        )
    return out


class Reconciler:
    def __init__(self, graph: GraphStore, path: Path | None = None) -> None:
        self.graph = graph
        self.log = MemberLog(path)
        self.resolver: Resolver | None = None
        self._seen: Contract | None = None
        self._lock = threading.Lock()
        self.events: list[ClusterEvent] = []

    def use(self, contract: Contract) -> None:
        """Resolve under ``contract``'s spec (a new spec compares every kept record again). The first call loads
        the logged records and makes the graph's canonical entities match them (a restart after a crash). The spec
        is read again from every new contract object, not only from a new version: its time fields and units are
        statistics (contract/annotations.py) that may change while the structure stays."""
        with self._lock:
            if self.resolver is not None and contract is self._seen:
                return
            spec = build_spec(contract)
            self._seen = contract
            if self.resolver is None:
                self.resolver = Resolver(spec)
                changes = self.resolver.upsert(self.log.load())
                changes.events = []
                changes.deletes.extend(sorted(self.graph.canonical_ids() - self.resolver.written))
                self._apply(changes)
            else:
                self._apply(self.resolver.set_spec(spec))

    def on_written(self, entities: Sequence[EntityWrite]) -> None:
        if self.resolver is None or not entities:
            return
        with self._lock:
            members = members_from(entities, self.resolver.spec)
            if not members:
                return
            self.log.put(members)
            self._apply(self.resolver.upsert(members))

    def on_retracted(self, refs: Sequence[SourceRecordRef]) -> None:
        if self.resolver is None or not refs:
            return
        with self._lock:
            sids = [r.sid for r in refs]
            self.log.delete(sids)
            self._apply(self.resolver.remove(sids))

    def _apply(self, changes: Changes) -> None:
        if changes.upserts or changes.deletes:
            self.graph.write_canonical(changes.upserts, changes.deletes)
        for ev in changes.events:
            metrics.CLUSTER_EVENTS.labels(ev.kind).inc()
            log.info("entity resolution: %s of %s into %s (%d records)", ev.kind, ", ".join(ev.from_),
                     ", ".join(ev.into), ev.records)  # fmt: skip
        self.events.extend(changes.events)
        del self.events[:-1000]
