"""Recording fakes of the store ports: they keep what was written (keyed like the real stores MERGE) and every call."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from esc.agents.stores.base import GraphStore, VectorStore
from esc.agents.types import EdgeWrite, EntityWrite, SourceRecordRef, TextObject

NodeId = tuple[str, tuple[tuple[str, Any], ...]]


def node_id(label: str, key: dict[str, Any]) -> NodeId:
    return (label, tuple(sorted(key.items())))


class RecordingGraph(GraphStore):
    """MERGE semantics in memory: nodes by (label, key), edges by (type, from, to), provenance per node."""

    def __init__(self) -> None:
        self.nodes: dict[NodeId, dict[str, Any]] = {}
        self.stubs: set[NodeId] = set()
        self.edges: dict[tuple[str, NodeId, NodeId], int] = {}
        self.derived: dict[NodeId, set[str]] = {}  # node -> source record sids
        self.records: dict[str, SourceRecordRef] = {}
        self.constraints: set[tuple[str, tuple[str, ...]]] = set()
        self.calls: list[str] = []

    def ensure_entity_key(self, label: str, key_props: Sequence[str]) -> None:
        self.calls.append("ensure_entity_key")
        self.constraints.add((label, tuple(key_props)))

    def upsert_entities(self, rows: Sequence[EntityWrite]) -> int:
        self.calls.append("upsert_entities")
        for r in rows:
            nid = node_id(r.label, r.key)
            props = self.nodes.setdefault(nid, {})
            props.update(r.properties)
            props.update(r.key)
            props["_contract_version"] = r.contract_version
            self.stubs.discard(nid)
            self.records[r.provenance.sid] = r.provenance
            self.derived.setdefault(nid, set()).add(r.provenance.sid)
        return len(rows)

    def upsert_edges(self, rows: Sequence[EdgeWrite]) -> int:
        self.calls.append("upsert_edges")
        n = 0
        for r in rows:
            a, b = node_id(r.from_label, r.from_key), node_id(r.to_label, r.to_key)
            for node, key in ((a, r.from_key), (b, r.to_key)):  # MERGE both ends: unseen ones become stubs
                if node not in self.nodes:
                    self.nodes[node] = dict(key)
                    self.stubs.add(node)
            self.edges[(r.type, a, b)] = r.contract_version
            n += 1
        return n

    def retract_source_records(self, refs: Sequence[SourceRecordRef]) -> int:
        self.calls.append("retract_source_records")
        sids = {r.sid for r in refs}
        for nid, sup in list(self.derived.items()):
            if sup & sids and not sup - sids:
                del self.derived[nid]
                self.nodes.pop(nid, None)
                for e in [e for e in self.edges if nid in (e[1], e[2])]:
                    del self.edges[e]
            elif sup & sids:
                sup -= sids
        gone = [s for s in sids if s in self.records]
        for s in gone:
            del self.records[s]
        return len(gone)

    def source_records_for_file(self, file: str) -> list[SourceRecordRef]:
        return [r for r in self.records.values() if r.file == file]

    def count(self, label: str) -> int:
        return sum(1 for nid in self.nodes if nid[0] == label and nid not in self.stubs)

    def read(self, query: str, params: dict[str, Any] | None = None) -> list[dict[str, Any]]:
        raise NotImplementedError

    def run_plan(self, plan: Any) -> list[Any]:
        raise NotImplementedError

    def close(self) -> None:
        pass

    def edge_count(self, rel_type: str) -> int:
        return sum(1 for e in self.edges if e[0] == rel_type)


class RecordingVectors(VectorStore):
    def __init__(self) -> None:
        self.objects: dict[str, dict[str, TextObject]] = {}
        self.collections: set[str] = set()

    def ensure_collection(self, name: str) -> None:
        self.collections.add(name)

    def upsert(self, collection: str, objects: Sequence[TextObject]) -> int:
        col = self.objects.setdefault(collection, {})
        for o in objects:
            assert o.vector is not None, "vectors are computed before upsert"
            col[o.object_id] = o
        return len(objects)

    def delete_by_record(self, collection: str, source: str, record_ids: Sequence[str]) -> int:
        col = self.objects.get(collection, {})
        ids = set(record_ids)
        gone = [k for k, o in col.items() if o.provenance.source == source and o.provenance.record_id in ids]
        for k in gone:
            del col[k]
        return len(gone)

    def near_vector(self, collection: str, vector: Sequence[float], limit: int = 5) -> list[dict[str, Any]]:
        raise NotImplementedError

    def count(self, collection: str) -> int:
        return len(self.objects.get(collection, {}))

    def close(self) -> None:
        pass
