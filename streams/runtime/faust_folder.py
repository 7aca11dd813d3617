"""The Faust worker's drop folder: the file connector producing records through librdkafka (the hot path of a file
load) and, on the profiles topic, its whole-file profile updates (``streams/connectors/file_profiles.py``),
completions, scan openings and closings, each awaited until Kafka has it (the connector then records the file or
the scan as done; a lost end-of-file would leave its sources waiting)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from esc.agents import metrics
from esc.agents.pipeline import completion_update, profile_update, scan_open_update, scan_update
from esc.agents.scan_groups import ScanComplete
from esc.settings import Settings
from esc.streams.connectors.base import Emission
from esc.streams.connectors.file_profiles import PROFILED_HEADER, PROFILED_VALUE
from esc.streams.connectors.file_watcher import FileWatcher
from esc.streams.events import DeadLetter
from esc.streams.readers import SourceFile
from esc.streams.runtime.profile_pool import ProfilePool
from esc.streams.runtime.record_producer import RecordProducer

log = logging.getLogger(__name__)
PROFILED: list[tuple[str, str | bytes | None]] = [(PROFILED_HEADER, PROFILED_VALUE)]


def folder_task(
    settings: Settings, data_dir: Path, records: str, profiles: Any, send_dead: Callable[[DeadLetter], Awaitable[None]],
    profiler: ProfilePool | None = None, batch: int = 5000,
) -> Callable[[], Awaitable[None]]:
    """The coroutine function of the task that watches ``data_dir`` (``profiles``: the Faust profiles topic).
    With ``profiler``, CSV/TSV files are profiled whole before their records are sent (``batch``: the records
    agent's profile batch)."""
    producer = RecordProducer(settings.kafka_bootstrap)

    async def emit(msg: Emission) -> None:
        await producer.send(records, msg.key, msg.value, PROFILED if msg.profiled else None)
        metrics.RECORDS_PRODUCED.labels(metrics.source_label(msg.source)).inc()

    async def retract(keys: list[str]) -> None:
        for key in keys:
            await producer.send(records, key.encode("utf-8"), None)

    async def flush() -> None:
        await producer.flush()

    async def completed(done: list[Any]) -> None:
        sent = [await profiles.send(key=c.source.encode(), value=completion_update(c)) for c in done]
        await asyncio.gather(*sent)

    async def scanned(done: ScanComplete) -> None:
        await (await profiles.send(key=b"scan", value=scan_update(done)))

    async def opened(scan: str) -> None:
        await (await profiles.send(key=b"scan", value=scan_open_update(scan)))

    watcher = FileWatcher(data_dir, settings.state_dir, emit, send_dead, flush, retract=retract,
                          completed=completed, scanned=scanned, opened=opened)  # fmt: skip

    async def profile_file(sf: SourceFile, digest: str, offset: int) -> tuple[int, dict[str, int]] | None:
        """Profile a whole file in the profiling child and send its update before its records (file_profiles.py)."""
        assert profiler is not None  # (hooked only with one)
        got = await profiler.profile_file(sf, digest, offset, batch, watcher.max_fields)
        if isinstance(got, str):
            log.info("%s: profiled record by record (%s)", sf.rel, got)
            return None
        await (await profiles.send(key=sf.source.encode(), value=profile_update(got.delta)))
        return got.delta.records, got.conflicts

    async def send_profiled(sf: SourceFile, digest: str) -> list[str] | None:
        """Send a profiled file's records from the profiling child (file_sender.py), the worker's interpreter left
        to consuming and planning; None: the connector reads the file record by record."""
        assert profiler is not None  # (hooked only with one)
        await producer.flush()  # what this process sent before (a retraction, an earlier file) goes first
        got = await profiler.send_file(sf, digest, settings.kafka_bootstrap, records, watcher.max_fields)
        if isinstance(got, str):
            log.info("%s: records sent record by record (%s)", sf.rel, got)
            return None
        metrics.RECORDS_PRODUCED.labels(metrics.source_label(sf.source)).inc(len(got))
        return [k.decode("utf-8") for k in got]

    if profiler is not None:
        watcher.profile_file = profile_file
        if settings.child_send:  # on by default: see README (ESC_CHILD_SEND)
            watcher.send_profiled = send_profiled

    async def watch() -> None:
        try:
            await watcher.run()
        finally:
            await asyncio.to_thread(producer.close)

    return watch
