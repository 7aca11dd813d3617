"""The Faust runtime: Kafka topics in, the agents' functions in the middle, stores and topics out.

Agents here are short loops; the work happens in ``agents/`` so the in-process runtime can share it.
Delivery is at-least-once: a batch's offsets are committed only after the stores acknowledged the batch, and
every write is idempotent (MERGE by key, deterministic vector ids), so re-delivery never duplicates.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any

import faust

from agents import metrics
from agents.embedding import get_embedder
from agents.ingest import Ingestor
from agents.stores.weaviate import collection_name
from esc.settings import Settings
from streams import topics
from streams.connectors.file_watcher import FileWatcher
from streams.events import DeadLetter, RecordEnvelope
from streams.runtime.compat import patch_faust_for_aiokafka_014
from streams.runtime.stores import graph_store, vector_store

log = logging.getLogger(__name__)
BATCH = 500
BATCH_WITHIN = 0.25


def build_app(settings: Settings, data_dir: Path | None = None) -> faust.App:
    patch_faust_for_aiokafka_014()
    state = settings.state_dir / "worker"
    state.mkdir(parents=True, exist_ok=True)
    app = faust.App(
        settings.app_id,
        broker=f"kafka://{settings.kafka_bootstrap}",
        datadir=str(state / "faust"),
        store="memory://",
        web_enabled=True,
        web_host=settings.host,
        web_port=settings.web_port,
        web_in_thread=False,
        topic_partitions=topics.RECORDS.partitions,
        topic_replication_factor=1,
        consumer_auto_offset_reset="earliest",
        broker_session_timeout=10,
        broker_heartbeat_interval=1,
        broker_rebalance_timeout=5,
        broker_request_timeout=30,
        broker_commit_interval=1.0,
        producer_acks=-1,
        stream_wait_empty=False,
    )

    def topic(spec: topics.TopicSpec) -> Any:
        return app.topic(
            spec.name(settings.topic_prefix),
            key_type=bytes,
            value_type=bytes,
            key_serializer="raw",
            value_serializer="raw",
            partitions=spec.partitions,
            compacting=spec.compacted or None,
        )

    records_topic = topic(topics.RECORDS)
    dlq_topic = topic(topics.DLQ)
    runtime: dict[str, Ingestor] = {}

    def ingestor() -> Ingestor:
        if "ingestor" not in runtime:
            runtime["ingestor"] = Ingestor(
                graph_store(settings), vector_store(settings), get_embedder(), collection_name(settings.app_id)
            )
        return runtime["ingestor"]

    async def send_dead(dead: DeadLetter) -> None:
        metrics.DLQ.labels(dead.stage, metrics.dlq_reason_label(dead.reason)).inc()
        await dlq_topic.send(key=(dead.source or "").encode(), value=dead.model_dump_json().encode())

    @app.agent(records_topic)
    async def extract(stream: Any) -> None:
        async for batch in stream.take(BATCH, within=BATCH_WITHIN):
            result = await asyncio.to_thread(ingestor().handle, list(batch))
            for dead in result.dead:
                await dlq_topic.send(key=(dead.source or "").encode(), value=dead.model_dump_json().encode())

    @app.page("/metrics")
    async def metrics_page(web: Any, request: Any) -> Any:
        return web.bytes(metrics.render(), content_type="text/plain; version=0.0.4; charset=utf-8")

    @app.page("/healthz")
    async def healthz(web: Any, request: Any) -> Any:
        return web.json({"ok": True})

    if data_dir is not None:
        pending: list[Any] = []

        async def emit(env: RecordEnvelope) -> None:
            fut = await records_topic.send(key=env.key().encode("utf-8"), value=env.model_dump_json().encode())
            pending.append(fut)
            metrics.RECORDS_PRODUCED.labels(metrics.source_label(env.source)).inc()

        async def flush() -> None:
            if pending:
                await asyncio.gather(*pending)
                pending.clear()

        watcher = FileWatcher(data_dir, settings.state_dir, emit, send_dead, flush)

        @app.task
        async def watch() -> None:
            try:
                await watcher.run()
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("file watcher stopped")
                raise

    return app


def run_worker(settings: Settings, data_dir: Path | None, loglevel: str = "info") -> None:
    """Run a worker in the foreground until SIGTERM / Ctrl-C."""
    app = build_app(settings, data_dir)
    worker = faust.Worker(app, loglevel=loglevel, quiet=True)
    worker.execute_from_commandline()
