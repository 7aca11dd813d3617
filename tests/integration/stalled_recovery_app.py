"""A Faust worker whose table recovery is made to stall as in the two-worker test's failures (run by
``test_recovery_watch_stack.py``): right after recovery seeks its active changelog partitions, they are sought
to their end, so recovery sees none of their messages. ``STALL`` (argv[3]) is the watch's stall in seconds; 0 runs
no watch. Prints ``RECOVERED <n>`` (the table's size) when recovery completes."""

from __future__ import annotations

import sys
from typing import Any

import faust
from faust.tables.recovery import Recovery

from esc.streams.runtime import recovery_watch
from esc.streams.runtime.compat import patch_faust_for_aiokafka_014

bootstrap, app_id, stall = sys.argv[1], sys.argv[2], float(sys.argv[3])
patch_faust_for_aiokafka_014()

seek_offsets = Recovery._seek_offsets


async def seek_then_lose(self: Any, consumer: Any, tps: Any, offsets: Any, title: str) -> None:
    await seek_offsets(self, consumer, tps, offsets, title)
    if title == "active" and tps:
        ends = await consumer.highwaters(*tps)
        await consumer.seek_wait({tp: ends[tp] for tp in tps})


Recovery._seek_offsets = seek_then_lose  # type: ignore[method-assign]

app = faust.App(
    app_id,
    broker=f"kafka://{bootstrap}",
    store="memory://",
    web_enabled=False,
    topic_partitions=1,
    topic_replication_factor=1,
    consumer_auto_offset_reset="earliest",
    broker_session_timeout=10,
    broker_heartbeat_interval=1,
    consumer_metadata_max_age_ms=10_000,
)
table = app.Table("t", default=None, partitions=1, key_type=bytes, value_type=bytes)
topic = app.topic(f"{app_id}-in", partitions=1, key_type=bytes, value_type=bytes)


@app.agent(topic)
async def keep(stream: Any) -> None:  # a source topic co-partitioned with the table, as the worker's records
    async for _ in stream:
        pass


if stall > 0:
    recovery_watch.install(app, every=1.0, stall=stall)


@app.task
async def report() -> None:
    await app.tables.recovery.completed.wait()
    print(f"RECOVERED {len(table.data)}", flush=True)


if __name__ == "__main__":
    faust.Worker(app, loglevel="warning", quiet=True).execute_from_commandline()
