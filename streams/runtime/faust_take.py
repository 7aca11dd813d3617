"""Batches of a Faust stream that fill while the agent handles the batch before (the records agent; issue 15.2).

Faust's ``Stream.take_events`` adds nothing to its buffer while the agent holds a batch: its processor waits for
the batch to be consumed, then the agent's next request waits ``within`` seconds for events. Under load a batch is
therefore what the stream's drainer gathers in those ``within`` seconds, whatever the batch size: TPC-H SF 0.05 on
the stack made batches of 717-5,000 records, and the store writes batches under 1,000 rows ~30 % slower per row than
batches of 5,000 (README, issue 15). Here the next batch is gathered while the agent plans and waits for its write
(the write-behind queue), so under load every batch is full; when idle a new record waits ``within`` seconds at most
after the agent asks, as before. Measured (SF 0.05, alternating runs): 95-150 Neo4j transactions instead of
339-346, the load ~4.5 % faster, all of it in the prose tables; Neo4j's time per row did not change (README).

Acknowledgement is Faust's: a batch's events are acknowledged when the agent asks for the next batch (the records
agent holds them until written, ``write_behind.py``). New here: events gathered across a revocation
(``generation`` moved) are never acknowledged by this worker (``faust.types.tuples.Message.ack`` skips a message
marked acknowledged), as ``seen_table.SharedSeen.batch`` does for a batch a revocation overlapped: the partition's
owner reads them again from the committed offset. At most ``max_`` events are gathered (the drainer waits for room
beyond that: memory and back-pressure bounded as with Faust's ``take``).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncGenerator, Callable
from typing import Any

log = logging.getLogger(__name__)


def take_while_busy(
    stream: Any, max_: int, within: float, generation: Callable[[], int] | None = None
) -> AsyncGenerator[list[Any], None]:
    """Batches of at most ``max_`` events of ``stream``: full ones at once, others after ``within`` s."""
    agen = _take(stream, max_, within, generation or (lambda: 0))
    active = getattr(stream, "_active_agens", None)  # Faust closes the take generators it tracks at its stop
    if active is not None:
        active.add(agen)
    return agen


async def _take(
    stream: Any, max_: int, within: float, generation: Callable[[], int]
) -> AsyncGenerator[list[Any], None]:
    events: list[Any] = []
    gathered_in = generation()  # the revocations seen when ``events`` were gathered
    full = asyncio.Event()
    room = asyncio.Event()
    room.set()

    def revoked_since() -> None:
        nonlocal gathered_in
        now = generation()
        if now != gathered_in:
            for e in events:  # never acknowledged by this worker: read again by the partition's owner
                e.message.acked = True
            gathered_in = now

    async def add(value: Any) -> Any:
        try:
            event = stream.current_event
            if event is None:
                raise RuntimeError("take buffer found current_event is None")
            revoked_since()
            events.append(event)
            if len(events) >= max_:
                full.set()
                room.clear()
                await stream.wait(room)  # not more than ``max_`` held: the agent takes these first
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # any error of a processor crashes the stream, as in Faust's take
            log.exception("error adding to the take buffer: %r", exc)
            await stream.crash(exc)
        return value

    enable_acks = stream.enable_acks
    stream.enable_acks = False  # acknowledged here, after the agent handled them
    stream.add_processor(add)
    stream._enable_passive(aiter(stream.channel))
    try:
        while not stream.should_stop:
            if len(events) < max_:
                await stream.wait_for_stopped(full, timeout=within)
            if not events:
                continue
            revoked_since()
            batch, events = events, []  # the drainer goes on into a new list while the agent has this one
            full.clear()
            room.set()
            try:
                yield batch
            finally:
                for event in batch:
                    await stream.ack(event)
    finally:
        stream.enable_acks = enable_acks
        stream._processors.remove(add)
