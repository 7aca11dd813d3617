"""Embedded vector store: text chunks and their vectors in a DuckDB file, searched by exact cosine in numpy.

DuckDB is the durable copy (one row per (collection, object id), upsert overwrites, so re-delivery never
duplicates). Each collection also lives in memory as a unit-normalised float32 matrix with the objects' properties,
loaded on first use and kept current on every write, so a query is one matrix-vector product and a partial sort
and touches no table (bench/embedded_store.py measures it against DuckDB's own ``list_cosine_similarity`` and
``array_cosine_similarity``: those scan every row per query). Results look like the Weaviate adapter's: the
object's properties, ``id`` and ``similarity = max(0, cosine)`` (Weaviate's ``1 - cosine distance``, clipped).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from esc.agents.stores.base import VectorStore
from esc.agents.stores.embedded.db import MEMORY, Database, scalar
from esc.agents.types import TextObject

PROPERTIES = (
    "text",
    "source",
    "record_id",
    "location",
    "file",
    "entity_label",
    "entity_key",
    "chunk_index",
    "contract_version",
)

SCHEMA = """
CREATE TABLE IF NOT EXISTS collections (name VARCHAR PRIMARY KEY, dim INTEGER);
CREATE TABLE IF NOT EXISTS objects (
    collection VARCHAR NOT NULL,
    id VARCHAR NOT NULL,
    text VARCHAR NOT NULL,
    source VARCHAR NOT NULL,
    record_id VARCHAR NOT NULL,
    location VARCHAR NOT NULL,
    file VARCHAR NOT NULL,
    entity_label VARCHAR NOT NULL,
    entity_key VARCHAR NOT NULL,
    chunk_index INTEGER NOT NULL,
    contract_version INTEGER NOT NULL,
    vec FLOAT[],
    PRIMARY KEY (collection, id)
);
ALTER TABLE objects ADD COLUMN IF NOT EXISTS mentions VARCHAR[];
"""
MENTIONS = "mentions"  # the entity refs of the chunk's MENTIONS (agents/mentions_vectors.py), set by the linker
NO_REFS = "[]::VARCHAR[]"  # a new or rewritten object's refs (older files may hold NULL: read as none too)


class _Index:
    """Unit vectors of one collection in a growable matrix, with each row's properties; ``pos`` maps id to row."""

    def __init__(self, dim: int) -> None:
        self.dim = dim
        self.ids: list[str] = []
        self.props: list[dict[str, Any]] = []
        self.pos: dict[str, int] = {}
        self.mat = np.zeros((0, dim), dtype=np.float32)

    @staticmethod
    def normalise(vecs: np.ndarray) -> np.ndarray:
        norms = np.linalg.norm(vecs, axis=1, keepdims=True)
        return np.divide(vecs, norms, out=np.zeros_like(vecs), where=norms > 0)

    def put(self, ids: Sequence[str], vecs: np.ndarray, props: Sequence[dict[str, Any]]) -> None:
        unit = self.normalise(vecs.astype(np.float32, copy=False))
        fresh = [i for i, oid in enumerate(ids) if oid not in self.pos]
        n = len(self.ids)
        need = n + len(fresh)
        if need > self.mat.shape[0]:
            grown = np.zeros((max(need, 2 * self.mat.shape[0], 64), self.dim), dtype=np.float32)
            grown[:n] = self.mat[:n]
            self.mat = grown
        for i, oid in enumerate(ids):
            row = self.pos.get(oid)
            if row is None:
                row = len(self.ids)
                self.pos[oid] = row
                self.ids.append(oid)
                self.props.append(props[i])
            self.props[row] = props[i]
            self.mat[row] = unit[i]

    def remove(self, ids: Sequence[str]) -> None:
        for oid in ids:
            row = self.pos.pop(oid, None)
            if row is None:
                continue
            last = len(self.ids) - 1
            if row != last:  # move the last row into the hole
                moved = self.ids[last]
                self.ids[row] = moved
                self.props[row] = self.props[last]
                self.pos[moved] = row
                self.mat[row] = self.mat[last]
            self.ids.pop()
            self.props.pop()

    def search(self, query: np.ndarray, limit: int, rows: Sequence[int] | None = None) -> list[dict[str, Any]]:
        """The ``limit`` nearest rows (of ``rows`` only, when given)."""
        n = len(self.ids)
        if n == 0 or limit <= 0:
            return []
        if rows is None:  # every row: one product over the matrix as it is (no copy)
            sims = self.mat[:n] @ query
            k = min(limit, n)
            top = np.argpartition(-sims, k - 1)[:k] if k < n else np.arange(n)
        else:
            among = np.asarray(sorted(rows), dtype=np.int64)
            if among.size == 0:
                return []
            sims = np.full(n, -np.inf, dtype=np.float32)
            sims[among] = self.mat[among] @ query
            k = min(limit, among.size)
            top = among[np.argpartition(-sims[among], k - 1)[:k]] if k < among.size else among
        ranked = sorted(top.tolist(), key=lambda r: (-float(sims[r]), self.ids[r]))
        return [
            {**self.props[r], "id": self.ids[r], "similarity": max(0.0, min(1.0, float(sims[r])))}
            for r in ranked
        ]


def _matrix(objs: Sequence[TextObject], dim: int | None) -> np.ndarray | None:
    """The objects' vectors as one float32 matrix, or None unless every object has one of ``dim`` values."""
    if dim is None or not objs or not all(o.vector and len(o.vector) == dim for o in objs):
        return None
    return np.asarray([o.vector for o in objs], np.float32)


def _vec_column(mat: np.ndarray) -> pa.Array:
    """A float32 list column of the matrix's rows (what ``pa.array(rows, pa.list_(pa.float32()))`` gives)."""
    n, dim = mat.shape
    if (n + 1) * dim >= 2**31:  # past what 32-bit list offsets address
        return pa.array(mat.tolist(), pa.list_(pa.float32()))
    offsets = pa.array(np.arange(0, (n + 1) * dim, dim, dtype=np.int32))
    return pa.ListArray.from_arrays(offsets, pa.array(np.ascontiguousarray(mat).reshape(-1)))


class EmbeddedVectorStore(VectorStore):
    """``path`` is a DuckDB file (created with its folder) or ``":memory:"``."""

    def __init__(self, path: str | Path = MEMORY) -> None:
        self._db = Database(path)
        self._indexes: dict[str, _Index | None] = {}
        with self._db.write() as con:
            con.execute(SCHEMA)

    @property
    def path(self) -> str:
        return self._db.path

    def ensure_collection(self, name: str) -> None:
        if not isinstance(name, str) or not name:
            raise ValueError(f"collection name not allowed: {name!r}")
        with self._db.write() as con:
            con.execute("INSERT INTO collections VALUES (?, NULL) ON CONFLICT DO NOTHING", [name])

    def _dim(self, collection: str) -> int | None:
        dim = scalar(self._db.con, "SELECT dim FROM collections WHERE name = ?", [collection])
        return None if dim is None else int(dim)

    def _index(self, collection: str) -> _Index | None:
        """The in-memory matrix of a collection (None while it holds no vector), loaded from DuckDB once."""
        if collection in self._indexes:
            return self._indexes[collection]
        dim = self._dim(collection)
        index = None
        if dim is not None:
            index = _Index(dim)
            table: pa.Table | None = self._db.con.sql(
                f"SELECT id, vec, {', '.join(PROPERTIES)}, coalesce({MENTIONS}, []) AS {MENTIONS} FROM objects "
                "WHERE collection = ? AND vec IS NOT NULL",
                params=[collection],
            ).to_arrow_table()
            if table is not None and table.num_rows:
                flat = table.column("vec").combine_chunks().flatten().to_numpy(zero_copy_only=False)
                props = table.select([*PROPERTIES, MENTIONS]).to_pylist()
                index.put(table.column("id").to_pylist(), flat.reshape(table.num_rows, dim), props)
        self._indexes[collection] = index
        return index

    def upsert(self, collection: str, objects: Sequence[TextObject]) -> int:
        if not objects:
            return 0
        latest = {obj.object_id: obj for obj in objects}  # the same id twice in a batch: the last one wins
        dims = {len(o.vector) for o in latest.values() if o.vector}
        with self._db.lock:
            self.ensure_collection(collection)
            dim = self._dim(collection)
            expected = dims | ({dim} if dim is not None else set())
            if len(expected) > 1:
                raise ValueError(
                    f"collection {collection!r} takes one vector dimension; this batch would mix {sorted(expected)}"
                )
            new_dim = dim if dim is not None else (next(iter(dims)) if dims else None)
            objs = list(latest.values())
            props = [self._props(o) for o in objs]
            mat = _matrix(objs, new_dim)  # every object's vector as one float32 matrix, when all have one
            table = pa.table(
                {
                    "id": list(latest),
                    **{p: [r[p] for r in props] for p in PROPERTIES},
                    "vec": _vec_column(mat) if mat is not None else pa.array([o.vector or None for o in objs], pa.list_(pa.float32())),
                }
            )
            index = self._index(collection)
            with self._db.write() as con:
                con.register("esc_objects", table)
                try:
                    if dim is None and new_dim is not None:
                        con.execute("UPDATE collections SET dim = ? WHERE name = ?", [new_dim, collection])
                    cols = ", ".join(PROPERTIES)
                    updates = ", ".join(f"{p} = excluded.{p}" for p in (*PROPERTIES, "vec"))
                    present = scalar(con, "SELECT count(*) FROM objects o JOIN esc_objects e ON o.id = e.id WHERE o.collection = ?",
                                     [collection])  # fmt: skip
                    conflict = f" ON CONFLICT (collection, id) DO UPDATE SET {updates}, {MENTIONS} = {NO_REFS}" if present else ""
                    con.execute(  # a rewritten object has no entity refs until its chunk is linked again, as in Weaviate
                        f"INSERT INTO objects (collection, id, {cols}, vec, {MENTIONS}) SELECT ?, id, {cols}, vec, "
                        f"{NO_REFS} FROM esc_objects{conflict}",  # (all new: a plain insert, twice as fast)
                        [collection],
                    )
                finally:
                    con.unregister("esc_objects")
            if new_dim is not None:
                if index is None:
                    index = _Index(new_dim)
                    self._indexes[collection] = index
                index.remove([o.object_id for o in objs if not o.vector])
                with_vec = [i for i, o in enumerate(objs) if o.vector]
                if with_vec:
                    index.put(
                        [objs[i].object_id for i in with_vec],
                        mat if mat is not None else np.asarray([objs[i].vector for i in with_vec], np.float32),
                        [{**props[i], MENTIONS: []} for i in with_vec],
                    )
        return len(objects)

    @staticmethod
    def _props(obj: TextObject) -> dict[str, Any]:
        """The object's properties (PROPERTIES, in order)."""
        p = obj.provenance
        return {
            "text": obj.text,
            "source": p.source,
            "record_id": p.record_id,
            "location": p.location,
            "file": p.file or "",
            "entity_label": obj.entity_label or "",
            "entity_key": obj.entity_key or "",
            "chunk_index": obj.chunk_index,
            "contract_version": obj.contract_version,
        }

    def near_vector(self, collection: str, vector: Sequence[float], limit: int = 5) -> list[dict[str, Any]]:
        query = np.asarray(vector, dtype=np.float32).ravel()
        with self._db.lock:
            index = self._index(collection)
            if index is None:
                return []
            if query.shape[0] != index.dim:
                raise ValueError(
                    f"collection {collection!r} holds vectors of dimension {index.dim}, the query has {query.shape[0]}"
                )
            norm = float(np.linalg.norm(query))
            return index.search(query / norm if norm > 0 else query, limit)

    def near_vector_mentioning(
        self, collection: str, vector: Sequence[float], refs: Sequence[str], limit: int = 5
    ) -> list[dict[str, Any]]:
        """Nearest objects among those whose entity refs hold any of ``refs``."""
        wanted = set(refs)
        query = np.asarray(vector, dtype=np.float32).ravel()
        with self._db.lock:
            index = self._index(collection)
            if index is None or not wanted:
                return []
            rows = [r for r, p in enumerate(index.props) if wanted.intersection(p.get(MENTIONS) or ())]
            norm = float(np.linalg.norm(query))
            return index.search(query / norm if norm > 0 else query, limit, rows)

    def set_mentions(self, collection: str, mentions: Mapping[str, Sequence[str]]) -> int:
        """Set the entity refs of these objects (object id -> refs; an empty list clears); objects found."""
        if not mentions:
            return 0
        ids = sorted(mentions)
        table = pa.table({"id": ids, MENTIONS: pa.array([sorted(mentions[i]) for i in ids], pa.list_(pa.string()))})
        with self._db.lock:
            index = self._index(collection)
            with self._db.write() as con:
                con.register("esc_mentions", table)
                try:
                    done = con.execute(
                        "SELECT o.id FROM objects o JOIN esc_mentions m ON o.id = m.id WHERE o.collection = ?", [collection]
                    ).fetchall()
                    # only the objects whose refs change: updating a list column rewrites the row, vector and all
                    con.execute(
                        f"UPDATE objects SET {MENTIONS} = m.{MENTIONS} FROM esc_mentions m WHERE objects.collection = ? "
                        f"AND objects.id = m.id AND objects.{MENTIONS} IS DISTINCT FROM m.{MENTIONS}",
                        [collection],
                    )
                finally:
                    con.unregister("esc_mentions")
            if index is not None:
                for (oid,) in done:
                    row = index.pos.get(oid)
                    if row is not None:
                        index.props[row] = {**index.props[row], MENTIONS: sorted(mentions[oid])}
        return len(done)

    def delete_by_record(self, collection: str, source: str, record_ids: Sequence[str]) -> int:
        if not record_ids:
            return 0
        with self._db.lock:
            index = self._index(collection)
            with self._db.write() as con:
                gone = con.execute(
                    "DELETE FROM objects WHERE collection = ? AND source = ? AND list_contains(?, record_id) "
                    "RETURNING id",
                    [collection, source, list(record_ids)],
                ).fetchall()
            if index is not None:
                index.remove([r[0] for r in gone])
        return len(gone)

    def count(self, collection: str) -> int:
        with self._db.read() as con:
            return int(scalar(con, "SELECT count(*) FROM objects WHERE collection = ?", [collection]))

    def drop(self, collection: str) -> None:
        with self._db.lock, self._db.write() as con:
            con.execute("DELETE FROM objects WHERE collection = ?", [collection])
            con.execute("DELETE FROM collections WHERE name = ?", [collection])
            self._indexes.pop(collection, None)

    def close(self) -> None:
        self._db.close()
