"""Bulk writes of a planned table into the embedded graph store: the same rows and the same SQL as
``EmbeddedGraphStore.upsert_entities`` / ``upsert_edges``, from Arrow tables built column by column (issue 15.3,
the columnar path) instead of one ``EntityWrite`` / ``EdgeWrite`` object per record."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import pyarrow as pa

from esc.agents.stores.embedded.db import scalar
from esc.agents.stores.embedded.graph import EmbeddedGraphStore, _bump


@dataclass
class BulkRows:
    """Column lists of one write: entities (deduplicated by eid, later rows won), source records, DERIVED_FROM
    links, edges (deduplicated by (type, src, dst)) and the endpoints edges may need as stubs."""

    eid: list[int] = field(default_factory=list)
    label: list[str] = field(default_factory=list)
    key_json: list[str] = field(default_factory=list)
    props: list[str] = field(default_factory=list)
    sid: list[str] = field(default_factory=list)
    source: list[str] = field(default_factory=list)
    record_id: list[str] = field(default_factory=list)
    location: list[str] = field(default_factory=list)
    file: list[str | None] = field(default_factory=list)
    link_eid: list[int] = field(default_factory=list)
    link_sid: list[str] = field(default_factory=list)
    edges: dict[tuple[str, int, int], int] = field(default_factory=dict)
    stubs: dict[int, tuple[str, str, str]] = field(default_factory=dict)
    keys: set[tuple[str, tuple[str, ...]]] = field(default_factory=set)


def write_bulk(store: EmbeddedGraphStore, rows: BulkRows, version: int) -> tuple[int, int]:
    """Entities, source records and links, then edges (stubs for endpoints not written): (entities, edges)."""
    db = store._db
    entities = pa.table({"eid": pa.array(rows.eid, pa.int64()), "label": pa.array(rows.label, pa.string()),
                         "key_json": pa.array(rows.key_json, pa.string()), "props": pa.array(rows.props, pa.string())})  # fmt: skip
    recs = pa.table({"sid": pa.array(rows.sid, pa.string()), "source": pa.array(rows.source, pa.string()),
                     "record_id": pa.array(rows.record_id, pa.string()),
                     "location": pa.array(rows.location, pa.string()), "file": pa.array(rows.file, pa.string())})  # fmt: skip
    derived = pa.table({"eid": pa.array(rows.link_eid, pa.int64()), "sid": pa.array(rows.link_sid, pa.string())})
    edges = pa.table({"type": pa.array([t for t, _, _ in rows.edges], pa.string()),
                      "src": pa.array([s for _, s, _ in rows.edges], pa.int64()),
                      "dst": pa.array([d for _, _, d in rows.edges], pa.int64()),
                      "v": pa.array(list(rows.edges.values()), pa.int32())})  # fmt: skip
    targets = pa.table({"eid": pa.array(list(rows.stubs), pa.int64()),
                        "label": pa.array([s[0] for s in rows.stubs.values()], pa.string()),
                        "key_json": pa.array([s[1] for s in rows.stubs.values()], pa.string()),
                        "props": pa.array([s[2] for s in rows.stubs.values()], pa.string())})  # fmt: skip
    names = ("esc_bulk_entities", "esc_bulk_recs", "esc_bulk_derived", "esc_bulk_edges", "esc_bulk_targets")
    with db.write() as con:
        _bump(con)
        for name, t in zip(names, (entities, recs, derived, edges, targets), strict=True):
            con.register(name, t)
        try:
            if rows.eid:
                con.execute(
                    "INSERT INTO entities SELECT eid, label, key_json, props::JSON, $v, false FROM esc_bulk_entities "
                    "ON CONFLICT (eid) DO UPDATE SET props = json_merge_patch(entities.props, excluded.props), "
                    "contract_version = excluded.contract_version, stub = false",
                    {"v": version},
                )
                con.execute(
                    "INSERT INTO source_records SELECT sid, source, record_id, location, file FROM esc_bulk_recs "
                    "ON CONFLICT (sid) DO UPDATE SET source = excluded.source, record_id = excluded.record_id, "
                    "location = excluded.location, file = excluded.file"
                )
                con.execute("INSERT INTO derived_from SELECT eid, sid FROM esc_bulk_derived ON CONFLICT DO NOTHING")
                con.executemany("INSERT INTO entity_keys VALUES (?, ?) ON CONFLICT DO NOTHING",
                                [[label, json.dumps(sorted(k))] for label, k in sorted(rows.keys)])  # fmt: skip
            live = 0
            if rows.edges:
                con.execute(
                    "INSERT INTO entities SELECT t.eid, t.label, t.key_json, t.props::JSON, NULL, true "
                    "FROM esc_bulk_targets t ON CONFLICT DO NOTHING"
                )
                con.execute(
                    "INSERT INTO edges SELECT type, src, dst, v FROM esc_bulk_edges "
                    "ON CONFLICT (type, src, dst) DO UPDATE SET contract_version = excluded.contract_version"
                )
                live = int(scalar(con, "SELECT count(*) FROM esc_bulk_edges"))
        finally:
            for name in names:
                con.unregister(name)
    return len(rows.eid), live
