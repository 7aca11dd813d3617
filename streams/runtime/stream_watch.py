"""A stream partition this worker owns whose messages stopped coming is sought again, and the log says what the
consumer looked like (faust-streaming 0.15 with aiokafka 0.14; the companion of ``recovery_watch.py``).

Seen once, in the two-worker test where one worker leaves in the middle of an ingest, under two CPU burners (stop
33): the worker that stayed got two records partitions back, recovered its tables, was sought to the committed
offsets, and received the first three records of each (offsets 6,068-6,070 of one, 5,941-5,943 of the other;
the round-robin order of one fetch), then none of the 133 and 89 that followed, for five minutes, while its fetch
loop kept polling and the profiles topic was delivered. Those records were in Kafka long before (the records log
and the seen-index changelog show exactly them never profiled), so their profiles never reached the contract
agent, no source settled, and no contract was published. A fetch whose records Faust stopped handing over (its
loop breaks out of a fetch when the flow stops or the generation changes: the rest is gone, the fetch position
being past them) or a partition left out of the set Faust fetches (paused, or taken out while a stream buffer
was full) would each look exactly like this; which it was is not known.

Both are undone by seeking the partition to the last offset handed over and resuming it. So every check compares,
for each partition of a source topic this worker owns (tables' changelogs are recovery's), the last offset Faust
handed to a stream with the partition's end offset: when messages lie beyond it, nothing of the partition waits in
a stream buffer, and the offset has not moved for ``STALL_SECONDS``, the watch logs the consumer's state for the
partition and seeks it there (that message is read again; profiling drops re-reads through the seen-index and
writes are idempotent). A worker that is only busy never trips it: its buffers hold messages. Nothing is done
during a rebalance or a recovery. Blind spot: right after a seek Faust's read offset names the next message to
read, not the last one read, so a partition stuck with exactly one message left after a seek is not seen.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from esc.streams.runtime.consumer_state import consumer_state

log = logging.getLogger(__name__)

STALL_SECONDS = 20.0
"""How long a partition with messages beyond its last read offset may go without one while this worker's buffers
are empty (a fetch takes at most ``fetch_max_wait_ms``, 500 ms by default)."""


def stuck(
    now: float,
    reads: Mapping[Any, int | None],
    ends: Mapping[Any, int],
    buffered: Mapping[Any, bool],
    since: dict[Any, tuple[int | None, float]],
    stall: float = STALL_SECONDS,
) -> list[Any]:
    """The partitions whose last read offset (``reads``; None: nothing read since the assignment or a seek) has
    not moved for ``stall`` seconds while the partition has messages beyond it (``ends``: the next offset to be
    written) and none of its messages is ``buffered`` in a stream. ``since`` (partition -> (read offset, since
    when)) is kept across checks and updated here: a partition that moved, is caught up, or has messages buffered
    starts over; a partition no longer in ``reads`` is forgotten."""
    for tp in list(since):
        if tp not in reads:
            del since[tp]
    out = []
    for tp, read in reads.items():
        end = ends.get(tp)
        behind = end is not None and end > (read + 1 if read is not None else 0)
        last = since.get(tp)
        if not behind or buffered.get(tp, False) or last is None or last[0] != read:
            since[tp] = (read, now)
        elif now - last[1] >= stall:
            out.append(tp)
    return sorted(out, key=str)


def seek_offsets(
    tps: list[Any], reads: Mapping[Any, int | None], committed: Mapping[Any, int | None]
) -> dict[Any, int]:
    """Where each stuck partition is read again from: its last read offset (that message comes again), else its
    committed offset, else its start."""
    out = {}
    for tp in tps:
        read, done = reads.get(tp), committed.get(tp)
        out[tp] = max(int(read if read is not None else done or 0), 0)
    return out


def _buffered(app: Any, tps: list[Any]) -> dict[Any, bool]:
    """Whether a stream buffer holds messages of each partition's topic (its channels' queues)."""
    index = getattr(app.topics, "_tp_index", {})
    out = {}
    for tp in tps:
        channels = index.get(tp) or ()
        out[tp] = any(chan.queue.qsize() for chan in channels)
    return out


class StreamWatch:
    """One check at a time, from the watch loop of ``recovery_watch`` (every few seconds)."""

    def __init__(self, stall: float = STALL_SECONDS) -> None:
        self.stall = stall
        self.since: dict[Any, tuple[int | None, float]] = {}
        self.generation: int | None = None

    async def check(self, app: Any, now: float) -> list[Any]:
        """Seek and resume the source partitions that stopped delivering. Returns them."""
        consumer = app.consumer
        recovery = app.tables.recovery
        generation = app.consumer_generation_id
        if generation != self.generation:  # a new assignment: every partition starts over
            self.since.clear()
            self.generation = generation
        if (
            getattr(app, "rebalancing", False)
            or not consumer.flow_active
            or recovery.in_recovery
            or not recovery.completed.is_set()
        ):
            self.since.clear()
            return []
        tps = sorted((tp for tp in consumer.assignment() if not consumer._is_changelog_tp(tp)), key=str)
        if not tps:
            return []
        ends = await consumer.highwaters(*tps)
        reads = {tp: consumer._read_offset.get(tp) for tp in tps}
        found = stuck(now, reads, ends, _buffered(app, tps), self.since, self.stall)
        if not found or app.consumer_generation_id != generation or not consumer.flow_active:
            return []  # (a rebalance began while the end offsets were asked for: it seeks everything itself)
        offsets = seek_offsets(found, reads, consumer._committed_offset)
        log.warning(
            "stream partitions %s had messages up to %s and delivered none for %.0f s; seeking them to %s and "
            "resuming them. Consumer state: %s",
            [str(tp) for tp in found], {str(tp): ends.get(tp) for tp in found}, self.stall,
            {str(tp): off for tp, off in offsets.items()}, consumer_state(consumer, found),
        )
        await consumer.seek_wait(offsets)
        consumer._buffered_partitions.difference_update(found)
        consumer.resume_partitions(found)
        for tp in found:
            self.since[tp] = (consumer._read_offset.get(tp), now)
        return found
