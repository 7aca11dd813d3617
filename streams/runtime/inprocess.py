"""The in-process runtime: the whole pipeline in one process, no Kafka, no servers (issue 6).

Same product as the Faust runtime, not a second one: the file connector, the profiler, the contract agent, the
extractor/ingestor and the backfill planner are the same functions from ``agents/``; events are the same models
under the same topic names (``streams.topics``) on an :class:`InProcessBus` instead of Kafka; the stores are any
``GraphStore``/``VectorStore`` (by default the embedded DuckDB stores in ``<ESC_STATE_DIR>/embedded``).

What Kafka gives the Faust runtime, the state dir gives this one, so a restart continues where it stopped:

- ``inprocess/records/<source>.jsonl``: every record handled, per source (the records topic's retention), read
  back when a new contract asks for a source to be replayed or re-keyed, or for its deferred records;
- ``inprocess/state.json``: the contract agent's state, the profile watermark, the sources ingested and the
  sources with deferred records (written atomically after every batch);
- ``inprocess/contract.json``: the current contract (the compacted ``schema.contracts`` topic);
- ``connector/manifest.json``: the file watcher's own manifest (files already delivered are not re-read).

``Pipeline.step`` is synchronous and does one batch exactly as ``tests/unit/agents/test_backfill.py`` streams
one: profile -> contract agent -> publish diff/contract -> replay what the new contract asks -> ingest the batch.
``InProcessRuntime`` drives it from the file watcher (``ingest_once`` for ``esc ingest``, ``serve`` for
``esc up --embedded``, which also serves ``/metrics``, ``/healthz`` and ``/contract`` over HTTP).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import re
import time
from collections import Counter, defaultdict, deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agents import metrics
from agents.backfill import BackfillTracker, plan_replay
from agents.contract_agent import ContractAgent, SourceComplete, contract_message, diff_event
from agents.embedding import Embedder, get_embedder
from agents.ingest import Ingestor, IngestResult
from agents.profiler import Watermark, profile_batch
from agents.stores.base import GraphStore, VectorStore
from contract.model import Contract, ContractDiff
from esc.settings import Settings
from streams import topics
from streams.connectors.file_watcher import FileWatcher
from streams.events import DeadLetter, RecordEnvelope

log = logging.getLogger(__name__)

BATCH = 500
REPLAY_BATCH = 1000
TICK_SECONDS = 5.0
KEEP_MESSAGES = 1000  # per non-compacted topic, for inspection (the durable copy is in the state dir)
STATE_VERSION = 1
STREAM = "inprocess"


def collection_for(app_id: str) -> str:
    """The vector collection name, as the Kafka runtime names it (agents.stores.weaviate.collection_name)."""
    cleaned = re.sub(r"[^0-9A-Za-z_]", "_", app_id) or "Esc"
    return "EscText_" + cleaned if not cleaned[0].isalpha() else cleaned[0].upper() + cleaned[1:] + "Text"


class InProcessBus:
    """Topics in memory under their Kafka names: the same keys and serialized values the Faust runtime sends.

    Compacted topics keep the latest value per key; others keep the last ``KEEP_MESSAGES``. Subscribers are
    called synchronously on every message of their topic."""

    def __init__(self, prefix: str = "esc", keep: int = KEEP_MESSAGES) -> None:
        self.prefix = prefix
        self._log: dict[str, deque[tuple[bytes, bytes]]] = defaultdict(lambda: deque(maxlen=keep))
        self._latest: dict[str, dict[bytes, bytes]] = defaultdict(dict)
        self._subscribers: dict[str, list[Callable[[bytes, bytes], None]]] = defaultdict(list)
        self.counts: Counter[str] = Counter()

    def name(self, spec: topics.TopicSpec) -> str:
        return spec.name(self.prefix)

    def publish(self, spec: topics.TopicSpec, key: bytes, value: bytes) -> None:
        name = self.name(spec)
        self.counts[name] += 1
        if spec.compacted:
            self._latest[name][key] = value
        else:
            self._log[name].append((key, value))
        for callback in self._subscribers[name]:
            callback(key, value)

    def subscribe(self, spec: topics.TopicSpec, callback: Callable[[bytes, bytes], None]) -> None:
        self._subscribers[self.name(spec)].append(callback)

    def messages(self, spec: topics.TopicSpec) -> list[tuple[bytes, bytes]]:
        name = self.name(spec)
        return list(self._latest[name].items()) if spec.compacted else list(self._log[name])


class RecordLog:
    """Every handled record, one JSON-lines file per source: what a replay or a deferred source reads back."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)

    def _path(self, source: str) -> Path:
        safe = re.sub(r"[^0-9A-Za-z_.-]", "_", source)[:80]
        return self.folder / f"{safe}-{hashlib.sha1(source.encode()).hexdigest()[:10]}.jsonl"

    def append(self, envelopes: Sequence[RecordEnvelope]) -> None:
        by_source: dict[str, list[str]] = defaultdict(list)
        for env in envelopes:
            by_source[env.source].append(env.model_dump_json())
        for source, lines in by_source.items():
            with self._path(source).open("a", encoding="utf-8") as out:
                out.write("\n".join(lines) + "\n")

    def read(self, source: str, batch: int = REPLAY_BATCH) -> Iterator[list[RecordEnvelope]]:
        path = self._path(source)
        if not path.exists():
            return
        chunk: list[RecordEnvelope] = []
        with path.open(encoding="utf-8") as lines:
            for line in lines:
                if line.strip():
                    chunk.append(RecordEnvelope.model_validate_json(line))
                if len(chunk) >= batch:
                    yield chunk
                    chunk = []
        if chunk:
            yield chunk


@dataclass
class StepResult:
    records: int = 0
    written: int = 0
    deferred: int = 0
    dead: list[DeadLetter] = field(default_factory=list)
    replayed: dict[str, int] = field(default_factory=dict)  # source -> records replayed
    contract_version: int = 0
    diff: ContractDiff | None = None


class Pipeline:
    """One batch at a time through the same agent functions the Faust runtime uses; state in ``state_dir``."""

    def __init__(
        self,
        graph: GraphStore,
        vectors: VectorStore,
        embedder: Embedder,
        state_dir: Path,
        *,
        contract_id: str = "esc",
        collection: str = "EscText",
        bus: InProcessBus | None = None,
        agent: ContractAgent | None = None,
    ) -> None:
        self.dir = state_dir / "inprocess"
        self.dir.mkdir(parents=True, exist_ok=True)
        self.bus = bus or InProcessBus()
        self.log = RecordLog(self.dir / "records")
        self.tracker = BackfillTracker()
        self.offset = 0
        self.deferred_sources: set[str] = set()
        saved = self._load()
        if saved is not None:
            self.agent = ContractAgent.from_state(saved["agent"])
            self.offset = int(saved["offset"])
            self.deferred_sources = set(saved["deferred_sources"])
        else:
            self.agent = agent or ContractAgent(contract_id=contract_id)
        self.ingestor = Ingestor(graph, vectors, embedder, collection)
        if saved is not None:
            self.ingestor.ingested = set(saved["ingested"])
        if self.agent.contract.version > 0:
            self.ingestor.use(self.agent.contract)

    # ---------------------------------------------------------------------------------------------- state
    @property
    def contract(self) -> Contract:
        return self.agent.contract

    def _load(self) -> dict[str, Any] | None:
        path = self.dir / "state.json"
        if not path.exists():
            return None
        state: dict[str, Any] = json.loads(path.read_text("utf-8"))
        if state.get("state_version") != STATE_VERSION:
            raise ValueError(f"{path}: unknown in-process state version {state.get('state_version')!r}")
        return state

    def save(self) -> None:
        state = {
            "state_version": STATE_VERSION,
            "offset": self.offset,
            "ingested": sorted(self.ingestor.ingested),
            "deferred_sources": sorted(self.deferred_sources),
            "agent": self.agent.to_state(),
        }
        _write_atomic(self.dir / "state.json", json.dumps(state, sort_keys=True))

    # ---------------------------------------------------------------------------------------------- steps
    def step(
        self,
        batch: Sequence[RecordEnvelope],
        completions: Sequence[SourceComplete] = (),
        now: float | None = None,
    ) -> StepResult:
        """Profile the batch, evolve the contract, replay what it asks, then ingest the batch."""
        out = StepResult(records=len(batch))
        deltas = (
            profile_batch(batch, Watermark(stream=STREAM, offset=self.offset + len(batch) - 1))
            if batch
            else []
        )
        self.offset += len(batch)
        contract, diff = self.agent.apply(deltas, completions, now)
        self._after_contract(contract, diff, out)
        if batch:
            self.log.append(batch)
            self._ingest(batch, out)
        out.contract_version = self.agent.contract.version
        self.save()
        return out

    def tick(self, now: float | None = None) -> StepResult:
        """Settle idle pushed sources (the contract agent's timer)."""
        out = StepResult()
        contract, diff = self.agent.tick(now)
        self._after_contract(contract, diff, out)
        out.contract_version = contract.version
        if diff is not None or out.replayed:
            self.save()
        return out

    def _after_contract(self, contract: Contract, diff: ContractDiff | None, out: StepResult) -> None:
        if diff is not None or self.agent.newly_settled:
            self._publish(contract, diff)
        out.diff = diff
        self.ingestor.use(contract)
        plan = plan_replay(contract, diff, self.ingestor.ingested, self.deferred_sources)
        for source, rekey in self.tracker.start(plan):
            replayed = 0
            for chunk in self.log.read(source):
                self._ingest(chunk, out, rekey=rekey, replay=True)
                replayed += len(chunk)
                self.tracker.progress(source, len(chunk))
            self.tracker.finish(source)
            if source in plan.ready:
                self.deferred_sources.discard(source)
            out.replayed[source] = replayed

    def _ingest(
        self,
        envelopes: Sequence[RecordEnvelope],
        out: StepResult,
        *,
        rekey: bool = False,
        replay: bool = False,
    ) -> None:
        result: IngestResult = self.ingestor.handle(list(envelopes), rekey=rekey)
        out.written += result.written
        for dead in result.dead:
            self.bus.publish(topics.DLQ, (dead.source or "").encode(), dead.model_dump_json().encode())
        out.dead.extend(result.dead)
        if result.deferred:
            self.deferred_sources |= {e.source for e in result.deferred}
            if not replay:
                out.deferred += len(result.deferred)

    def _publish(self, contract: Contract, diff: ContractDiff | None) -> None:
        if diff is not None:
            event = diff_event(diff, contract)
            self.bus.publish(
                topics.SCHEMA_DIFFS, contract.contract_id.encode(), event.model_dump_json().encode()
            )
        key, value = contract_message(contract)
        self.bus.publish(topics.SCHEMA_CONTRACTS, key, value)
        _write_atomic(self.dir / "contract.json", value.decode("utf-8"))

    def dead_letter(self, dead: DeadLetter) -> None:
        metrics.DLQ.labels(dead.stage, metrics.dlq_reason_label(dead.reason)).inc()
        self.bus.publish(topics.DLQ, (dead.source or "").encode(), dead.model_dump_json().encode())


def _write_atomic(path: Path, text: str) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(text, "utf-8")
    tmp.replace(path)


@dataclass
class RunSummary:
    files: int = 0
    records: int = 0
    written: int = 0
    dead: int = 0
    deferred_sources: list[str] = field(default_factory=list)
    contract_version: int = 0
    seconds: float = 0.0


class InProcessRuntime:
    """Drives a :class:`Pipeline` from the file watcher: batches of ``BATCH`` records, a completion per file."""

    def __init__(self, pipeline: Pipeline, data_dir: Path, state_dir: Path, batch: int = BATCH) -> None:
        self.pipeline = pipeline
        self.batch = batch
        self.pending: list[RecordEnvelope] = []
        self.file_counts: dict[str, Counter[str]] = defaultdict(Counter)
        self.summary = RunSummary()
        self.lock = asyncio.Lock()
        self.watcher = FileWatcher(data_dir, state_dir, self._emit, self._dead, self._flush)

    async def _emit(self, env: RecordEnvelope) -> None:
        metrics.RECORDS_PRODUCED.labels(metrics.source_label(env.source)).inc()
        self.pending.append(env)
        self.file_counts[str(env.location.get("file", ""))][env.source] += 1
        if len(self.pending) >= self.batch:
            await self._run(self._take(), [])

    async def _dead(self, dead: DeadLetter) -> None:
        self.summary.dead += 1
        self.pipeline.dead_letter(dead)

    async def _flush(self) -> None:
        """The watcher finished a file: its remaining records, then one completion per source it held."""
        completions = [
            c for f, counts in self.file_counts.items() for c in SourceComplete.for_file(f, counts)
        ]
        self.file_counts.clear()
        await self._run(self._take(), completions)

    def _take(self) -> list[RecordEnvelope]:
        batch, self.pending = self.pending, []
        return batch

    async def _run(self, batch: list[RecordEnvelope], completions: list[SourceComplete]) -> None:
        if not batch and not completions:
            return
        async with self.lock:
            result = await asyncio.to_thread(self.pipeline.step, batch, completions)
        self._account(result)

    def _account(self, result: StepResult) -> None:
        self.summary.records += result.records
        self.summary.written += result.written
        self.summary.dead += len(result.dead)
        self.summary.contract_version = result.contract_version
        self.summary.deferred_sources = sorted(self.pipeline.deferred_sources)

    async def tick(self) -> None:
        async with self.lock:
            result = await asyncio.to_thread(self.pipeline.tick)
        self._account(result)

    async def ingest_once(self) -> RunSummary:
        """Deliver every new or changed file once, wait for the pipeline, and return what happened."""
        t0 = time.perf_counter()
        self.summary.files = await self.watcher.scan_once()
        await self._flush()
        await self.tick()
        self.summary.seconds = round(time.perf_counter() - t0, 3)
        return self.summary

    async def serve(self, host: str, port: int, tick_seconds: float = TICK_SECONDS) -> None:
        """Watch the folder, keep contract, graph and vectors current, and serve HTTP until cancelled."""
        from aiohttp import web

        async def metrics_page(request: web.Request) -> web.Response:
            return web.Response(body=metrics.render(), content_type="text/plain", charset="utf-8")

        async def healthz(request: web.Request) -> web.Response:
            return web.json_response(
                {"ok": True, "mode": "embedded", "contract_version": self.pipeline.contract.version}
            )

        async def contract_page(request: web.Request) -> web.Response:
            return web.json_response(self.pipeline.contract.model_dump(mode="json", by_alias=True))

        app = web.Application()
        app.router.add_get("/metrics", metrics_page)
        app.router.add_get("/healthz", healthz)
        app.router.add_get("/contract", contract_page)
        runner = web.AppRunner(app)
        await runner.setup()
        await web.TCPSite(runner, host, port).start()
        log.info("embedded ESC serving on http://%s:%s (metrics, healthz, contract)", host, port)

        async def ticker() -> None:
            while True:
                await asyncio.sleep(tick_seconds)
                await self.tick()

        tick_task = asyncio.create_task(ticker())
        try:
            await self.watcher.run()
        finally:
            tick_task.cancel()
            await runner.cleanup()


def open_runtime(
    settings: Settings,
    data_dir: Path,
    *,
    graph: GraphStore | None = None,
    vectors: VectorStore | None = None,
    embedder: Embedder | None = None,
    bus: InProcessBus | None = None,
) -> tuple[InProcessRuntime, Callable[[], None]]:
    """A runtime over the embedded stores in ``settings.state_dir`` (or the stores given); and its closer."""
    opened: list[GraphStore | VectorStore] = []
    if graph is None or vectors is None:
        from agents.stores.embedded import open_embedded

        g, v = open_embedded(settings.state_dir)
        graph, vectors = graph or g, vectors or v
        opened = [g, v]
    pipeline = Pipeline(
        graph,
        vectors,
        embedder or get_embedder(),
        settings.state_dir,
        contract_id=settings.app_id,
        collection=collection_for(settings.app_id),
        bus=bus or InProcessBus(settings.topic_prefix),
    )
    runtime = InProcessRuntime(pipeline, data_dir, settings.state_dir)

    def close() -> None:
        for store in opened:
            store.close()

    return runtime, close


def ingest_embedded(settings: Settings, data_dir: Path, embedder: Embedder | None = None) -> RunSummary:
    """``esc ingest DIR --embedded``: ingest once into the embedded stores and return when done."""
    runtime, close = open_runtime(settings, data_dir, embedder=embedder)
    try:
        return asyncio.run(runtime.ingest_once())
    finally:
        close()


def serve_embedded(settings: Settings, data_dir: Path) -> None:
    """``esc up --data DIR --embedded``: watch, keep the stores current, serve HTTP until Ctrl-C / SIGTERM."""
    runtime, close = open_runtime(settings, data_dir)
    try:
        asyncio.run(runtime.serve(settings.host, settings.web_port))
    except KeyboardInterrupt:
        pass
    finally:
        close()
