"""A table recovery that stopped receiving its changelogs is sought again, and says what the consumer looked like
(faust-streaming 0.15 with aiokafka 0.14).

Seen twice in the two-worker test where one worker leaves in the middle of an ingest (stop 30, stop 32): the worker
that stayed took all four partitions, its recovery of the ``seen-records`` table started reading the changelog
partitions it had just gained, and not one of their messages ever reached it (Faust: "No event received for active
tp ... since recovery start", for minutes), while its fetch loop kept polling. A recovery that does not end keeps
the flow of every other topic stopped, so the worker stopped ingesting for good. Fetch requests kept going out (Faust
logs it when they do not), so the partitions' changelog messages were fetched from a wrong position, or fetched and
dropped, or the partitions were paused; which one it was is not known (not reproduced on this machine).

Every one of those is undone by what recovery itself did at its start: seek the partition to where recovery is
(its offset for the partition, as ``Recovery._seek_offsets`` does; a seek also resets the read offset the fetch
loop drops older messages by) and resume it. So when recovery has run ``STALL_SECONDS`` and a partition it still
needs has had no message for that long, the watch logs the consumer's state for that partition (aiokafka's
position, paused flag and buffered records; Faust's read offset and active / paused sets; the flow) and does just
that. Reading a changelog again from recovery's own offset is what recovery does anyway (events are applied by
key, in order), so a seek that was not needed costs a re-read, nothing else. A new rebalance (flow stopped, or a
recovery about to restart) is left alone: it seeks everything itself. The same loop runs ``stream_watch.py``'s
check of the source partitions once a recovery is over (the same kind of stall, seen after one, stop 33).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Mapping
from typing import Any

from esc.streams.runtime.consumer_state import consumer_state
from esc.streams.runtime.stream_watch import StreamWatch

log = logging.getLogger(__name__)

STALL_SECONDS = 15.0
"""How long recovery may go without a message of a partition it still needs before the partition is sought again
(a healthy recovery here reads thousands of messages a second)."""
CHECK_SECONDS = 5.0


def stalled(
    now: float,
    started_at: float | None,
    received_at: Mapping[Any, float],
    remaining: Mapping[Any, int],
    sought_at: Mapping[Any, float],
    stall: float = STALL_SECONDS,
) -> list[Any]:
    """The partitions recovery still needs (``remaining`` > 0) that had no message for ``stall`` seconds since
    recovery started, since their last message and since the watch last sought them (monotonic times)."""
    if started_at is None or now - started_at < stall:
        return []
    out = []
    for tp, left in remaining.items():
        if left <= 0:
            continue
        last = max(received_at.get(tp, started_at), sought_at.get(tp, started_at), started_at)
        if now - last >= stall:
            out.append(tp)
    return sorted(out, key=str)


def resume_offsets(offsets: Mapping[Any, int | None], tps: list[Any]) -> dict[Any, int]:
    """Where recovery reads each partition from: its offset (the last one it applied, read again as Faust's own
    seek does), the start for -1 or none."""
    return {tp: max(int(offsets.get(tp) or 0), 0) for tp in tps}


async def unstick(app: Any, sought_at: dict[Any, float], now: float, stall: float = STALL_SECONDS) -> list[Any]:
    """One check: seek and resume the partitions a running recovery waits for in vain. Returns them."""
    recovery = app.tables.recovery
    consumer = app.consumer
    if not recovery.in_recovery or not consumer.flow_active or recovery.signal_recovery_start.is_set():
        return []
    tps = stalled(
        now,
        recovery._recovery_started_at,
        recovery._active_events_received_at,
        recovery.active_remaining(),
        sought_at,
        stall,
    )
    if not tps:
        return []
    offsets = resume_offsets(recovery.active_offsets, tps)
    log.warning(
        "table recovery has had no message of %s for %.0f s; seeking them again to %s and resuming them. "
        "Consumer state: %s",
        [str(tp) for tp in tps], stall, {str(tp): off for tp, off in offsets.items()}, consumer_state(consumer, tps),
    )
    await consumer.seek_wait(offsets)
    consumer.resume_partitions(tps)
    for tp in tps:
        sought_at[tp] = now
    return tps


def install(
    app: Any, every: float = CHECK_SECONDS, stall: float = STALL_SECONDS, stream_stall: float | None = None
) -> None:
    """Watch ``app``'s recoveries and, between them, its source partitions (``stream_watch.py``; ``stream_stall``
    None: its default) from its first assignment on. Not an app task: Faust starts those only once the first
    recovery has completed, so a task could not watch that one. The watch is one of the app's futures, cancelled
    when it stops."""
    started: list[Any] = []
    streams = StreamWatch() if stream_stall is None else StreamWatch(stream_stall)

    async def on_assigned(sender: Any, *args: Any, **kwargs: Any) -> None:
        if not started:
            started.append(app.add_future(watch(app, every, stall, streams)))

    app.on_partitions_assigned.connect(on_assigned)  # held strongly (mode's default)


async def watch(
    app: Any, every: float = CHECK_SECONDS, stall: float = STALL_SECONDS, streams: StreamWatch | None = None
) -> None:
    """Check a running recovery, and the source partitions once recovered (``streams``), every ``every``
    seconds."""
    sought_at: dict[Any, float] = {}
    while True:
        await asyncio.sleep(every)
        now = time.monotonic()
        try:
            await unstick(app, sought_at, now, stall)
        except Exception as exc:  # a check must never end the worker (Kafka down: the seek times out); next one
            log.warning("table recovery watch: the check failed (%r); trying again in %.0f s", exc, every)
        if streams is None:
            continue
        try:
            await streams.check(app, now)
        except Exception as exc:  # a check must never end the worker (Kafka down: the end offsets time out)
            log.warning("stream partition watch: the check failed (%r); trying again in %.0f s", exc, every)
