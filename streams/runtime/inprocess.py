"""The in-process runtime: the whole pipeline in one process, no Kafka, no servers (issue 6).

The same product as the Faust runtime (``streams/runtime/faust_app.py``), wired the same way: the file connector
emits ``(key, value)`` record messages (tombstones for retracted records) and file completions; the ``profile``
consumer turns record batches into profile updates on ``<prefix>.profiles``; the single ``ContractWriter``
(``agents/pipeline.py``) turns them into schema-diff CloudEvents and contracts; every contract on
``schema.contracts`` goes to the ``ExtractionWorker``, which extracts record batches into the stores, defers what
the contract does not cover yet and backfills from the records log. Topic names are the Kafka ones
(``streams.topics``); the bus is an :class:`InProcessBus`; the stores are any ``GraphStore``/``VectorStore``
(by default the embedded DuckDB stores in ``<ESC_STATE_DIR>/embedded``).

What Kafka keeps for the Faust runtime, ``<ESC_STATE_DIR>/inprocess`` keeps here, so a restart continues:

- ``records/<source>.jsonl``: the compacted records topic (what a backfill replays);
- ``state.sqlite``: the records offset (profile watermarks continue after it) and the ContractWriter's state
  entries (``agents/agent_state.py``; the Faust runtime's changelog-backed table), saved incrementally, one
  transaction per pump;
- ``contract.json`` and ``contracts/v<N>.json``: the compacted ``schema.contracts`` topic (latest and per
  version); ``diffs.jsonl`` and ``dlq.jsonl``: the ``schema.diffs`` and ``dlq`` topics;
- ``<ESC_STATE_DIR>/connector/``: the file watcher's manifest (files already delivered are not re-read).

Scheduling is cooperative: ``pump`` runs the consumers in pipeline order (profile, contract, contract feed,
extract) until no topic has unread messages; the backfill runs as its own task, as in the Faust worker.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from esc.agents import metrics
from esc.agents.embedding import Embedder
from esc.agents.examples_runner import ExampleChecker
from esc.agents.ingest import Ingestor
from esc.agents.pipeline import (
    TICK,
    ContractWriter,
    ExtractionWorker,
    completion_update,
    first_sightings,
    flush_update,
    profile_messages,
    profile_update,
    scan_open_update,
    scan_update,
)
from esc.agents.query.service import QueryService
from esc.agents.reconcile.hook import Reconciler
from esc.agents.scan_groups import ScanComplete
from esc.agents.stores.base import GraphStore, VectorStore
from esc.agents.stores.seen import SeenRecords
from esc.agents.stores.state_table import SqliteStateTable
from esc.contract.labels import printable
from esc.contract.model import Contract
from esc.contract.serde import load_json
from esc.streams import topics
from esc.streams.connectors.base import Emission
from esc.streams.connectors.file_watcher import FileWatcher, drop_files
from esc.streams.events import DeadLetter, RecordEnvelope, record_key
from esc.streams.local_files import append_line, write_atomic
from esc.streams.runtime.inprocess_bus import InProcessBus, RecordLog
from esc.streams.runtime.inprocess_files import RunSummary, load_contract, load_diffs, state_folder
from esc.streams.runtime.names import collection_for
from esc.streams.schema_events import latest_key

__all__ = ["InProcessBus", "InProcessRuntime", "RecordLog", "RunSummary", "collection_for", "ingest_embedded",
           "load_contract", "load_diffs", "open_runtime"]  # fmt: skip

log = logging.getLogger(__name__)

BATCH = 500  # records per extract / profile batch (faust_app.BATCH)
CONTRACT_BATCH = 1000
TICK_SECONDS = 2.0
STATE_VERSION = 2
RECORDS_OFFSET = "records_offset"  # the state-table entry holding the records topic's end offset
PROFILES = "profiles"  # the internal profile-updates topic, as faust_app names it: <prefix>.profiles
INGEST_SETTLE = 0.05  # seconds a file must be unchanged before a one-shot ingest reads it
SAVE_SECONDS = 5.0  # state saves while a file is delivered, at most this often: each rewrites MBs of profiles


Progress = Callable[[str, int, int], None]
"""Called with (file, files done, files total) after each file of a one-shot ingest."""


class InProcessRuntime:
    """The Faust worker's agents as consumers of an in-process bus, over the given stores."""

    def __init__(
        self,
        graph: GraphStore,
        vectors: VectorStore,
        embedder: Embedder,
        state_dir: Path,
        data_dir: Path | None = None,
        *,
        contract_id: str = "esc",
        collection: str | None = None,
        bus: InProcessBus | None = None,
        settle: float = 0.5,
    ) -> None:
        self.state_dir = state_dir
        self.dir = state_folder(state_dir)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.contract_id = contract_id
        self.bus = bus or InProcessBus()
        self.log = RecordLog(self.dir / "records")
        self.state = SqliteStateTable(self.dir / "state.sqlite")
        saved = self._load_state()
        self.writer = ContractWriter.from_entries(saved, contract_id=contract_id)
        self.ingestor = Ingestor(graph, vectors, embedder, collection or collection_for(contract_id),
                                 reconciler=Reconciler(graph, self.dir / "reconcile-members.sqlite"))  # fmt: skip
        self.worker = ExtractionWorker(self.ingestor, self.log.replay, state_path=self.dir / "extraction.json")
        self.seen = SeenRecords(self.dir / "seen.sqlite")  # records already profiled: re-deliveries count once
        self._observed: list[tuple[bytes, bytes]] = []  # remembered as seen once the writer's state is saved
        self.contract: Contract | None = None
        self.query: QueryService | None = None  # answers POST /v1/ask while serving; follows every contract
        self.summary = RunSummary()
        self.examples = ExampleChecker("embedded")
        self._records = self.bus.name(topics.RECORDS)
        for spec, group in ((topics.RECORDS, "profile"), (topics.RECORDS, "extract"), (PROFILES, "contract"),
                            (topics.SCHEMA_CONTRACTS, "follow")):  # fmt: skip
            self.bus.subscribe(spec, group)
        self.bus.start_at(topics.RECORDS, int(saved.get(RECORDS_OFFSET, 0)))
        restored = self.dir / "contract.json"
        if restored.exists():  # the compacted contracts topic survives the restart: the worker reads it first
            self.bus.publish(topics.SCHEMA_CONTRACTS, latest_key(contract_id), restored.read_bytes())
        self._pump_lock, self._saved_at = asyncio.Lock(), float("-inf")  # _saved_at: the last state save (monotonic)
        self._backfill: asyncio.Task[None] | None = None
        self.watcher: FileWatcher | None = None
        if data_dir is not None:
            self.watcher = FileWatcher(data_dir, state_dir, self._emit, self._dead, self._flush, settle=settle,
                                       retract=self._retract, completed=self._completed,
                                       scanned=self._scanned, opened=self._opened)  # fmt: skip

    # ------------------------------------------------------------------------------------------------ state
    def _load_state(self) -> dict[str, str]:
        entries = self.state.load()
        path = self.dir / "state.json"  # the format before state.sqlite: everything in one file
        if not entries and path.exists():
            state: dict[str, Any] = json.loads(path.read_text("utf-8"))
            if state.get("state_version") != STATE_VERSION:
                raise ValueError(
                    f"{path}: in-process state version {state.get('state_version')!r}, this ESC reads "
                    f"{STATE_VERSION}; point ESC_STATE_DIR at a new folder (or delete this one) and ingest again"
                )
            entries = {RECORDS_OFFSET: str(state.get("records_offset", 0))}
            if state.get("writer"):
                entries["state"] = json.dumps(state["writer"])
        return entries

    def _save_state(self) -> None:
        """What changed since the last save, in one transaction (agents/agent_state.py)."""
        changes: dict[str, str | None] = {**self.writer.state_changes(),
                                          RECORDS_OFFSET: str(self.bus.end_offset(topics.RECORDS))}  # fmt: skip
        self.state.save(changes)
        self.writer.state_saved()
        self._saved_at = time.monotonic()

    # ------------------------------------------------------------------------------------------- connector
    async def _emit(self, msg: Emission) -> None:
        self.log.append(msg.key, msg.value)
        self.bus.publish(topics.RECORDS, msg.key, msg.value)
        metrics.RECORDS_PRODUCED.labels(metrics.source_label(msg.source)).inc()
        self.summary.records += 1
        if self.bus.topic(topics.RECORDS).pending("extract") >= BATCH:
            await self.pump(save=False)

    async def _retract(self, keys: list[str]) -> None:
        for key in keys:
            self.log.append(key.encode("utf-8"), None)
            self.bus.publish(topics.RECORDS, key.encode("utf-8"), None)
        self.summary.tombstones += len(keys)

    async def _flush(self) -> None:
        await self.pump()

    async def _completed(self, done: list[Any]) -> None:
        for c in done:
            self.bus.publish(PROFILES, c.source.encode(), completion_update(c))
        await self.pump()

    async def _opened(self, scan: str) -> None:
        self.bus.publish(PROFILES, b"scan", scan_open_update(scan))
        await self.pump()

    async def _scanned(self, done: ScanComplete) -> None:
        self.bus.publish(PROFILES, b"scan", scan_update(done))
        await self.pump()

    async def _dead(self, dead: DeadLetter) -> None:
        metrics.DLQ.labels(dead.stage, metrics.dlq_reason_label(dead.reason)).inc()
        self._send_dead(dead)

    def _send_dead(self, dead: DeadLetter) -> None:
        value = dead.model_dump_json().encode()
        self.bus.publish(topics.DLQ, (dead.source or "").encode(), value)
        append_line(self.dir / "dlq.jsonl", value)
        self.summary.dead += 1
        self.summary.dead_reasons[dead.reason[:200]] += 1

    # ---------------------------------------------------------------------------------------------- agents
    async def pump(self, save: bool = True) -> None:
        """Run the consumers until every topic is read, then save the state (``save=False``: if SAVE_SECONDS passed)."""
        async with self._pump_lock:
            moved = True
            while moved:
                self.log.flush()  # the durable copy first, as Kafka acknowledges before consumers read
                moved = bool(self._profile() + self._contract() + self._follow() + await self._extract())
            if not save and time.monotonic() - self._saved_at < SAVE_SECONDS:
                return  # seen records are remembered only by a save that holds their evidence: crash-safe
            self._save_state()
            if self._observed:  # their profile evidence is durable now (in the writer's state)
                self.seen.remember_hashes(self._observed)
                self._observed = []

    def _profile(self) -> int:
        batch = self.bus.poll(topics.RECORDS, "profile", BATCH)
        if batch:
            fresh, observed = first_sightings([(m.key, m.value) for m in batch], self.seen)
            self._observed.extend(observed)
            deltas = profile_messages(fresh, stream=f"{self._records}/0",
                                      first_offset=batch[0].offset, last_offset=batch[-1].offset)  # fmt: skip
            for d in deltas:
                self.bus.publish(PROFILES, d.source.encode(), profile_update(d))
        return len(batch)

    def _contract(self) -> int:
        batch = self.bus.poll(PROFILES, "contract", CONTRACT_BATCH)
        if not batch:
            return 0
        out = self.writer.on_updates([m.value for m in batch if m.value is not None and m.value != TICK])
        for key, value in out.diffs:
            assert value is not None
            self.bus.publish(topics.SCHEMA_DIFFS, key, value)
            append_line(self.dir / "diffs.jsonl", value)
            self.summary.diffs.append(json.loads(value))
        for key, value in out.contracts:
            assert value is not None
            self.bus.publish(topics.SCHEMA_CONTRACTS, key, value)
            name = "contract.json" if key == latest_key(self.contract_id) else f"contracts/v{json.loads(value)['version']}.json"
            write_atomic(self.dir / name, value.decode("utf-8"))
        for dead in self.writer.dead:
            self._send_dead(dead)
        self.writer.dead.clear()
        return len(batch)

    def _follow(self) -> int:
        batch = self.bus.poll(topics.SCHEMA_CONTRACTS, "follow", CONTRACT_BATCH)
        latest = latest_key(self.contract_id)
        for m in batch:
            if m.key != latest or m.value is None:
                continue
            self.contract = load_json(m.value.decode("utf-8"))
            self.summary.contract_version = self.contract.version
            if self.query is not None:
                self.query.on_contract(self.contract)
            plan = self.worker.on_contract(self.contract)
            if plan:
                log.info("contract v%s: backfill queued for %s", plan.version, sorted(plan.rekey | plan.replay | plan.ready))
        return len(batch)

    async def _extract(self) -> int:
        batch = self.bus.poll(topics.RECORDS, "extract", BATCH)
        if batch:
            result = await self.worker.on_records([(m.key, m.value) for m in batch])
            self.summary.written += result.written
            for dead in result.dead:
                self._send_dead(dead)
        return len(batch)

    # ----------------------------------------------------------------------------------------------- control
    def start(self) -> None:
        """Start the backfill task (needs a running event loop)."""
        if self._backfill is None:
            self._backfill = asyncio.create_task(self.worker.run_backfill(), name="esc-backfill")

    async def stop(self) -> None:
        if self._backfill is not None:
            self._backfill.cancel()
            try:
                await self._backfill
            except asyncio.CancelledError:
                pass
            self._backfill = None
        await self.pump()

    def close(self) -> None:
        """Release the runtime's own files (the stores are closed by whoever opened them)."""
        self.seen.close()
        self.state.close()

    async def tick(self) -> None:
        """The contract agent's timer: lets idle pushed sources settle."""
        self.bus.publish(PROFILES, b"tick", TICK)
        await self.pump()
        await self._examples()

    async def drain(self) -> None:
        """Wait until every topic is read and the backfill is idle; a failed backfill raises here."""
        self.start()
        while True:
            await self.pump()
            await asyncio.sleep(0)
            if self._backfill is not None and self._backfill.done():
                self._backfill.result()  # raises what stopped it
                raise RuntimeError("the backfill task stopped")
            if self.worker.idle() and self.bus.pending() == 0:
                if self.writer.agent.reinfer_due:  # held back by ESC_REINFER_SECONDS: drained means inferred in full
                    self.bus.publish(PROFILES, b"tick", TICK)
                    continue
                break
            await asyncio.sleep(0.02)
        await self._examples()

    async def _examples(self) -> None:
        """A new version's example queries once the store holds it; the report goes into the contract."""
        async def publish(value: bytes) -> None:
            self.bus.publish(PROFILES, b"examples", value)

        if await self.examples.when_idle(self.worker, publish):
            await self.pump()
        self.worker.ingestor.link_mentions()  # chunks -> the entities they mention (agents/mention_linker.py)
        self.summary.backfilled = self.worker.backfilled
        self.summary.deferred = len(self.worker.deferred)

    async def ingest_once(self, progress: Progress | None = None) -> RunSummary:
        """Deliver every new, changed or deleted file once, wait until contract, graph and vectors are current,
        and return what happened."""
        if self.watcher is None:
            raise ValueError("no data folder: open the runtime with data_dir to ingest")
        t0 = time.perf_counter()
        self.summary = RunSummary(contract_version=self.contract.version if self.contract else 0)
        self.start()
        await self.drain()  # a restored contract first (its replay is the Faust worker's restart replay)
        root = self.watcher.root
        present = drop_files(root) if root.exists() else []  # links and special files too: refused, never read
        here = {printable(p.relative_to(root).as_posix()) for p in present}  # as the manifest names them
        gone = [root / rel for rel in sorted(self.watcher.manifest.hashes) if rel not in here]
        total = len(present) + len(gone)
        self.watcher.begin_scan()  # one scan: its sources settle together, in whatever order files are read
        lane = columnar_lane(self)  # CSV files as whole tables, unless ESC_COLUMNAR=false (embedded_columnar.py)
        stable = await self.watcher.settle_all(present)
        async with self.watcher.batched():  # one flush (a pump) and one send of completions per batch of files
            for i, path in enumerate([*present, *gone], start=1):
                if path.exists() or path.is_symlink():
                    self.summary.files += await self.watcher.process(path, settled=path in stable)
                else:
                    await self.watcher.process(path)
                    self.summary.files_deleted += 1
                if progress is not None:
                    progress(path.relative_to(root).as_posix(), i, total)
        await self.watcher.end_scan()
        await lane.finish(t0) if lane is not None else None  # the columnar files, once their sources settled
        await self.tick()
        await self.drain()
        await self.stop()
        self.summary.seconds = round(time.perf_counter() - t0, 3)
        return self.summary

    async def push(self, source: str, items: Iterable[RecordEnvelope | DeadLetter], deletes: Sequence[str] = ()) -> RunSummary:
        """``esc push --embedded``: records of ``source`` onto the records topic (dead letters to the DLQ), a
        tombstone per id in ``deletes``, then the producer's end of batch, so the source settles now; returns when
        contract, graph and vectors are current."""
        self.summary = RunSummary(contract_version=self.contract.version if self.contract else 0)
        self.start()
        await self.drain()
        for item in items:
            if isinstance(item, DeadLetter):
                await self._dead(item)
            else:
                await self._emit(Emission.of(item))
        await self._retract([record_key(source, rid) for rid in deletes])
        await self.pump()  # the batch's deltas reach the contract agent before its end
        self.bus.publish(PROFILES, source.encode(), flush_update(source))
        await self.drain()
        await self.stop()
        return self.summary

    def health(self) -> dict[str, Any]:
        return {
            "ok": True,
            "mode": "embedded",
            "contract_version": self.contract.version if self.contract else None,
            "backfill": self.worker.tracker.snapshot(),
            "deferred": len(self.worker.deferred),
            "vectors_pending": 0,  # vectors are written with the graph (no outbox)
            "contract_agent": {"step": "waiting for a batch", "seconds": 0.0},  # runs inside pump(), never stuck
        }

    async def serve(self, host: str, port: int, tick_seconds: float = TICK_SECONDS, token: str = "") -> None:
        """Watch the folder, keep contract, graph and vectors current, and serve HTTP until cancelled (the data
        endpoints need ``token`` as a bearer token when it is set)."""
        from esc.streams.runtime.inprocess_http import serve

        await serve(self, host, port, tick_seconds, token)


from esc.streams.runtime.embedded import columnar_lane, ingest_embedded, open_runtime  # noqa: E402  (they build on the runtime above)
