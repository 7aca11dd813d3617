"""Canonical entities in the in-memory reference store (agents/query/memstore.py): the same model as Neo4j's."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from esc.agents.reconcile.model import CANONICAL, CID, SAME_AS, CanonicalWrite


def _drop(store: Any, cid: str) -> None:
    from esc.agents.query.memstore import _nid

    nid = _nid(CANONICAL, {CID: cid})
    if nid not in store.nodes:
        return
    for member in list(store.inc.get((nid, SAME_AS), ())):
        store.out[(member, SAME_AS)].discard(nid)
        store.edge_props.pop((SAME_AS, member, nid), None)
    store.inc.pop((nid, SAME_AS), None)
    del store.nodes[nid]
    store.by_label[CANONICAL].remove(nid)


def write_canonical(store: Any, upserts: Sequence[CanonicalWrite], deletes: Sequence[str]) -> int:
    from esc.agents.query.memstore import _nid
    from esc.agents.stores.cypher import to_properties

    for cid in [*deletes, *(u.cid for u in upserts)]:
        _drop(store, cid)
    records: dict[str, dict[str, Any]] = {}
    wanted = {sid for u in upserts for sid in u.sids}
    if wanted:
        for node in store.nodes.values():
            for sid in wanted & node.records.keys():
                records[sid] = node.records[sid]
    for u in upserts:
        nid, node = store._node(CANONICAL, {CID: u.cid})
        node.props = dict(to_properties(u.props))
        node.records = {sid: records[sid] for sid in u.sids if sid in records}
        for m in u.members:
            mid = _nid(m.label, m.key)
            if mid not in store.nodes:
                continue
            store.out[(mid, SAME_AS)].add(nid)
            store.inc[(nid, SAME_AS)].add(mid)
            store.edge_props[(SAME_AS, mid, nid)] = {"score": m.score, "evidence": m.evidence}
    return len(upserts)
