"""Writing text chunks into a vector collection: stale-chunk cleanup, embedding, upsert. One place for both the
inline path (``Ingestor`` without an outbox: embedded mode, tests) and the background ``VectorWriter``."""

from __future__ import annotations

import time
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor, wait

from esc.agents import metrics
from esc.agents.embedding import Embedder
from esc.agents.extractors import attach_vectors
from esc.agents.stores.base import DeletesByRecord, VectorStore
from esc.agents.types import TextObject

UPSERT_PART = 256
"""Chunks per upsert when a write holds more: each part is upserted while the next is embedded (an embedder on the
CPU and the vector store's indexing overlap instead of taking turns)."""


def embedding_input(text: TextObject) -> str:
    """What the embedder reads for a chunk: its context (headings, table header, field) in front of its text."""
    return f"{text.context}\n{text.text}" if text.context else text.text


class TextWriter:
    """Embeds and upserts text chunks into one collection. Not thread-safe: one per writer (which may upsert from
    a helper thread of its own, one call at a time)."""

    def __init__(self, vectors: VectorStore, embedder: Embedder, collection: str, embed_batch: int = 64) -> None:
        self.vectors = vectors
        self.embedder = embedder
        self.collection = collection
        self.embed_batch = embed_batch
        self._collection_ready = False
        self._pool: ThreadPoolExecutor | None = None  # one upsert at a time, beside the embedding of the next part

    def write(self, texts: Sequence[TextObject]) -> int:
        """Embed and upsert ``texts`` (deterministic ids: a re-sent chunk replaces itself); returns how many."""
        if not texts:
            return 0
        t0 = time.perf_counter()
        if not self._collection_ready:
            self.vectors.ensure_collection(self.collection)
            self._collection_ready = True
        # A record re-sent with shorter text must not keep its old trailing chunks.
        by_source: dict[str, set[str]] = {}
        for t in texts:
            by_source.setdefault(t.provenance.source, set()).add(t.provenance.record_id)
        for source, ids in sorted(by_source.items()):
            self.delete(source, sorted(ids))
        size = max(UPSERT_PART, self.embed_batch)
        parts = [texts[i : i + size] for i in range(0, len(texts), size)]
        written = 0
        pending: Future[int] | None = None
        try:
            for part in parts:
                for i in range(0, len(part), self.embed_batch):
                    sub = part[i : i + self.embed_batch]
                    attach_vectors(sub, self.embedder.embed([embedding_input(t) for t in sub]))
                if pending is not None:
                    written += pending.result()
                    pending = None
                if len(parts) == 1:
                    written += self.vectors.upsert(self.collection, part)
                else:  # the store indexes this part while the next one is embedded
                    pending = self._upserts().submit(self.vectors.upsert, self.collection, part)
            if pending is not None:
                written += pending.result()
                pending = None
        finally:
            if pending is not None:
                wait([pending])  # an embedding failed: the upsert under way ends before the error goes up
        metrics.BATCH_LATENCY.labels("weaviate").observe(time.perf_counter() - t0)
        return written

    def _upserts(self) -> ThreadPoolExecutor:
        if self._pool is None:
            self._pool = ThreadPoolExecutor(1, thread_name_prefix="esc-vector-upsert")
        return self._pool

    def delete(self, source: str, record_ids: Sequence[str]) -> None:
        """Drop every chunk of these source records (stores that cannot are left as they are)."""
        if record_ids and isinstance(self.vectors, DeletesByRecord):
            self.vectors.delete_by_record(self.collection, source, list(record_ids))
