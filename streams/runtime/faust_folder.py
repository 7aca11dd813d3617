"""The Faust worker's drop folder: the file connector producing records through librdkafka (the hot path of a file
load) and its completions, scan openings and closings on the profiles topic, each awaited until Kafka has it (the
connector then records the file or the scan as done; a lost end-of-file would leave its sources waiting)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from esc.agents import metrics
from esc.agents.pipeline import completion_update, scan_open_update, scan_update
from esc.agents.scan_groups import ScanComplete
from esc.settings import Settings
from esc.streams.connectors.base import Emission
from esc.streams.connectors.file_watcher import FileWatcher
from esc.streams.events import DeadLetter
from esc.streams.runtime.record_producer import RecordProducer


def folder_task(
    settings: Settings, data_dir: Path, records: str, profiles: Any, send_dead: Callable[[DeadLetter], Awaitable[None]]
) -> Callable[[], Awaitable[None]]:
    """The coroutine function of the task that watches ``data_dir`` (``profiles``: the Faust profiles topic)."""
    producer = RecordProducer(settings.kafka_bootstrap)

    async def emit(msg: Emission) -> None:
        await producer.send(records, msg.key, msg.value)
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

    async def watch() -> None:
        try:
            await watcher.run()
        finally:
            await asyncio.to_thread(producer.close)

    return watch
