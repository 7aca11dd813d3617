"""Writing text chunks into a vector collection: stale-chunk cleanup, embedding, upsert. One place for both the
inline path (``Ingestor`` without an outbox: embedded mode, tests) and the background ``VectorWriter``."""

from __future__ import annotations

import time
from collections.abc import Sequence

from esc.agents import metrics
from esc.agents.chunking import Chunk
from esc.agents.embedding import Embedder
from esc.agents.extractors import attach_vectors
from esc.agents.stores.base import DeletesByRecord, VectorStore
from esc.agents.types import TextObject


def embedding_input(text: TextObject | Chunk) -> str:
    """What the embedder reads for a chunk (a text object, or a chunk before it is one): its context (headings,
    table header, field) in front of its text."""
    return f"{text.context}\n{text.text}" if text.context else text.text


class TextWriter:
    """Embeds and upserts text chunks into one collection. Not thread-safe: one per writer."""

    def __init__(self, vectors: VectorStore, embedder: Embedder, collection: str, embed_batch: int = 64) -> None:
        self.vectors = vectors
        self.embedder = embedder
        self.collection = collection
        self.embed_batch = embed_batch
        self._collection_ready = False

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
        for i in range(0, len(texts), self.embed_batch):
            part = texts[i : i + self.embed_batch]
            attach_vectors(part, self.embedder.embed([embedding_input(t) for t in part]))
        written = self.vectors.upsert(self.collection, texts)
        metrics.BATCH_LATENCY.labels("weaviate").observe(time.perf_counter() - t0)
        return written

    def delete(self, source: str, record_ids: Sequence[str]) -> None:
        """Drop every chunk of these source records (stores that cannot are left as they are)."""
        if record_ids and isinstance(self.vectors, DeletesByRecord):
            self.vectors.delete_by_record(self.collection, source, list(record_ids))
