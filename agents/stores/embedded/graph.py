"""Embedded graph store: entities, relationships and provenance in one DuckDB file, no server.

Same logical model as the Neo4j adapter (agents/stores/neo4j.py), so agents and answers do not change with the
backend:

- ``entities``: one row per (label, identity key); ``eid`` is a 64-bit hash of both, ``props`` holds the node's
  properties as JSON (the same values Neo4j would hold: ``to_properties`` converts them identically), ``stub`` marks
  a node created only as the target of an edge, until its own record fills it.
- ``edges``: (type, src, dst) is unique, as ``MERGE (a)-[:T]->(b)`` is.
- ``source_records`` and ``derived_from``: the ``SourceRecord`` nodes and ``DERIVED_FROM`` edges of the graph model.

Labels, keys and property names are data: they only ever travel as values (a label is a column value, a property
name a JSON pointer parameter), never spliced into SQL.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa

from esc.agents.query.plan import PlanRow, QueryPlan
from esc.agents.stores.base import GraphStore
from esc.agents.stores.cypher import to_properties
from esc.agents.stores.embedded.chunks import ChunkTables
from esc.agents.stores.embedded.db import MEMORY, Database, scalar
from esc.agents.stores.embedded.ids import (  # noqa: F401  (re-exported: canonical.py, chunks.py use them from here)
    EndpointMemo,
    _canonical,
    _dumps,
    _finite,
    entity_id,
    key_json,
)
from esc.agents.stores.embedded.sql import compile_plan, decode_row, json_pointer
from esc.agents.stores.embedded.sql_rows import loads_cell
from esc.agents.types import EdgeWrite, EntityWrite, SourceRecordRef

log = logging.getLogger(__name__)

SOURCE_RECORD = "SourceRecord"
SCHEMA_VERSION = "1"

SCHEMA = """
CREATE TABLE IF NOT EXISTS esc_meta (k VARCHAR PRIMARY KEY, v VARCHAR);
CREATE TABLE IF NOT EXISTS entities (
    eid BIGINT PRIMARY KEY,
    label VARCHAR NOT NULL,
    key_json VARCHAR NOT NULL,
    props JSON NOT NULL,
    contract_version INTEGER,
    stub BOOLEAN NOT NULL
);
CREATE TABLE IF NOT EXISTS edges (
    type VARCHAR NOT NULL,
    src BIGINT NOT NULL,
    dst BIGINT NOT NULL,
    contract_version INTEGER,
    PRIMARY KEY (type, src, dst)
);
CREATE TABLE IF NOT EXISTS source_records (
    sid VARCHAR PRIMARY KEY,
    source VARCHAR NOT NULL,
    record_id VARCHAR NOT NULL,
    location VARCHAR,
    file VARCHAR
);
CREATE TABLE IF NOT EXISTS derived_from (eid BIGINT NOT NULL, sid VARCHAR NOT NULL, PRIMARY KEY (eid, sid));
CREATE TABLE IF NOT EXISTS entity_keys (label VARCHAR NOT NULL, key_props VARCHAR NOT NULL, PRIMARY KEY (label, key_props));
"""


def _bump(con: Any) -> None:
    con.execute(
        "INSERT INTO esc_meta VALUES ('generation', '1') ON CONFLICT (k) DO UPDATE "
        "SET v = CAST(CAST(esc_meta.v AS BIGINT) + 1 AS VARCHAR)"
    )


class EmbeddedGraphStore(ChunkTables, GraphStore):
    """``path`` is a DuckDB file (created with its folder) or ``":memory:"``."""

    def __init__(self, path: str | Path = MEMORY) -> None:
        self._db = Database(path)
        with self._db.write() as con:
            con.execute(SCHEMA)
            version = scalar(con, "SELECT v FROM esc_meta WHERE k = 'schema_version'")
            if version is None:
                con.execute("INSERT INTO esc_meta VALUES ('schema_version', ?)", [SCHEMA_VERSION])
            elif version != SCHEMA_VERSION:
                raise RuntimeError(
                    f"{path}: embedded graph schema version {version} is not {SCHEMA_VERSION}; "
                    "rebuild it by re-ingesting into a fresh ESC_STATE_DIR"
                )
        self._ensure_chunk_tables()  # text chunks and their mentions (agents/stores/embedded/chunks.py)
        self._endpoints = EndpointMemo()  # (eid, key_json, key props) per (label, key), bounded

    @property
    def path(self) -> str:
        return self._db.path

    # -- schema -------------------------------------------------------------------------------------------------
    def ensure_entity_key(self, label: str, key_props: Sequence[str]) -> None:
        """Identity is (label, key values) by construction (``eid``); the declared key is recorded for readers."""
        if not key_props:
            return
        with self._db.write() as con:
            con.execute(
                "INSERT INTO entity_keys VALUES (?, ?) ON CONFLICT DO NOTHING",
                [label, json.dumps(sorted(key_props))],
            )

    # -- writes -------------------------------------------------------------------------------------------------
    def upsert_entities(self, rows: Sequence[EntityWrite]) -> int:
        entities: dict[int, dict[str, Any]] = {}
        records: dict[str, SourceRecordRef] = {}
        links: set[tuple[int, str]] = set()
        keys: set[tuple[str, tuple[str, ...]]] = set()
        written = 0
        for row in rows:
            if not row.key or None in row.key.values():
                log.warning("entity %s skipped: identity key %r has no value", row.label, row.key)
                continue
            eid, kj, _ = self._endpoints.get(row.label, row.key)
            props = _finite({**to_properties(row.properties), **to_properties(row.key)})
            current = entities.get(eid)
            if current is None:
                entities[eid] = {
                    "label": row.label,
                    "key": kj,
                    "props": props,
                    "v": row.contract_version,
                }
            else:  # the same entity twice in one batch: later values win, as sequential MERGE ... SET would
                current["props"] = {**current["props"], **props}
                current["v"] = row.contract_version
            sid = row.provenance.sid
            records[sid] = row.provenance
            links.add((eid, sid))
            keys.add((row.label, tuple(row.key)))
            written += 1
        if not entities:
            return 0
        batch = pa.table(
            {
                "eid": pa.array(list(entities), pa.int64()),
                "label": [e["label"] for e in entities.values()],
                "key_json": [e["key"] for e in entities.values()],
                "props": [_dumps(e["props"]) for e in entities.values()],
                "v": pa.array([e["v"] for e in entities.values()], pa.int32()),
            }
        )
        recs = pa.table(
            {
                "sid": list(records),
                "source": [r.source for r in records.values()],
                "record_id": [r.record_id for r in records.values()],
                "location": [r.location for r in records.values()],
                "file": pa.array([r.file for r in records.values()], pa.string()),
            }
        )
        derived = pa.table({"eid": pa.array([e for e, _ in links], pa.int64()), "sid": [s for _, s in links]})
        with self._db.write() as con:
            _bump(con)
            con.register("esc_batch", batch)
            con.register("esc_recs", recs)
            con.register("esc_derived", derived)
            try:
                con.execute(
                    "INSERT INTO entities SELECT eid, label, key_json, props::JSON, v, false FROM esc_batch "
                    "ON CONFLICT (eid) DO UPDATE SET props = json_merge_patch(entities.props, excluded.props), "
                    "contract_version = excluded.contract_version, stub = false"
                )
                con.execute(
                    "INSERT INTO source_records SELECT sid, source, record_id, location, file FROM esc_recs "
                    "ON CONFLICT (sid) DO UPDATE SET source = excluded.source, record_id = excluded.record_id, "
                    "location = excluded.location, file = excluded.file"
                )
                con.execute(
                    "INSERT INTO derived_from SELECT eid, sid FROM esc_derived ON CONFLICT DO NOTHING"
                )
                con.executemany(
                    "INSERT INTO entity_keys VALUES (?, ?) ON CONFLICT DO NOTHING",
                    [[label, json.dumps(sorted(k))] for label, k in keys],
                )
            finally:
                for name in ("esc_batch", "esc_recs", "esc_derived"):
                    con.unregister(name)
        return written

    def upsert_edges(self, rows: Sequence[EdgeWrite]) -> int:
        """Edges; an endpoint not seen yet (a target, or a nested child's parent written by another batch) is
        created as a stub (``stub = true``, props = its key) that its own record fills in later, so arrival order
        never loses an edge. Returns edges written."""
        edges: dict[tuple[str, int, int], int] = {}
        stubs: dict[int, tuple[str, str, str]] = {}
        for row in rows:
            if not row.from_key or not row.to_key or None in row.from_key.values() or None in row.to_key.values():
                log.warning(
                    "edge %s skipped: an endpoint key has no value (%r -> %r)",
                    row.type,
                    row.from_key,
                    row.to_key,
                )
                continue
            (src, src_kj, src_props), (dst, dst_kj, dst_props) = (
                self._endpoints.get(row.from_label, row.from_key), self._endpoints.get(row.to_label, row.to_key))
            edges[(row.type, src, dst)] = row.contract_version
            stubs.setdefault(src, (row.from_label, src_kj, src_props))
            stubs[dst] = (row.to_label, dst_kj, dst_props)
        if not edges:
            return 0
        batch = pa.table(
            {
                "type": [t for t, _, _ in edges],
                "src": pa.array([s for _, s, _ in edges], pa.int64()),
                "dst": pa.array([d for _, _, d in edges], pa.int64()),
                "v": pa.array(list(edges.values()), pa.int32()),
            }
        )
        targets = pa.table(
            {
                "eid": pa.array(list(stubs), pa.int64()),
                "label": [s[0] for s in stubs.values()],
                "key_json": [s[1] for s in stubs.values()],
                "props": [s[2] for s in stubs.values()],
            }
        )
        with self._db.write() as con:
            _bump(con)
            con.register("esc_edges", batch)
            con.register("esc_targets", targets)
            try:
                # like MERGE (a) MERGE (b): an endpoint not seen yet becomes a stub its own record fills in
                con.execute("CREATE OR REPLACE TEMP TABLE esc_live AS SELECT e.* FROM esc_edges e")
                con.execute(
                    "INSERT INTO entities SELECT t.eid, t.label, t.key_json, t.props::JSON, NULL, true "
                    "FROM esc_targets t ON CONFLICT DO NOTHING"
                )
                con.execute(
                    "INSERT INTO edges SELECT type, src, dst, v FROM esc_live "
                    "ON CONFLICT (type, src, dst) DO UPDATE SET contract_version = excluded.contract_version"
                )
                live = int(scalar(con, "SELECT count(*) FROM esc_live"))
                con.execute("DROP TABLE esc_live")
            finally:
                con.unregister("esc_edges")
                con.unregister("esc_targets")
        return live

    def retract_source_records(self, refs: Sequence[SourceRecordRef]) -> int:
        sids = sorted({r.sid for r in refs})
        if not sids:
            return 0
        with self._db.write() as con:
            _bump(con)
            con.execute(
                "CREATE OR REPLACE TEMP TABLE esc_orphans AS "
                "SELECT DISTINCT d.eid FROM derived_from d WHERE list_contains($sids, d.sid) "
                "AND NOT EXISTS (SELECT 1 FROM derived_from o WHERE o.eid = d.eid AND NOT list_contains($sids, o.sid))",
                {"sids": sids},
            )
            con.execute(
                "DELETE FROM edges WHERE src IN (SELECT eid FROM esc_orphans) OR dst IN (SELECT eid FROM esc_orphans)"
            )
            con.execute("DELETE FROM entities WHERE eid IN (SELECT eid FROM esc_orphans)")
            con.execute("DELETE FROM derived_from WHERE list_contains($sids, sid)", {"sids": sids})
            removed = con.execute(
                "DELETE FROM source_records WHERE list_contains($sids, sid) RETURNING sid", {"sids": sids}
            ).fetchall()
            con.execute("DROP TABLE esc_orphans")
        return len(removed)

    # -- reads --------------------------------------------------------------------------------------------------
    def source_records_for_file(self, file: str) -> list[SourceRecordRef]:
        """The source records read from ``file`` (what retracting a deleted file removes)."""
        with self._db.read() as con:
            rows = con.execute(
                "SELECT source, record_id, location, file FROM source_records WHERE file = ? ORDER BY sid",
                [file],
            ).fetchall()
        return [SourceRecordRef(source=s, record_id=r, location=loc or "", file=f) for s, r, loc, f in rows]

    def count(self, label: str) -> int:
        with self._db.read() as con:
            if label == SOURCE_RECORD:
                return int(scalar(con, "SELECT count(*) FROM source_records"))
            return int(scalar(con, "SELECT count(*) FROM entities WHERE label = ?", [label]))

    def read(self, query: str, params: dict[str, Any] | None = None) -> list[dict[str, Any]]:
        """Run SQL (DuckDB dialect, ``$name`` parameters) over the tables above; nothing it does persists."""
        with self._db.read() as con:
            cur = con.execute(query, params or {})
            if cur.description is None:
                return []
            names = [d[0] for d in cur.description]
            return [dict(zip(names, r, strict=True)) for r in cur.fetchall()]

    def generation(self) -> int | None:
        """A number that changes with every write (so a reader can tell its cached view is stale)."""
        with self._db.read() as con:
            v = scalar(con, "SELECT v FROM esc_meta WHERE k = 'generation'")
        return int(v) if v is not None else 0

    def distinct_values(self, label: str, props: Sequence[str], limit: int) -> list[tuple[Any, ...]]:
        cols = ", ".join(f"json_extract(props, $p{i})" for i in range(len(props)))
        params: dict[str, Any] = {f"p{i}": json_pointer(p) for i, p in enumerate(props)}
        params["label"], params["limit"] = label, int(limit)
        notnull = " AND ".join(f"coalesce(json_type(props, $p{i}), 'NULL') <> 'NULL'" for i in range(len(props)))
        sql = (
            f"SELECT DISTINCT {cols} FROM entities WHERE label = $label AND NOT stub AND {notnull} LIMIT $limit"
        )
        with self._db.read() as con:
            rows = con.execute(sql, params).fetchall()
        return [tuple(loads_cell(c) for c in r) for r in rows]

    def run_plan(self, plan: QueryPlan) -> list[PlanRow]:
        compiled = compile_plan(plan)
        with self._db.read() as con:
            raw = con.execute(compiled.sql, compiled.params).fetchall()
            cited = sorted({eid for r in raw for eid in compiled.cited_ids(r)})
            sources: dict[int, list[dict[str, Any]]] = {}
            if cited:
                for eid, source, record_id, location in con.execute(
                    "SELECT d.eid, s.source, s.record_id, s.location FROM derived_from d "
                    "JOIN source_records s ON s.sid = d.sid WHERE list_contains($ids, d.eid)",
                    {"ids": cited},
                ).fetchall():
                    sources.setdefault(eid, []).append(
                        {"source": source, "record_id": record_id, "location": location or ""}
                    )
        out = []
        for r in raw:
            seen: dict[tuple[str, str, str], dict[str, Any]] = {}
            for eid in compiled.cited_ids(r):
                for c in sources.get(eid, []):
                    seen[(c["source"], c["record_id"], c["location"])] = c
            citations = [seen[k] for k in sorted(seen)]
            if compiled.cite_cap is not None:
                citations = citations[: compiled.cite_cap]
            out.append(PlanRow(values=decode_row(compiled, r), citations=citations))
        return out

    def write_canonical(self, upserts: Sequence[Any], deletes: Sequence[str]) -> int:
        """Canonical entities of entity resolution (agents/stores/embedded/canonical.py)."""
        from esc.agents.stores.embedded.canonical import write_canonical

        return write_canonical(self._db, upserts, deletes)

    def canonical_ids(self) -> set[str]:
        from esc.agents.stores.embedded.canonical import canonical_ids

        return canonical_ids(self._db)

    def close(self) -> None:
        self._db.close()
