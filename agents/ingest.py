"""The ingest step shared by every runtime: record messages in, store writes, dead letters and deferrals out.

``Ingestor.handle(items, contract)`` parses raw messages (or takes envelopes), plans them under ``contract``
(``agents.extractors.plan``), and writes: uniqueness constraints first, then entities, edges, text chunks (embedded
in batches), then retractions. Every write is an idempotent MERGE / overwrite by deterministic id, so
at-least-once delivery (a batch handled twice) leaves the stores as if it was handled once. Store errors are not
caught: the runtime retries the batch.

Records whose source the contract does not cover yet come back in ``IngestResult.deferred``; the runtime keeps
them (or their offsets) and hands them back once a newer contract covers the source (``agents.backfill``).
"""

from __future__ import annotations

import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Protocol, runtime_checkable

from pydantic import ValidationError

from esc.agents import metrics
from esc.agents.chunk_graph import MentionWrite, chunk_store
from esc.agents.embedding import Embedder
from esc.agents.extractors import Plan, plan
from esc.agents.mention_linker import LinkResult, MentionLinker
from esc.agents.mentions_vectors import copy_mentions
from esc.agents.reconcile.hook import Reconciler
from esc.agents.stores.base import GraphStore, VectorStore
from esc.agents.text_writer import TextWriter
from esc.agents.types import SourceRecordRef, TextObject
from esc.agents.vector_outbox import VectorOutbox
from esc.contract.model import Contract
from esc.streams.events import DeadLetter, RecordEnvelope

MAX_MESSAGE_BYTES = 1 << 20
EMBED_BATCH = 64


@runtime_checkable
class ListsFileRecords(Protocol):
    """Graph stores that can list the source records read from one file (needed to retract a deleted file)."""

    def source_records_for_file(self, file: str) -> list[SourceRecordRef]: ...


@dataclass
class IngestResult:
    written: int = 0  # entities written
    edges: int = 0
    texts: int = 0
    retracted: int = 0
    dead: list[DeadLetter] = field(default_factory=list)
    deferred: list[RecordEnvelope] = field(default_factory=list)
    sources: set[str] = field(default_factory=set)  # sources written in this batch
    contract_version: int | None = None


@dataclass
class Prepared:
    """A parsed and planned batch, not written yet (``Ingestor.prepare`` -> ``Ingestor.apply``)."""

    envelopes: list[RecordEnvelope] = field(default_factory=list)
    dead: list[DeadLetter] = field(default_factory=list)  # unparseable messages
    plan: Plan | None = None  # None: no contract yet, every record is deferred
    contract_version: int | None = None
    contract: Contract | None = None

    @property
    def writes(self) -> bool:
        """Whether applying it writes to a store (else it only defers records and reports dead letters)."""
        p = self.plan
        return p is not None and bool(p.entities or p.retractions or p.file_retractions)


def parse(raw: bytes | str) -> RecordEnvelope | DeadLetter:
    """Validate one message against the documented envelope; anything else becomes a dead letter."""
    size = len(raw)
    if size > MAX_MESSAGE_BYTES:
        return DeadLetter.of(
            f"oversized: record is {size} bytes, limit {MAX_MESSAGE_BYTES}", "push", raw[:4096]
        )
    try:
        return RecordEnvelope.model_validate_json(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ())) or "message"
        return DeadLetter.of(f"invalid envelope: {where}: {first.get('msg')}", "push", raw)


def _count(counter: Any, sources: Iterable[str]) -> None:
    """Per-source counts of a batch in one increment per source (a labelled increment costs microseconds)."""
    for source, n in Counter(sources).items():
        counter.labels(metrics.source_label(source)).inc(n)


def _by_source(refs: Sequence[SourceRecordRef]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = defaultdict(list)
    for r in refs:
        out[r.source].append(r.record_id)
    return out


class Ingestor:
    """Writes planned batches to one graph store and one vector collection. Not thread-safe: one per worker."""

    def __init__(
        self,
        graph: GraphStore,
        vectors: VectorStore,
        embedder: Embedder,
        collection: str,
        contract: Contract | None = None,
        embed_batch: int = EMBED_BATCH,
        outbox: VectorOutbox | None = None,
        reconciler: Reconciler | None = None,
    ) -> None:
        self.graph = graph
        self.vectors = vectors
        self.embedder = embedder
        self.collection = collection
        self.contract = contract
        self.embed_batch = embed_batch
        # With an outbox, vector operations are queued durably and a VectorWriter applies them behind the graph
        # (agents/vector_outbox.py); without one they run inline (embedded mode, tests).
        self.outbox = outbox
        self.ingested: set[str] = set()  # sources written at least once (what a backfill may need to replay)
        self._keys: set[tuple[str, tuple[str, ...]]] = set()
        self._seen_contract: Contract | None = None
        self.text_writer = TextWriter(vectors, embedder, collection, embed_batch)
        self.reconciler = reconciler  # entity resolution over what is written and retracted (agents/reconcile)
        self.linker = MentionLinker()

    def link_mentions(self, every: float = 0.0, stop: Callable[[], bool] | None = None) -> LinkResult:
        """Link every chunk in the graph to the entities it mentions under the current contract (agents/
        mention_linker.py); the runtimes call it when their queues are drained (``every``: at most that often;
        ``stop``: asked between batches, to give way to graph work)."""
        def copy(ids: list[str], writes: list[MentionWrite]) -> int:  # the refs on the vector objects too
            return copy_mentions(self.vectors, self.collection, ids, writes)

        return self.linker.sync(self.graph, self.contract or self._seen_contract, every, on_linked=copy, stop=stop)

    def use(self, contract: Contract) -> None:
        """Apply ``contract`` to every later batch that does not pass its own."""
        if self.contract is None or contract.version >= self.contract.version:
            self.contract = contract
            metrics.CONTRACT_VERSION.set(contract.version)
            if self.reconciler is not None:
                self.reconciler.use(contract)

    # ---------------------------------------------------------------------------------------------- handling
    def handle(
        self,
        items: Sequence[bytes | str | RecordEnvelope],
        contract: Contract | None = None,
        *,
        rekey: bool = False,
    ) -> IngestResult:
        """Parse, plan and write one batch. ``rekey=True`` (a replay after a source gained an identity key) first
        retracts the batch's source records, so the nodes they wrote under the record-id key go away."""
        return self.apply(self.prepare(items, contract), rekey=rekey)

    def prepare(self, items: Sequence[bytes | str | RecordEnvelope], contract: Contract | None = None) -> Prepared:
        """Parse and plan a batch, writing nothing (pure CPU: a runtime may plan the next batch while this one's
        writes are under way). ``apply`` writes it."""
        out = Prepared()
        for item in items:
            env = item if isinstance(item, RecordEnvelope) else parse(item)
            if isinstance(env, DeadLetter):
                out.dead.append(env)
                continue
            out.envelopes.append(env)
        contract = contract or self.contract
        if contract is not None and (self._seen_contract is None or contract.version >= self._seen_contract.version):
            self._seen_contract = contract
        if out.envelopes and contract is not None:
            out.contract_version = contract.version
            out.contract = contract
            out.plan = plan(out.envelopes, contract)
            if out.plan.entities:
                out.plan.ahead = self.graph.plan_upsert(out.plan.entities, out.plan.edges)
        return out

    def apply(self, prepared: Prepared, *, rekey: bool = False, replay: bool = False) -> IngestResult:
        """Write a prepared batch (see ``handle``); metrics count it here, once. ``replay``: a backfill writes
        records again (counted as replayed, its latency apart from the freshness of new records)."""
        result = IngestResult(dead=list(prepared.dead))
        for dead in prepared.dead:
            metrics.DLQ.labels(dead.stage, metrics.dlq_reason_label(dead.reason)).inc()
        envelopes = prepared.envelopes
        _count(metrics.RECORDS_REPLAYED if replay else metrics.RECORDS_IN, (env.source for env in envelopes))
        if not envelopes:
            return result
        p = prepared.plan
        if p is None:
            result.deferred = [e for e in envelopes if not e.deleted]
            self._count_deferred(result.deferred)
            return result
        result.contract_version = prepared.contract_version
        result.deferred = p.deferred
        self._count_deferred(p.deferred)
        for dead in p.dead:
            metrics.DLQ.labels(dead.stage, metrics.dlq_reason_label(dead.reason)).inc()
        result.dead.extend(p.dead)
        if self.reconciler is not None and prepared.contract is not None:
            self.reconciler.use(prepared.contract)
        if rekey and p.entities:
            self._retract([e.provenance for e in p.entities])
        self._write(p, result)
        result.retracted = self._retract(p.retractions)
        for f in p.file_retractions:
            if isinstance(self.graph, ListsFileRecords):
                result.retracted += self._retract(self.graph.source_records_for_file(f.file))
            else:
                dead = DeadLetter.of(
                    f"cannot retract deleted file: the graph store cannot list the records of {f.file}",
                    "extractor",
                    None,
                    source=f.source,
                    location=f.file,
                )
                result.dead.append(dead)
                metrics.DLQ.labels(dead.stage, metrics.dlq_reason_label(dead.reason)).inc()
        self._observe(p, envelopes, vectors_inline=self.outbox is None, replay=replay)
        return result

    # ---------------------------------------------------------------------------------------------- writing
    def _write(self, p: Plan, result: IngestResult) -> None:
        missing = sorted(p.keys - self._keys)
        self.graph.ensure_entity_keys([(label, list(props)) for label, props in missing])  # a store may batch them
        self._keys.update(missing)
        if p.entities:
            t0 = time.perf_counter()
            result.written, result.edges = self.graph.upsert(p.entities, p.edges, p.ahead)
            metrics.BATCH_LATENCY.labels("neo4j").observe(time.perf_counter() - t0)
            if self.reconciler is not None:
                self.reconciler.on_written(p.entities)
        if p.texts:  # its latency is observed by the TextWriter (inline or behind the outbox), not the queueing
            result.texts = self._write_texts(p.texts)
            chunks = chunk_store(self.graph)
            if chunks is not None:  # the chunks in the graph too: mentions link them to entities
                chunks.upsert_chunks(p.texts)
        result.sources = set(p.sources)
        self.ingested |= p.sources

    def _write_texts(self, texts: list[TextObject]) -> int:
        if self.outbox is not None:
            self.outbox.put_texts(texts)
            return len(texts)
        return self.text_writer.write(texts)

    def _retract(self, refs: Sequence[SourceRecordRef]) -> int:
        if not refs:
            return 0
        n = self.graph.retract_source_records(refs)
        if self.reconciler is not None:
            self.reconciler.on_retracted(refs)
        chunks = chunk_store(self.graph)
        for source, ids in _by_source(refs).items():
            if chunks is not None:
                chunks.delete_chunks(source, ids)
            if self.outbox is not None:
                self.outbox.put_delete(source, ids)
            else:
                self.text_writer.delete(source, ids)
        metrics.RETRACTED.inc(len(refs))
        return n

    # ---------------------------------------------------------------------------------------------- metrics
    @staticmethod
    def _count_deferred(deferred: Sequence[RecordEnvelope]) -> None:
        _count(metrics.DEFERRED, (env.source for env in deferred))

    @staticmethod
    def _observe(
        p: Plan, envelopes: Sequence[RecordEnvelope], vectors_inline: bool = True, replay: bool = False
    ) -> None:
        done = datetime.now(UTC)
        latency = metrics.BACKFILL_LATENCY if replay else metrics.FRESHNESS
        texts_by_record = {(t.provenance.source, t.provenance.record_id) for t in p.texts}
        written = {(e.provenance.source, e.provenance.record_id) for e in p.entities}
        out: Counter[str] = Counter()
        out_vectors: Counter[str] = Counter()
        for env in envelopes:
            rid = (env.source, env.resolved_id())
            if rid not in written:
                continue
            out[env.source] += 1
            if vectors_inline and rid in texts_by_record:  # else the VectorWriter counts them
                out_vectors[env.source] += 1
            if env.event_time is not None:
                event_time = env.event_time if env.event_time.tzinfo else env.event_time.replace(tzinfo=UTC)
                latency.observe(max(0.0, (done - event_time).total_seconds()))
        for source, n in out.items():
            metrics.RECORDS_OUT.labels(metrics.source_label(source), "neo4j").inc(n)
        for source, n in out_vectors.items():
            metrics.RECORDS_OUT.labels(metrics.source_label(source), "weaviate").inc(n)
