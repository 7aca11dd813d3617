"""Vector outbox: the vector store follows the graph through a durable, ordered queue of operations.

Embedding is the slowest step of ingest (MiniLM runs ~100-400 sentences per CPU-second; a Neo4j batch of 5,000
records takes well under a second). Done inline, every record batch waited for its texts to be embedded, and
with it the graph, the profilers (one consumer feeds every agent) and the schema. With the outbox, the
extractor writes the graph and *appends* the batch's vector operations to a local SQLite queue (a few
milliseconds, durable before the batch is acknowledged); :class:`VectorWriter` drains the queue in order in the
background: deletes, then embeddings and upserts. So the graph is fresh within a batch and the vectors catch up
behind it (``esc_vector_outbox_pending`` shows how far behind).

Delivery stays at-least-once: an operation leaves the queue only after the vector store acknowledged it, a
crash re-runs what was taken but not finished, and every operation is idempotent (deterministic object ids;
deletes by source record). Order is kept, so a record retracted after it was queued for embedding is not
resurrected by a later drain.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from esc.agents import metrics
from esc.agents.embedding import Embedder
from esc.agents.stores.base import VectorStore
from esc.agents.stores.local_sqlite import open_local
from esc.agents.text_writer import TextWriter
from esc.agents.types import TextObject

log = logging.getLogger(__name__)

ROW_TEXTS = 64
"""Texts per queue row: the unit of progress (a crash re-runs at most the rows taken, not a whole backfill), and
what one step takes while the graph is busy (one embedder batch: ~0.35 s of MiniLM on 2 cores)."""
DRAIN_TEXTS = 256
"""Texts per drain step while the graph is idle: embedded and upserted together, then acknowledged. A step is
also how long new graph work can find the lane running beside it at full speed (~1.5 s of MiniLM on 2 cores)."""

UPSERT = "upsert"
DELETE = "delete"


@dataclass
class Op:
    seq: int
    kind: str  # UPSERT | DELETE
    texts: list[TextObject]  # UPSERT
    source: str = ""  # DELETE
    record_ids: tuple[str, ...] = ()  # DELETE


class VectorOutbox:
    """Ordered vector-store operations, durable in SQLite (``":memory:"`` for tests). Thread-safe."""

    def __init__(self, path: Path | str = ":memory:") -> None:
        self._db = open_local(path)
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS ops (seq INTEGER PRIMARY KEY AUTOINCREMENT, kind TEXT NOT NULL, "
            "n INTEGER NOT NULL, body BLOB NOT NULL)"
        )
        self._lock = threading.Lock()
        self._pending = int(self._db.execute("SELECT coalesce(sum(n), 0) FROM ops").fetchone()[0])
        metrics.VECTOR_PENDING.set(self._pending)

    # -- producers (the extractor) --------------------------------------------------------------------------
    def put_texts(self, texts: Sequence[TextObject]) -> None:
        rows = []
        for i in range(0, len(texts), ROW_TEXTS):
            part = texts[i : i + ROW_TEXTS]
            body = json.dumps([t.model_dump(mode="json", exclude={"vector"}) for t in part]).encode("utf-8")
            rows.append((UPSERT, len(part), body))
        self._append(rows)

    def put_delete(self, source: str, record_ids: Sequence[str]) -> None:
        if record_ids:
            body = json.dumps({"source": source, "record_ids": list(record_ids)}).encode("utf-8")
            self._append([(DELETE, 0, body)])

    def _append(self, rows: list[tuple[str, int, bytes]]) -> None:
        if not rows:
            return
        with self._lock:
            self._db.execute("BEGIN")
            self._db.executemany("INSERT INTO ops (kind, n, body) VALUES (?, ?, ?)", rows)
            self._db.execute("COMMIT")
            self._pending += sum(n for _, n, _ in rows)
            metrics.VECTOR_PENDING.set(self._pending)

    # -- the consumer (VectorWriter) -------------------------------------------------------------------------
    def take(self, max_texts: int = DRAIN_TEXTS) -> list[Op]:
        """The oldest operations, in order, up to about ``max_texts`` texts (at least one operation)."""
        with self._lock:
            rows = self._db.execute("SELECT seq, kind, n, body FROM ops ORDER BY seq LIMIT 64").fetchall()
        out: list[Op] = []
        texts = 0
        for seq, kind, n, body in rows:
            if out and texts + n > max_texts:
                break
            data: Any = json.loads(body)
            if kind == UPSERT:
                out.append(Op(seq, kind, [TextObject.model_validate(t) for t in data]))
            else:
                out.append(Op(seq, kind, [], data["source"], tuple(data["record_ids"])))
            texts += n
        return out

    def done(self, ops: Sequence[Op]) -> None:
        if not ops:
            return
        with self._lock:
            self._db.execute("DELETE FROM ops WHERE seq <= ?", (max(o.seq for o in ops),))
            self._pending = max(0, self._pending - sum(len(o.texts) for o in ops))
            metrics.VECTOR_PENDING.set(self._pending)

    def pending(self) -> int:
        """Texts waiting to be embedded and written."""
        return self._pending

    def empty(self) -> bool:
        with self._lock:
            return self._db.execute("SELECT 1 FROM ops LIMIT 1").fetchone() is None

    def close(self) -> None:
        self._db.close()


def background_executor() -> ThreadPoolExecutor:
    """The vector writer's one thread (embedding runs on it: see ``background_embedder``). It runs at the process's
    priority: at a lower one (nice 10, before) the lane caught up after a TPC-H SF 0.05 load at 0.55x of the
    embedder's own rate against 0.73x at normal priority (same stack, consecutive runs; the load itself 3,554.5 /
    3,523.7 records/s): its onnxruntime threads wait for each other at every operator, and the one that Weaviate's
    indexing of the lane's own objects (nice 0) preempted held up both. The graph keeps its share by the lane's
    short steps and pauses while it is busy (``run_writer``)."""
    return ThreadPoolExecutor(max_workers=1, thread_name_prefix="esc-vectors")


class VectorWriter:
    """Drains a :class:`VectorOutbox` into one vector collection through a :class:`TextWriter`: deletes, then
    stale-chunk cleanup, embedding and upserts, in queue order. One writer per outbox."""

    def __init__(self, outbox: VectorOutbox, vectors: VectorStore, embedder: Embedder, collection: str,
                 embed_batch: int = 64) -> None:
        self.outbox = outbox
        self.texts = TextWriter(vectors, embedder, collection, embed_batch)
        self.written = 0

    def drain_once(self, max_texts: int = DRAIN_TEXTS) -> int:
        """Apply the oldest operations; returns how many were applied (0: the queue is empty)."""
        ops = self.outbox.take(max_texts)
        if not ops:
            return 0
        run: list[TextObject] = []
        for op in ops:
            if op.kind == UPSERT:
                run.extend(op.texts)
                continue
            self._upsert(run)  # keep the order: texts queued before this delete go first
            run = []
            self.texts.delete(op.source, op.record_ids)
        self._upsert(run)
        self.outbox.done(ops)
        return len(ops)

    def _upsert(self, texts: list[TextObject]) -> None:
        self.written += self.texts.write(texts)
        for t in texts:
            if t.chunk_index == 0:
                metrics.RECORDS_OUT.labels(metrics.source_label(t.provenance.source), "weaviate").inc()


IDLE_SECONDS = 0.1
YIELD = 9.0
RETRY_MAX_SECONDS = 30.0


async def run_writer(
    writer: VectorWriter, busy: Callable[[], bool], when_idle: Callable[[], object] | None = None
) -> None:
    """Drain the outbox forever: embed and upsert behind the graph on one thread. A store error is retried (with
    backoff) and nothing leaves the outbox before the store acknowledged it. While ``busy()`` (graph work waiting)
    it takes steps of one row and at most 1 / (1 + YIELD) of the time (10%), so that on a small machine embedding
    does not slow the graph down; it catches up in larger steps when that is idle. ``when_idle`` runs on the same
    thread whenever the outbox is empty and the graph is idle (the Faust worker links chunks to the entities they
    mention there)."""
    import asyncio

    executor = background_executor()
    loop = asyncio.get_running_loop()
    delay = 0.5
    idle_failed = False
    while True:
        try:
            t0 = time.perf_counter()
            step = ROW_TEXTS if busy() else DRAIN_TEXTS
            applied = await loop.run_in_executor(executor, writer.drain_once, step)
            delay = 0.5
            if applied and busy():
                await asyncio.sleep(YIELD * (time.perf_counter() - t0))
        except Exception:  # any store or embedder error: nothing left the outbox, retried with backoff
            log.exception("vector outbox: write failed; retrying in %.1f s (%d texts pending)", delay,
                          writer.outbox.pending())  # fmt: skip
            await asyncio.sleep(delay)
            delay = min(delay * 2, RETRY_MAX_SECONDS)
            continue
        if not applied:
            if when_idle is not None and not busy():
                try:
                    await loop.run_in_executor(executor, when_idle)
                    idle_failed = False
                except Exception as exc:  # any store error: it runs again the next time the worker is idle
                    if not idle_failed:  # one line until it works again (a store outage repeats it every round)
                        log.warning("idle work after the vector outbox failed (%s: %s); retried when idle again",
                                    type(exc).__name__, str(exc)[:200])  # fmt: skip
                    idle_failed = True
            await asyncio.sleep(IDLE_SECONDS)
