"""Text chunks and their entity mentions in the embedded graph (DuckDB): the ``ChunkStore`` port.

``chunks`` holds one row per chunk (the same ids as its vector), ``linked`` the dictionary fingerprint that last
linked it; ``mentions`` one row per (chunk, entity, offset) with the entity's ``eid`` (``graph.entity_id``), so a
mention joins ``entities`` like a ``MENTIONS`` edge. Values travel as parameters only.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import pyarrow as pa

from esc.agents.chunk_graph import ChunkRow, MentionWrite, row_of
from esc.agents.stores.embedded.db import Database
from esc.agents.types import TextObject

CHUNK_SCHEMA = """
CREATE TABLE IF NOT EXISTS chunks (
    id VARCHAR PRIMARY KEY, text VARCHAR NOT NULL, source VARCHAR NOT NULL, record_id VARCHAR NOT NULL,
    field VARCHAR NOT NULL, chunk_index INTEGER NOT NULL, start INTEGER NOT NULL, location VARCHAR NOT NULL,
    file VARCHAR NOT NULL, entity_label VARCHAR NOT NULL, entity_key VARCHAR NOT NULL, linked VARCHAR NOT NULL
);
CREATE TABLE IF NOT EXISTS mentions (
    chunk_id VARCHAR NOT NULL, eid BIGINT NOT NULL, label VARCHAR NOT NULL, key_json VARCHAR NOT NULL,
    start INTEGER NOT NULL, "end" INTEGER NOT NULL, surface VARCHAR NOT NULL, score DOUBLE NOT NULL,
    field VARCHAR NOT NULL, value VARCHAR NOT NULL, PRIMARY KEY (chunk_id, eid, start)
);
"""
_COLS = ("id", "text", "source", "record_id", "field", "chunk_index", "start", "location", "file", "entity_label",
         "entity_key")  # fmt: skip


def _row(r: Sequence[Any]) -> ChunkRow:
    return ChunkRow(**dict(zip(_COLS, r, strict=True)))


class ChunkTables:
    """Mixed into ``EmbeddedGraphStore`` (which owns ``_db``)."""

    _db: Database

    def _ensure_chunk_tables(self) -> None:
        with self._db.write() as con:
            con.execute(CHUNK_SCHEMA)

    def upsert_chunks(self, chunks: Sequence[TextObject]) -> int:
        if not chunks:
            return 0
        rows = {c.object_id: row_of(c) for c in chunks}
        by_source: dict[str, set[str]] = {}
        for r in rows.values():
            by_source.setdefault(r.source, set()).add(r.record_id)
        table = pa.table({c: [getattr(r, c) for r in rows.values()] for c in _COLS})
        with self._db.write() as con:
            for source, ids in sorted(by_source.items()):
                self._delete(con, source, sorted(ids))
            con.register("esc_chunks", table)
            try:
                con.execute(f"INSERT INTO chunks SELECT {', '.join(_COLS)}, '' FROM esc_chunks")
            finally:
                con.unregister("esc_chunks")
        return len(rows)

    @staticmethod
    def _delete(con: Any, source: str, record_ids: list[str]) -> int:
        params = {"s": source, "ids": record_ids}
        con.execute("DELETE FROM mentions WHERE chunk_id IN (SELECT id FROM chunks WHERE source = $s AND "
                    "list_contains($ids, record_id))", params)  # fmt: skip
        return len(con.execute("DELETE FROM chunks WHERE source = $s AND list_contains($ids, record_id) RETURNING id",
                               params).fetchall())  # fmt: skip

    def delete_chunks(self, source: str, record_ids: Sequence[str]) -> int:
        if not record_ids:
            return 0
        with self._db.write() as con:
            return self._delete(con, source, list(record_ids))

    def chunks_to_link(self, fingerprint: str, limit: int) -> list[ChunkRow]:
        with self._db.read() as con:
            rows = con.execute(f"SELECT {', '.join(_COLS)} FROM chunks WHERE linked <> ? ORDER BY id LIMIT ?",
                               [fingerprint, int(limit)]).fetchall()  # fmt: skip
        return [_row(r) for r in rows]

    def replace_mentions(self, chunk_ids: Sequence[str], mentions: Sequence[MentionWrite], fingerprint: str) -> int:
        from esc.agents.stores.embedded.graph import entity_id

        ids = list(chunk_ids)
        seen: dict[tuple[str, int, int], MentionWrite] = {}
        for m in mentions:
            seen.setdefault((m.chunk_id, entity_id(m.label, json.loads(m.key)), m.start), m)
        table = pa.table({
            "chunk_id": [k[0] for k in seen], "eid": pa.array([k[1] for k in seen], pa.int64()),
            "label": [m.label for m in seen.values()], "key_json": [m.key for m in seen.values()],
            "start": [m.start for m in seen.values()], "end": [m.end for m in seen.values()],
            "surface": [m.surface for m in seen.values()], "score": pa.array([m.score for m in seen.values()], pa.float64()),
            "field": [m.field for m in seen.values()], "value": [m.value for m in seen.values()],
        })  # fmt: skip
        written = 0
        with self._db.write() as con:
            con.execute("DELETE FROM mentions WHERE list_contains(?, chunk_id)", [ids])
            con.execute("UPDATE chunks SET linked = ? WHERE list_contains(?, id)", [fingerprint, ids])
            if seen:
                con.register("esc_mentions", table)
                try:
                    # a mention of an entity the graph does not hold (any more) is not written
                    row = con.execute("INSERT INTO mentions SELECT m.* FROM esc_mentions m JOIN chunks c ON c.id = m.chunk_id "
                                      "WHERE EXISTS (SELECT 1 FROM entities e WHERE e.eid = m.eid AND NOT e.stub)").fetchone()  # fmt: skip
                    written = int(row[0]) if row else 0
                finally:
                    con.unregister("esc_mentions")
        return written

    def chunk_rows(self, after: str, limit: int) -> list[ChunkRow]:
        with self._db.read() as con:
            rows = con.execute(f"SELECT {', '.join(_COLS)} FROM chunks WHERE id > ? ORDER BY id LIMIT ?",
                               [after, int(limit)]).fetchall()  # fmt: skip
        return [_row(r) for r in rows]

    def mentioning(self, label: str, key: str, limit: int) -> list[dict[str, Any]]:
        from esc.agents.stores.embedded.graph import entity_id

        cols = ", ".join(f"c.{c}" for c in _COLS)
        with self._db.read() as con:
            cur = con.execute(
                f"SELECT {cols}, m.start AS m_start, m.\"end\" AS m_end, m.surface, m.score FROM mentions m JOIN chunks c ON c.id = m.chunk_id "
                "JOIN entities e ON e.eid = m.eid WHERE m.eid = ? ORDER BY m.score DESC, c.source, c.record_id, c.chunk_index, m.start LIMIT ?",
                [entity_id(label, json.loads(key)), int(limit)],
            )
            names = [d[0] for d in cur.description]
            return [dict(zip(names, r, strict=True)) for r in cur.fetchall()]

    def mentions_in(self, chunk_ids: Sequence[str]) -> list[MentionWrite]:
        if not chunk_ids:
            return []
        with self._db.read() as con:
            rows = con.execute(
                'SELECT chunk_id, label, key_json, start, "end", surface, score, field, value FROM mentions '
                "WHERE list_contains(?, chunk_id) ORDER BY chunk_id, start, label, key_json", [list(chunk_ids)]
            ).fetchall()
        return [MentionWrite(chunk_id=r[0], label=r[1], key=r[2], start=r[3], end=r[4], surface=r[5], score=r[6],
                             field=r[7], value=r[8]) for r in rows]  # fmt: skip
