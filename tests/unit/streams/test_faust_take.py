"""Batches that fill while the agent handles the one before (streams/runtime/faust_take.py), against a stand-in for
Faust's stream: its passive drainer runs each arriving event through the stream's processors, as Faust's does."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

from esc.streams.runtime.faust_take import take_while_busy


class _Channel:
    def __aiter__(self) -> _Channel:
        return self

    async def __anext__(self) -> Any:
        raise StopAsyncIteration


class FakeStream:
    """What ``take_while_busy`` uses of ``faust.Stream``; ``arrive`` is a record fetched from Kafka."""

    def __init__(self) -> None:
        self.enable_acks = True
        self._processors: list[Callable[[Any], Any]] = []
        self.channel = _Channel()
        self.current_event: Any = None
        self.should_stop = False
        self.acked: list[int] = []
        self._active_agens: set[Any] = set()
        self._queue: asyncio.Queue[int] = asyncio.Queue()
        self._drainer: asyncio.Task[None] | None = None

    def add_processor(self, fun: Callable[[Any], Any]) -> None:
        self._processors.append(fun)

    def _enable_passive(self, channel: Any) -> None:
        self._drainer = asyncio.ensure_future(self._drain())

    async def _drain(self) -> None:
        while True:
            offset = await self._queue.get()
            self.current_event = SimpleNamespace(
                value=offset, message=SimpleNamespace(offset=offset, acked=False)
            )
            for p in self._processors:
                await p(offset)

    async def arrive(self, n: int, start: int = 0) -> None:
        for i in range(start, start + n):
            self._queue.put_nowait(i)
        await asyncio.sleep(0.01)  # the drainer takes them (or waits for room)

    async def wait_for_stopped(self, event: asyncio.Event, timeout: float) -> None:
        try:
            await asyncio.wait_for(event.wait(), timeout)
        except TimeoutError:
            pass

    async def wait(self, event: asyncio.Event) -> None:
        await event.wait()

    async def ack(self, event: Any) -> None:
        if not event.message.acked:
            self.acked.append(event.value)

    async def crash(self, exc: BaseException) -> None:
        raise AssertionError(f"crashed: {exc!r}")

    def stop(self) -> None:
        if self._drainer is not None:
            self._drainer.cancel()


def test_the_next_batch_fills_while_the_agent_holds_one() -> None:
    """Faust's ``take_events`` adds nothing while the agent holds a batch: the next batch is what arrives in
    ``within`` after the agent asks. Here what arrived meanwhile is there, up to the batch size, at once."""

    async def main() -> None:
        stream = FakeStream()
        batches = take_while_busy(stream, 5, within=0.5)
        await stream.arrive(3)
        first = await anext(batches)  # three, after ``within``
        assert [e.value for e in first] == [0, 1, 2]
        await stream.arrive(7, start=3)  # while the agent holds the first batch
        loop = asyncio.get_running_loop()
        t0 = loop.time()
        second = await anext(batches)
        assert [e.value for e in second] == [3, 4, 5, 6, 7]  # full: at once, not after ``within``
        assert loop.time() - t0 < 0.25
        assert stream.acked == [0, 1, 2]  # the first batch is acknowledged when the agent asks for the next
        third = await anext(batches)  # the rest, after ``within``
        assert [e.value for e in third] == [8, 9]
        assert stream.acked == [0, 1, 2, 3, 4, 5, 6, 7]
        await batches.aclose()
        assert stream._processors == [] and stream.enable_acks
        stream.stop()

    asyncio.run(main())


def test_no_more_than_a_batch_is_held_while_the_agent_is_busy() -> None:
    async def main() -> None:
        stream = FakeStream()
        batches = take_while_busy(stream, 4, within=0.05)
        await stream.arrive(1)
        await anext(batches)
        for i in range(1, 10):
            stream._queue.put_nowait(i)
        await asyncio.sleep(0.02)
        assert stream._queue.qsize() == 5  # four gathered (the drainer waits for room after the fourth): 5..9 queued
        second = await anext(batches)
        assert [e.value for e in second] == [1, 2, 3, 4]
        third = await anext(batches)
        assert [e.value for e in third] == [5, 6, 7, 8]
        await batches.aclose()
        stream.stop()

    asyncio.run(main())


def test_events_gathered_across_a_revocation_are_never_acknowledged_here() -> None:
    """Gathered before a revocation, handed out after it: the partition's owner reads them again from the
    committed offset, so this worker must not acknowledge them (an acknowledgement would be committed past them)."""

    async def main() -> None:
        stream = FakeStream()
        revocations = [0]
        batches = take_while_busy(stream, 10, within=0.05, generation=lambda: revocations[0])
        await stream.arrive(2)
        first = await anext(batches)
        await stream.arrive(2, start=2)  # while the agent holds the first batch
        revocations[0] += 1  # a rebalance revoked partitions
        await stream.arrive(2, start=4)
        second = await anext(batches)
        assert [e.value for e in second] == [2, 3, 4, 5]
        assert [e.message.acked for e in second] == [True, True, False, False]  # 2, 3: never acknowledged here
        assert [e.message.acked for e in first] == [False, False]
        await batches.aclose()
        assert stream.acked == [0, 1, 4, 5]
        stream.stop()

    asyncio.run(main())
