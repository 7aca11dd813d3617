"""Record batches written behind their planning (the Faust records agent; issue 15.2).

A batch used to go through parse, plan and write, and only then was the next batch taken: the store wrote while
the worker's Python idled, then the worker planned while the store idled (TPC-H SF 0.05 on the stack: the event
loop idle 75 % of the load, the Neo4j round trips half of it). Here the agent queues a planned batch's write and
goes on taking and planning the next ones while it is written (at most ``depth`` batches queued: memory and
back-pressure stay bounded); writes stay one at a time, in the order the batches were planned.

At-least-once is kept: the batches' take (``faust_take.py``, as Faust's ``take_events``) acknowledges a batch when
the agent asks for the next one, which is now before the batch is written, so its events are held (marked
acknowledged, so that acknowledgement counts for nothing: ``faust.types.tuples.Message.ack``) and acknowledged to
the consumer only after their write returned. A write that fails leaves its events unacknowledged and raises in
the agent at the next batch (or at the stop); a batch that a revocation overlapped is never acknowledged by this
worker (the next owner reads it again, as ``seen_table.SharedSeen.batch`` does for batches cut by a rebalance).
The stop drains the write under way (``writer_fence.WriterFence``).
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from typing import Any


class WriteBehind:
    def __init__(
        self,
        consumer: Callable[[], Any],
        generation: Callable[[], int],
        depth: int = 2,
        owned: Callable[[Any], bool] | None = None,
    ) -> None:
        self._consumer = consumer  # the app's consumer (created after the app)
        self._generation = generation  # revocations seen so far (SharedSeen.generation)
        self._owned = owned  # whether this worker still owns a message's partition (when it is acknowledged)
        self.depth = depth  # batches planned and not written yet, at most (the one being written included)
        self.gate = asyncio.Lock()  # held while a batch is written
        self._pending: deque[asyncio.Task[None]] = deque()

    async def submit(
        self,
        events: Sequence[Any],
        generation: int,
        write: Callable[[], Awaitable[None]],
        after: asyncio.Future[Any] | None = None,
    ) -> None:
        """Queue a planned batch's write behind the batches queued before it; returns once at most ``depth``
        are queued (raising the error of one that failed). Its events are acknowledged when ``write`` returned,
        unless a revocation came after ``generation`` (the batch's start) or the partition is no longer owned.
        ``after``: other work on the batch (its profile) that must end before it is acknowledged; awaited outside
        ``gate``, which a rebalance waits for (a profile waits for the rebalance to end: inside, they would wait
        for each other)."""
        held = [e.message for e in events if not e.message.acked]  # (those left to another owner stay so)
        for m in held:
            m.acked = True  # take_events' acknowledgement must not count before the write
        before = self._pending[-1] if self._pending else None
        if after is not None:
            after.add_done_callback(_retrieved)
        self._pending.append(asyncio.create_task(self._write(held, generation, write, before, after)))
        await self._drain(lambda: self._pending[0].done() or len(self._pending) > self.depth)

    async def wait(self) -> None:
        """Until every queued batch is written; raises the first error."""
        await self._drain(lambda: True)

    async def _drain(self, more: Callable[[], bool]) -> None:
        try:
            while self._pending and more():
                await self._pending.popleft()
        except BaseException:
            rest, self._pending = list(self._pending), deque()
            for task in rest:  # queued behind the failed one: they fail with it (not written, not acknowledged)
                task.cancel()
            await asyncio.gather(*rest, return_exceptions=True)
            raise

    async def _write(
        self,
        held: list[Any],
        generation: int,
        write: Callable[[], Awaitable[None]],
        before: asyncio.Task[None] | None,
        after: asyncio.Future[Any] | None,
    ) -> None:
        if before is not None:
            await before  # in order; a batch behind one that failed is not written either (both are read again)
        async with self.gate:
            await write()
        if after is not None:
            await asyncio.shield(after)  # (a cancelled write leaves the profile to finish on its own)
        if self._generation() != generation:
            return  # a revocation overlapped the batch: read again by the partition's owner
        consumer = self._consumer()
        for m in held:
            if self._owned is not None and not self._owned(m):
                continue  # fetched for a partition revoked before the batch began: its new owner reads it
            m.acked = False
            consumer.ack(m)


def _retrieved(fut: asyncio.Future[Any]) -> None:
    """An ``after`` whose batch's write failed first is never awaited: its error is taken here (it was raised or
    logged where it happened), so asyncio does not report it as never retrieved."""
    if not fut.cancelled():
        fut.exception()
