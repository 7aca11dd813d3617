"""Text chunks and mentions in Neo4j: ``(:Chunk {id, text, source, record_id, ...})`` nodes and
``(:Chunk)-[:MENTIONS {start, end, surface, score, field, value}]->(entity)`` edges (the ``ChunkStore`` port).

Labels and property names are escaped identifiers from the contract; every value is a parameter.
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from esc.agents.chunk_graph import ChunkRow, MentionWrite, row_of
from esc.agents.stores.cypher import Sent, ident
from esc.agents.types import TextObject

CHUNK = "Chunk"
MENTIONS = "MENTIONS"
_FIELDS = tuple(ChunkRow.model_fields)


class Neo4jChunks:
    """Mixed into ``Neo4jGraphStore`` (``_driver``, ``_database``, ``_label``, ``ensure_entity_key``)."""

    _driver: Any
    _database: str | None
    _chunk_index_ready = False  # set per store once the index exists

    def _label(self, label: str) -> str:  # pragma: no cover - provided by the store
        raise NotImplementedError

    def ensure_entity_key(self, label: str, key_props: Sequence[str]) -> None:  # pragma: no cover
        raise NotImplementedError

    def _exec(self, query: str, **params: Any) -> Any:
        """``execute_query`` with ``params``, then the lists passed are emptied. The driver keeps a query's
        parameters in a reference cycle, so every batch's rows (a dict and its lists per record) lived on until a
        full garbage collection, which the worker's tuned collector runs rarely: ~260 MB of worker RSS at TPC-H
        SF 0.05. The lists sent are copies (``Sent``: a short ``repr``), so a caller (or a retry) still has its own."""
        sent = {k: Sent(v) if isinstance(v, list) else v for k, v in params.items()}
        try:
            return self._driver.execute_query(query, parameters_=sent, database_=self._database)
        finally:
            for v in sent.values():
                if isinstance(v, list):
                    v.clear()

    def _run(self, query: str, **params: Any) -> list[dict[str, Any]]:
        records, _, _ = self._exec(query, **params)
        return [r.data() for r in records]

    def _chunk(self) -> str:
        return self._label(CHUNK)

    def _ensure_record_index(self) -> None:
        """An index on ``(source, record_id)``: a batch's chunks replace those of its records, found by these two
        properties; without it each batch scanned every Chunk node (measured with 70,000 chunks, about what TPC-H SF 0.1
        holds: 43-130 ms a batch, ~15 ms with the index; the scan grew with the graph)."""
        if self._chunk_index_ready:
            return
        name = "esc_chunk_record_" + hashlib.sha1(self._chunk().encode()).hexdigest()[:12]
        self._driver.execute_query(
            f"CREATE INDEX {ident(name)} IF NOT EXISTS FOR (c:{self._chunk()}) ON (c.source, c.record_id)",
            database_=self._database,
        )
        self._chunk_index_ready = True

    def upsert_chunks(self, chunks: Sequence[TextObject]) -> int:
        if not chunks:
            return 0
        self.ensure_entity_key(CHUNK, ["id"])
        rows = [row_of(c).model_dump() for c in {c.object_id: c for c in chunks}.values()]
        by_source: dict[str, set[str]] = defaultdict(set)
        for r in rows:
            by_source[r["source"]].add(r["record_id"])
        self._ensure_record_index()
        gone = [{"s": source, "ids": sorted(ids)} for source, ids in sorted(by_source.items())]
        # One transaction: the records' old chunks out (a re-sent record with shorter text keeps no trailing
        # chunk), the new ones in (``count`` leaves one row when nothing was deleted).
        self._run(f"UNWIND $gone AS g MATCH (c:{self._chunk()}) WHERE c.source = g.s AND c.record_id IN g.ids "
                  "DETACH DELETE c WITH count(*) AS _ "
                  f"UNWIND $rows AS row CREATE (c:{self._chunk()}) SET c = row, c.linked = ''",
                  gone=gone, rows=rows)  # fmt: skip
        return len(rows)

    def delete_chunks(self, source: str, record_ids: Sequence[str]) -> int:
        if not record_ids:
            return 0
        self._ensure_record_index()
        out = self._run(f"MATCH (c:{self._chunk()}) WHERE c.source = $s AND c.record_id IN $ids "
                        "DETACH DELETE c RETURN count(*) AS n", s=source, ids=list(record_ids))  # fmt: skip
        return int(out[0]["n"]) if out else 0

    def chunks_to_link(self, fingerprint: str, limit: int) -> list[ChunkRow]:
        rows = self._run(f"MATCH (c:{self._chunk()}) WHERE c.linked <> $fp RETURN c ORDER BY c.id LIMIT $n",
                         fp=fingerprint, n=int(limit))  # fmt: skip
        return [ChunkRow(**{k: r["c"].get(k) for k in _FIELDS if r["c"].get(k) is not None}) for r in rows]

    def replace_mentions(self, chunk_ids: Sequence[str], mentions: Sequence[MentionWrite], fingerprint: str) -> int:
        ids = list(chunk_ids)
        self._run(f"UNWIND $ids AS id MATCH (c:{self._chunk()} {{id: id}}) OPTIONAL MATCH (c)-[m:{MENTIONS}]->() "
                  "DELETE m SET c.linked = $fp", ids=ids, fp=fingerprint)  # fmt: skip
        groups: dict[tuple[str, tuple[str, ...]], list[dict[str, Any]]] = defaultdict(list)
        for m in mentions:
            key = json.loads(m.key)
            names = tuple(sorted(key))
            groups[(m.label, names)].append({"c": m.chunk_id, "k": [key[n] for n in names], "start": m.start,
                                             "end": m.end, "surface": m.surface, "score": m.score, "field": m.field,
                                             "value": m.value, "label": m.label, "key": m.key})  # fmt: skip
        written = 0
        for (label, names), rows in sorted(groups.items()):
            match = ", ".join(f"{ident(n)}: row.k[{i}]" for i, n in enumerate(names))
            out = self._run(
                f"UNWIND $rows AS row MATCH (c:{self._chunk()} {{id: row.c}}) MATCH (e:{self._label(label)} {{{match}}}) "
                f"WHERE e._stub IS NULL CREATE (c)-[m:{MENTIONS}]->(e) SET m.start = row.start, m.end = row.end, "
                "m.surface = row.surface, m.score = row.score, m.field = row.field, m.value = row.value, "
                "m.label = row.label, m.key = row.key "
                "RETURN count(m) AS n",
                rows=rows,
            )
            written += int(out[0]["n"]) if out else 0
        return written

    def chunk_rows(self, after: str, limit: int) -> list[ChunkRow]:
        rows = self._run(f"MATCH (c:{self._chunk()}) WHERE c.id > $after RETURN c ORDER BY c.id LIMIT $n",
                         after=after, n=int(limit))  # fmt: skip
        return [ChunkRow(**{k: r["c"].get(k) for k in _FIELDS if r["c"].get(k) is not None}) for r in rows]

    def mentioning(self, label: str, key: str, limit: int) -> list[dict[str, Any]]:
        k = json.loads(key)
        names = sorted(k)
        match = ", ".join(f"{ident(n)}: $k[{i}]" for i, n in enumerate(names))
        rows = self._run(
            f"MATCH (c:{self._chunk()})-[m:{MENTIONS}]->(e:{self._label(label)} {{{match}}}) RETURN c, properties(m) AS m "
            "ORDER BY m.score DESC, c.source, c.record_id, c.chunk_index, m.start LIMIT $n",
            k=[k[n] for n in names], n=int(limit),
        )
        out = []
        for r in rows:
            c, m = r["c"], r["m"]
            out.append({**{f: c.get(f) for f in _FIELDS}, "m_start": m.get("start"), "m_end": m.get("end"),
                        "surface": m.get("surface"), "score": m.get("score")})  # fmt: skip
        return out

    def mentions_in(self, chunk_ids: Sequence[str]) -> list[MentionWrite]:
        if not chunk_ids:
            return []
        rows = self._run(
            f"MATCH (c:{self._chunk()})-[m:{MENTIONS}]->(e) WHERE c.id IN $ids "
            "RETURN c.id AS c, properties(m) AS m ORDER BY c, m.start",
            ids=list(chunk_ids),
        )
        return [MentionWrite(chunk_id=r["c"], label=str(r["m"].get("label") or ""), key=str(r["m"].get("key") or ""), start=r["m"]["start"],
                             end=r["m"]["end"], surface=r["m"]["surface"], score=r["m"]["score"],
                             field=r["m"].get("field") or "", value=r["m"].get("value") or "") for r in rows]  # fmt: skip
