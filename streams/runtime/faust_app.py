"""The Faust runtime: moves messages between Kafka topics and the pipeline in ``agents/pipeline.py``.

Agents (all short loops; decisions live in agents/):
- ``records``: one pass over esc.records, two halves per batch, run concurrently: profiling (profile updates on
  the internal ``<prefix>.profiles`` topic, one partition) and planning the extraction; the batch is then written
  (ExtractionWorker -> Neo4j + Weaviate; dead letters -> esc.dlq) while the next one is planned (write_behind.py).
- ``contract``: profile updates -> the single ContractWriter -> esc.schema.diffs (CloudEvents) and the compacted
  esc.schema.contracts; its state (merged profiles, applied watermarks, contract) is a changelog-backed table.
- tasks: follow esc.schema.contracts (every worker keeps the latest contract), backfill, the drop-folder watcher.

Delivery is at-least-once: a batch is acknowledged only after its writes returned, and every write is idempotent
(MERGE by identity key, deterministic vector ids), so re-delivery never duplicates.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any, cast

import faust

from esc.agents import metrics
from esc.agents.embedding import background_embedder, get_embedder
from esc.agents.examples_runner import ExampleChecker
from esc.agents.extraction import Planned
from esc.agents.ingest import Ingestor
from esc.agents.pipeline import (
    TICK,
    ContractWriter,
    ExtractionWorker,
)
from esc.agents.reconcile.hook import Reconciler
from esc.agents.stores.weaviate import collection_name
from esc.agents.vector_outbox import VectorOutbox, VectorWriter, run_writer
from esc.contract.model import Contract
from esc.settings import Settings
from esc.streams import ce_binding, topics
from esc.streams.connectors.file_profiles import FILES_AT_ONCE
from esc.streams.events import DeadLetter, RecordEnvelope
from esc.streams.push import PUSH_STAGE
from esc.streams.runtime import log_limits, rebalance_reread, recovery_watch
from esc.streams.runtime.await_chains import await_chains
from esc.streams.runtime.compat import patch_faust_commit_floor, patch_faust_for_aiokafka_014
from esc.streams.runtime.consumer_state import partition_lines
from esc.streams.runtime.deferred_table import SharedDeferred, worker_id
from esc.streams.runtime.faust_drain import patch_faust_drain_in_place
from esc.streams.runtime.faust_folder import folder_task
from esc.streams.runtime.faust_take import take_while_busy
from esc.streams.runtime.gc_tuning import tune_gc, tune_malloc
from esc.streams.runtime.http_auth import check_bind, middleware
from esc.streams.runtime.http_surface import Surface, add_routes
from esc.streams.runtime.kafka_io import read_topic
from esc.streams.runtime.lag import export_consumer_lag
from esc.streams.runtime.profile_pool import ProfilePool
from esc.streams.runtime.readiness import hostport, readiness, watch_kafka, watch_tcp
from esc.streams.runtime.replay_reader import read_source_values
from esc.streams.runtime.seen_table import SharedSeen
from esc.streams.runtime.source_offsets import SourceOffsets
from esc.streams.runtime.step_watch import STUCK_SECONDS, WAITING_FOR_BATCH, StepWatch
from esc.streams.runtime.stores import DEPENDENCIES, dependency, graph_store, query_service, vector_store
from esc.streams.runtime.write_behind import WriteBehind
from esc.streams.runtime.writer_fence import WriterFence
from esc.streams.schema_events import parse_contract

log = logging.getLogger(__name__)
PROFILE_BATCH = 5000
REPLAY_BATCH = 2000  # a replay is planned and written in parts this size: new records wait for one part at most
BATCH_WITHIN = 0.2
"""Seconds a records batch waits to fill up, counted from when the agent asks for it (a new record waits for the
batch under way and up to this long; what arrived while the agent handled the batch before is in it already,
``faust_take.take_while_busy``). 0.1 cut a steady push's latency a little more but made TPC-H SF 0.05's load
batches smaller (260 Neo4j transactions instead of 157) and the load slower (130.2 s against 126.9 s)."""
TICK_SECONDS = 2.0
MENTION_LINK_SECONDS = 5.0
EXAMPLES_QUIET_SECONDS = 5.0  # a new version's example queries wait for its records to stop arriving


def build_app(settings: Settings, data_dir: Path | None = None) -> faust.App:
    patch_faust_for_aiokafka_014()
    patch_faust_commit_floor()
    patch_faust_drain_in_place()
    prefix = settings.topic_prefix
    state = settings.state_dir / "worker"
    state.mkdir(parents=True, exist_ok=True)
    check_bind(settings.host, settings.api_token)
    app = faust.App(
        settings.app_id,
        broker=f"kafka://{settings.kafka_bootstrap}",
        datadir=str(state / "faust"),
        store="memory://",
        web_enabled=True,
        web_host=settings.host,
        web_bind=settings.host,  # never listen on every interface by default
        web_port=settings.web_port,
        web_application_options={"middlewares": [middleware(settings.api_token)]},  # ESC_API_TOKEN (http_auth)
        topic_partitions=topics.RECORDS.partitions,
        topic_replication_factor=1,
        consumer_auto_offset_reset="earliest",
        broker_session_timeout=10,
        broker_heartbeat_interval=1,
        broker_rebalance_timeout=5,
        broker_request_timeout=30,
        broker_commit_interval=0.5,
        # A topic the consumer's first metadata misses (one Faust creates just before subscribing: a table's
        # changelog) is assigned only at the next metadata refresh: 5 minutes by default.
        consumer_metadata_max_age_ms=10_000,
        producer_acks=-1,
        producer_max_request_size=32 << 20,  # the broker allows 32 MiB (ops/kafka/server.properties)
        producer_max_batch_size=1 << 20,  # per partition: 16 KiB (the default) is ~25 records of a wide table
        producer_linger_ms=5,
        # zstd (cramjam): aiokafka compresses lz4 at level 9 (11 MB/s, measured) and gzip at 4 MB/s, on the event
        # loop; zstd runs at ~240 MB/s with a better ratio. The contract agent's state changelog and profile
        # deltas are megabytes per batch, so this was ~8% of the worker's CPU during a file load.
        producer_compression_type="zstd",
        stream_wait_empty=False,
        stream_buffer_maxsize=16384,
        table_cleanup_interval=3600,
    )
    rebalance_reread.install(app)  # a message a rebalance overtook is read again, never committed unread
    recovery_watch.install(app)  # a recovery, or a source partition, that stopped receiving is sought again

    def topic(spec: topics.TopicSpec) -> Any:
        return app.topic(
            spec.name(prefix),
            key_type=bytes,
            value_type=bytes,
            key_serializer="raw",
            value_serializer="raw",
            partitions=spec.partitions,
        )

    records_topic = topic(topics.RECORDS)
    records_name = records_topic.get_topic_name()
    queries_topic = topic(topics.QUERIES)
    answers_topic = topic(topics.ANSWERS)
    dlq_topic = topic(topics.DLQ)
    diffs_topic = topic(topics.SCHEMA_DIFFS)
    contracts_topic = topic(topics.SCHEMA_CONTRACTS)
    profiles_topic = app.topic(
        topics.PROFILES.name(prefix), key_type=bytes, value_type=bytes, key_serializer="raw", value_serializer="raw",
        partitions=topics.PROFILES.partitions, internal=True,
    )
    # One partition, written only by the single contract agent (see save_state).
    contract_state = app.Table("contract-agent", default=None, partitions=1, key_type=str, value_type=str)

    async def save_state(entries: dict[str, str]) -> None:
        """The entries of the agent's state that changed (agents/agent_state.py), in order. Table writes outside
        per-event iteration (the agent works on batches): the table has exactly one partition, so each changelog
        entry goes to partition 0 explicitly (no partitioner, no metadata race). Awaited: the batch's profile
        updates are acknowledged only once the state holding them is durable, so a crash in between re-delivers
        them (the agent drops re-applied watermarks) instead of losing them."""
        sent = []
        for key, value in entries.items():
            contract_state.data[key] = value
            sent.append(contract_state.send_changelog(0, key, value))  # queued in order, one partition
        await asyncio.gather(*sent)

    outbox = VectorOutbox(state / "vector-outbox.sqlite")  # vectors follow the graph (agents/vector_outbox.py)

    def new_ingestor() -> Ingestor:
        graph = graph_store(settings)
        return Ingestor(
            graph, vector_store(settings), get_embedder(), collection_name(settings.app_id),
            outbox=outbox, reconciler=Reconciler(graph, state / "reconcile-members.sqlite"),
        )

    offsets = SourceOffsets()  # in which stretches of the records partitions read here each source's records are

    def replay(sources: set[str]) -> AsyncIterator[Sequence[bytes | RecordEnvelope]]:
        # librdkafka in a thread reads the topic and filters the keys (streams/runtime/replay_reader.py)
        # only the stretches where this worker read the sources' records, where it knows (source_offsets.py)
        return read_source_values(
            settings.kafka_bootstrap, records_topic.get_topic_name(), sources, REPLAY_BATCH, offsets.snapshot(sources)
        )

    runtime: dict[str, Any] = {}

    def worker() -> ExtractionWorker:
        if "worker" not in runtime:
            runtime["worker"] = ExtractionWorker(new_ingestor(), replay, state_path=state / "extraction.json")
        return runtime["worker"]

    async def send_dead(dead: DeadLetter) -> None:
        await dlq_topic.send(key=(dead.source or "").encode(), value=dead.model_dump_json().encode())

    # -- profilers ---------------------------------------------------------------------------------------------
    # records already profiled, by any worker: re-deliveries and rebalances count once (streams/runtime/seen_table.py)
    seen = SharedSeen(app, records_name, topics.RECORDS.partitions, state / "seen.sqlite")
    seen.profiles_topic = profiles_topic
    seen.producer = worker_id(str(state.resolve())).decode()

    # profiling runs in child processes (streams/runtime/profile_pool.py): record batches one at a time (the seen
    # gate), a scan's files FILES_AT_ONCE at once (the second child is spawned only when two files are)
    profiler = ProfilePool(FILES_AT_ONCE)

    async def profile_events(events: list[Any]) -> None:
        # One delta per source for a whole batch, whatever partitions it spans; its watermark names every
        # partition's last offset. Big windows: a delta costs the contract agent a merge (and a re-inference
        # once its source is settled) whatever its size.
        await seen.profile(events, profiler.profile)

    send_staged = seen.send_staged
    # sources with records deferred per partition, by any worker: a worker that leaves loses none (deferred_table.py)
    deferred = SharedDeferred(app, records_name, topics.RECORDS.partitions, worker_id(str(state.resolve())))
    deferred.worker = worker

    # -- the contract agent (single writer: one partition, one consumer) ---------------------------------------
    agent_step = StepWatch("contract agent")  # what it is doing since when: /healthz, and a warning when stuck

    behind = WriteBehind(  # records: written behind planning
        lambda: app.consumer, lambda: seen.generation, owned=lambda m: m.partition in seen.owned
    )
    fence = WriterFence(app, contract_state, profiles_topic.get_topic_name(), seen, behind.gate)  # rebalances, stops

    @app.agent(profiles_topic, concurrency=1)
    async def contract(stream: Any) -> None:
        async for events in stream.take_events(1000, within=0.05):
            await fence.ready.wait()
            async with fence.gate:
                if not fence.owned():
                    seen.never_ack(events)  # fetched before its partition moved: the new owner reads it
                    continue
                with seen.batch(events):  # cut by a stop or overlapped by a rebalance: read again, not committed
                    fence.writer = await apply_updates(fence.writer, [e.value for e in events])

    async def apply_updates(writer: ContractWriter | None, batch: list[bytes]) -> ContractWriter:
        agent_step.enter("applying a batch")
        if writer is None:
            entries = {str(k): str(v) for k, v in contract_state.data.items() if v is not None}
            writer = ContractWriter.from_entries(entries, contract_id=settings.app_id)
        updates = [v for v in batch if v != TICK]
        out = await asyncio.to_thread(writer.on_updates, updates)  # inference and evolve: off the loop
        agent_step.enter("publishing diffs and contracts")
        for key, value in out.diffs:  # CloudEvents Kafka binding, structured mode (streams/ce_binding.py)
            headers, event = ce_binding.diff_message(value)
            await diffs_topic.send(key=key, value=event, headers=headers)
        for key, value in out.contracts:
            headers, event = ce_binding.contract_message(value)
            await contracts_topic.send(key=key, value=event, headers=headers)
        for dead in writer.dead:
            await send_dead(dead)
        writer.dead.clear()
        if updates or out.contracts:
            agent_step.enter("saving its state")
            await save_state(await asyncio.to_thread(writer.state_changes))
            writer.state_saved()
        agent_step.enter(WAITING_FOR_BATCH)
        return writer

    @app.timer(TICK_SECONDS)
    async def lag() -> None:
        export_consumer_lag(app.consumer)

    examples = ExampleChecker("neo4j")

    @app.timer(TICK_SECONDS)
    async def check_examples() -> None:
        """A new version's example queries, once this worker's store holds it (nothing to replay or defer); the
        report goes to the contract writer, which publishes it in the contract (agents/contract_reports.py)."""
        async def publish(value: bytes) -> None:
            await profiles_topic.send(key=b"examples", value=value)

        if "worker" in runtime:
            await examples.when_idle(worker(), publish, quiet=EXAMPLES_QUIET_SECONDS)

    @app.timer(TICK_SECONDS)
    async def tick() -> None:
        agent_step.check(STUCK_SECONDS)  # a tick reaches the agent every TICK_SECONDS: a long wait is a stall
        await send_staged()  # what a crash left staged (and a batch whose send failed)
        await deferred.tidy()
        await profiles_topic.send(key=b"tick", value=TICK)  # lets idle pushed sources settle

    # -- extractors: a batch is planned while the one before it is written (streams/runtime/write_behind.py) ------
    async def write_events(events: list[Any], planned: Planned) -> None:
        result = await worker().write_planned(planned)
        await deferred.after_batch(events, result.deferred)
        for dead in result.dead:
            await send_dead(dead)

    # -- one pass over esc.records -----------------------------------------------------------------------------
    @app.agent(records_topic)
    async def records(stream: Any) -> None:
        """Profilers and extractor read the records topic in one pass: Faust dispatches each message once (two
        agents on one topic cost two events, two stream iterations and two acks per message, which was a good
        part of the worker's CPU in a file load). Both halves of a batch run concurrently, and the write does not
        wait for the profile (a pushed batch's profile takes longer than its plan: the new records would wait for
        it); the batch is acknowledged when both are done, so a crash re-delivers it (profiling drops
        re-deliveries through the seen-index, extraction writes idempotently). The next batch fills while this
        one is planned and written (``faust_take.py``)."""
        async for batch in take_while_busy(stream, PROFILE_BATCH, BATCH_WITHIN, generation=lambda: seen.generation):
            events = list(batch)
            offsets.observe(events)
            generation = seen.generation
            with seen.batch(events):  # cut by a stop or overlapped by a rebalance: read again, not committed
                profiling = asyncio.ensure_future(profile_events(events))  # batches reach seen.gate in order
                try:
                    planned = await worker().plan_records([(e.key, e.value) for e in events])
                except BaseException:
                    profiling.cancel()
                    await asyncio.gather(profiling, return_exceptions=True)
                    raise
                await behind.submit(  # acknowledged once written and profiled
                    events, generation, functools.partial(write_events, events, planned), after=profiling
                )

    @app.task
    async def follow_contracts() -> None:
        latest = settings.app_id.encode()

        def only_latest(key: bytes | None) -> bool:
            return key == latest

        def apply(value: bytes) -> None:
            contract = parse_contract(value)
            service.on_contract(contract)
            plan = worker().on_contract(contract)
            if plan:
                log.info("contract v%s: backfill queued for %s", plan.version, sorted(plan.rekey | plan.replay | plan.ready))

        # Catch up to the newest contract first (a restart must not walk the history version by version), then
        # follow; on_contract ignores versions older than the one in use.
        newest: bytes | None = None
        async for msg in read_topic(settings, contracts_topic.get_topic_name(), key_filter=only_latest):
            newest = msg.value if msg.value is not None else newest
        if newest is not None:
            apply(newest)
        async for msg in read_topic(settings, contracts_topic.get_topic_name(), key_filter=only_latest, follow=True):
            if msg.value is not None:
                apply(msg.value)

    @app.task
    async def backfill() -> None:
        await worker().run_backfill()

    @app.task
    async def vectors() -> None:
        """Drain the vector outbox: embed and upsert behind the graph. A store error is retried (with backoff)
        and nothing leaves the outbox before the store acknowledged it."""
        ing = worker().ingestor
        writer = VectorWriter(outbox, ing.vectors, background_embedder(), ing.collection, embed_batch=ing.embed_batch)
        def link_mentions() -> object:
            if not dependency("neo4j").up:  # not in an outage
                return None
            return ing.link_mentions(MENTION_LINK_SECONDS, stop=lambda: worker().busy())  # gives way to records

        await run_writer(writer, lambda: worker().busy(), link_mentions)

    # -- dead letters that clients wrote (esc push: stage "push") are counted here, the worker's own where sent --
    @app.agent(dlq_topic)
    async def count_pushed_dead_letters(stream: Any) -> None:
        async for raw in stream:
            try:
                dead = json.loads(raw)
            except (TypeError, ValueError):
                continue
            if isinstance(dead, dict) and dead.get("stage") == PUSH_STAGE:
                metrics.DLQ.labels(PUSH_STAGE, metrics.dlq_reason_label(str(dead.get("reason", "")))).inc()

    # -- questions: esc.queries -> esc.answers, and HTTP -------------------------------------------------------
    service = query_service(settings)  # store clients connect on the first question

    @app.agent(queries_topic)
    async def ask(stream: Any) -> None:
        answers_prefix = settings.topic("answers")
        async for raw in stream:
            env = await service.answer_async(raw)
            # reply_to may only name an answers topic: a request must never write into records or contracts.
            reply_to = env.reply_to or ""
            ok = reply_to.startswith(answers_prefix)
            dest = app.topic(reply_to, key_serializer="raw", value_serializer="raw") if ok else answers_topic
            await dest.send(key=env.id.encode(), value=env.model_dump_json().encode())

    # -- HTTP (streams/runtime/http_surface.py, the same routes as the embedded runtime) -----------------------
    def health() -> dict[str, Any]:
        w = runtime.get("worker")
        return {
            "ok": True,
            "mode": "kafka",
            "contract_version": w.contract.version if w and w.contract else None,
            "backfill": w.tracker.snapshot() if w else {},
            "deferred": len(w.deferred) if w else 0,
            "vectors_pending": outbox.pending(),
            "contract_agent": agent_step.snapshot(),
        }

    def ready() -> dict[str, Any]:
        w = runtime.get("worker")
        return readiness(DEPENDENCIES, agent_step, w.tracker if w else None, started="started" in runtime)

    @app.task
    async def started() -> None:
        runtime["started"] = True  # Faust starts app tasks once the first recovery completed: records flow

    def contract_in_use() -> Contract | None:
        w = runtime.get("worker")
        return w.contract if w is not None else None

    add_routes(cast(Any, app.web).web_app.router, Surface(health, ready, contract_in_use, lambda: service))

    @app.task
    async def kafka_watch() -> None:
        # Faust has set up logging by now: bound what the clients repeat, hold them back during a reported outage
        log_limits.install(down=lambda name: name in DEPENDENCIES and not DEPENDENCIES[name].up)
        await asyncio.gather(
            watch_kafka(dependency("kafka"), settings.kafka_bootstrap),
            watch_tcp(dependency("neo4j"), hostport(settings.neo4j_uri)),
            watch_tcp(dependency("weaviate"), hostport(settings.weaviate_url)),
        )

    # -- drop folder (streams/runtime/faust_folder.py) ----------------------------------------------------------
    if data_dir is not None:
        whole_files = profiler if settings.columnar else None  # CSV/TSV files profiled whole, before their records
        app.task(folder_task(settings, data_dir, records_name, profiles_topic, send_dead, whole_files, PROFILE_BATCH))

    return app


def run_worker(settings: Settings, data_dir: Path | None, loglevel: str = "info") -> None:
    """Run a worker in the foreground until SIGTERM / Ctrl-C."""
    from esc.streams.runtime.kafka_io import ensure_topics

    tune_malloc()  # before any thread starts
    asyncio.run(ensure_topics(settings, topics.WORKER))  # visible to the consumer before it subscribes
    app = build_app(settings, data_dir)
    tune_gc()
    Worker(app, loglevel=loglevel, quiet=True).execute_from_commandline()


class Worker(faust.Worker):
    """Faust's worker; SIGUSR1 also logs every await chain down to its wait point (``await_chains.py``)."""

    def _on_sigusr1(self) -> None:
        super()._on_sigusr1()
        log.warning("where each task and async generator waits (SIGUSR1):\n%s", await_chains())
        log.warning("the consumer's partitions (SIGUSR1):\n%s", partition_lines(self.app.consumer))
