"""A Faust worker (the worker's own patches of Faust) whose source partition stops delivering after its first
message, as in the two-worker test's failure of stop 33 (run by ``test_stream_watch_stack.py``). ``MODE`` (argv[5])
is how: ``drop`` takes the partition out of the set Faust fetches; ``skip`` moves the fetch position to the end
behind Faust's back (the records in between are never handed over). ``STALL`` (argv[4]) is the watch's stall in
seconds; 0 runs no watch. Prints ``FIRST`` at the first message and ``SEEN <n>`` once it has seen ``n`` distinct
offsets (argv[6])."""

from __future__ import annotations

import sys
from typing import Any

import faust

from esc.streams.runtime import rebalance_reread, recovery_watch
from esc.streams.runtime.compat import patch_faust_commit_floor, patch_faust_for_aiokafka_014
from esc.streams.runtime.faust_drain import patch_faust_drain_in_place

bootstrap, app_id, topic_name, stall, mode, total = sys.argv[1:7]
patch_faust_for_aiokafka_014()
patch_faust_commit_floor()
patch_faust_drain_in_place()

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
    broker_max_poll_records=1,  # one message per fetch handed over: the sabotage comes before the rest
)
topic = app.topic(topic_name, partitions=1, key_serializer="raw", value_serializer="raw")
seen: set[int] = set()
rebalance_reread.install(app)
if float(stall) > 0:
    recovery_watch.install(app, every=1.0, stream_stall=float(stall))


async def sabotage(tp: Any) -> None:
    if mode == "drop":
        app.consumer._active_partitions.discard(tp)
    else:
        app.consumer._thread.seek(tp, int(total))  # aiokafka's position only: Faust's read offset stays


@app.agent(topic)
async def count(stream: Any) -> None:
    async for event in stream.events():
        first = not seen
        seen.add(event.message.offset)
        if first:
            print("FIRST", flush=True)
            await sabotage(event.message.tp)
        if len(seen) == int(total):
            print(f"SEEN {len(seen)}", flush=True)


if __name__ == "__main__":
    faust.Worker(app, loglevel="warning", quiet=True).execute_from_commandline()
