"""The ingest step shared by every runtime: raw record messages in, store writes and dead letters out."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

from pydantic import ValidationError

from agents import metrics
from agents.embedding import Embedder
from agents.extractors import attach_vectors, plan
from agents.stores.base import GraphStore, VectorStore
from streams.events import DeadLetter, RecordEnvelope

MAX_MESSAGE_BYTES = 1 << 20


@dataclass
class IngestResult:
    written: int = 0
    dead: list[DeadLetter] = field(default_factory=list)


def parse(raw: bytes | str) -> RecordEnvelope | DeadLetter:
    """Validate one message against the documented envelope; anything else becomes a dead letter."""
    size = len(raw)
    if size > MAX_MESSAGE_BYTES:
        return DeadLetter.of(f"oversized: record is {size} bytes, limit {MAX_MESSAGE_BYTES}", "push", raw[:4096])
    try:
        return RecordEnvelope.model_validate_json(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ())) or "message"
        return DeadLetter.of(f"invalid envelope: {where}: {first.get('msg')}", "push", raw)


class Ingestor:
    def __init__(
        self, graph: GraphStore, vectors: VectorStore, embedder: Embedder, collection: str
    ) -> None:
        self.graph = graph
        self.vectors = vectors
        self.embedder = embedder
        self.collection = collection

    def handle(self, raws: Sequence[bytes | str]) -> IngestResult:
        result = IngestResult()
        envelopes: list[RecordEnvelope] = []
        for raw in raws:
            item = parse(raw)
            if isinstance(item, DeadLetter):
                result.dead.append(item)
                metrics.DLQ.labels(item.stage, metrics.dlq_reason_label(item.reason)).inc()
            else:
                envelopes.append(item)
                metrics.RECORDS_IN.labels(metrics.source_label(item.source)).inc()
        if not envelopes:
            return result
        p = plan(envelopes)
        t0 = time.perf_counter()
        result.written = self.graph.upsert_entities(p.entities)
        metrics.BATCH_LATENCY.labels("neo4j").observe(time.perf_counter() - t0)
        t0 = time.perf_counter()
        attach_vectors(p.texts, self.embedder.embed([t.text for t in p.texts]))
        self.vectors.upsert(self.collection, p.texts)
        metrics.BATCH_LATENCY.labels("weaviate").observe(time.perf_counter() - t0)
        done = datetime.now(UTC)
        for env in envelopes:
            label = metrics.source_label(env.source)
            metrics.RECORDS_OUT.labels(label, "neo4j").inc()
            metrics.RECORDS_OUT.labels(label, "weaviate").inc()
            if env.event_time is not None:
                event_time = env.event_time if env.event_time.tzinfo else env.event_time.replace(tzinfo=UTC)
                metrics.FRESHNESS.observe(max(0.0, (done - event_time).total_seconds()))
        return result
