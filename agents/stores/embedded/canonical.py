"""Canonical entities of entity resolution in the embedded store (the model of the Neo4j adapter): a node labelled
``_Canonical`` keyed by its cluster id, ``SAME_AS`` edges from its members (their ``score`` and ``evidence`` in
``edge_props``), ``DERIVED_FROM`` rows to its members' source records. Values travel as parameters only."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from esc.agents.reconcile.model import CANONICAL, CID, SAME_AS, CanonicalWrite
from esc.agents.stores.cypher import to_properties
from esc.agents.stores.embedded.db import Database

EDGE_PROPS = (
    "CREATE TABLE IF NOT EXISTS edge_props (type VARCHAR NOT NULL, src BIGINT NOT NULL, dst BIGINT NOT NULL, "
    "props JSON NOT NULL, PRIMARY KEY (type, src, dst))"
)


def write_canonical(db: Database, upserts: Sequence[CanonicalWrite], deletes: Sequence[str]) -> int:
    from esc.agents.stores.embedded.graph import _bump, _dumps, _finite, entity_id, key_json

    gone = [entity_id(CANONICAL, {CID: cid}) for cid in [*deletes, *(u.cid for u in upserts)]]
    nodes: list[list[Any]] = []
    edges: list[list[Any]] = []
    props: list[list[Any]] = []
    derived: list[list[Any]] = []
    for u in upserts:
        eid = entity_id(CANONICAL, {CID: u.cid})
        nodes.append([eid, CANONICAL, key_json({CID: u.cid}), _dumps(_finite(to_properties(u.props)))])
        for m in u.members:
            src = entity_id(m.label, m.key)
            edges.append([SAME_AS, src, eid])
            props.append([SAME_AS, src, eid, json.dumps({"score": m.score, "evidence": m.evidence})])
        derived.extend([eid, sid] for sid in sorted(set(u.sids)))
    with db.write() as con:
        _bump(con)
        con.execute(EDGE_PROPS)
        if gone:
            ids = {"ids": gone}
            con.execute("DELETE FROM edges WHERE type = $t AND list_contains($ids, dst)", {**ids, "t": SAME_AS})
            con.execute("DELETE FROM edge_props WHERE type = $t AND list_contains($ids, dst)", {**ids, "t": SAME_AS})
            con.execute("DELETE FROM derived_from WHERE list_contains($ids, eid)", ids)
            con.execute("DELETE FROM entities WHERE list_contains($ids, eid)", ids)
        if nodes:
            con.executemany("INSERT INTO entities VALUES (?, ?, ?, ?::JSON, NULL, false)", nodes)
        if edges:
            # only members that exist (a member retracted in the same batch has no node to point from)
            con.executemany(
                "INSERT INTO edges SELECT ?, ?, ?, NULL WHERE EXISTS (SELECT 1 FROM entities WHERE eid = ?) "
                "ON CONFLICT DO NOTHING",
                [[t, s, d, s] for t, s, d in edges],
            )
            con.executemany("INSERT INTO edge_props VALUES (?, ?, ?, ?::JSON) ON CONFLICT DO NOTHING", props)
        if derived:
            con.executemany("INSERT INTO derived_from VALUES (?, ?) ON CONFLICT DO NOTHING", derived)
    return len(upserts)


def canonical_ids(db: Database) -> set[str]:
    with db.read() as con:
        rows = con.execute(
            "SELECT json_extract_string(props, $p) FROM entities WHERE label = $l", {"p": "$." + CID, "l": CANONICAL}
        ).fetchall()
    return {r[0] for r in rows if r[0] is not None}
