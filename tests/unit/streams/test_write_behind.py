"""Record batches written behind their planning (streams/runtime/write_behind.py): one write at a time, in order;
a batch's events are acknowledged to the consumer only after its write returned, never when its write failed or a
revocation overlapped it; what another owner must read stays unacknowledged."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import pytest

from esc.streams.runtime.write_behind import WriteBehind


@dataclass(eq=False)
class Msg:
    offset: int
    acked: bool = False


@dataclass
class Consumer:
    acked: list[int] = field(default_factory=list)

    def ack(self, m: Msg) -> bool:
        if m.acked:
            return False
        m.acked = True
        self.acked.append(m.offset)
        return True


def events(*offsets: int) -> list[Any]:
    return [SimpleNamespace(message=Msg(o)) for o in offsets]


def take_events_ack(batch: list[Any], consumer: Consumer) -> None:
    """What Faust's take_events does when the agent asks for the next batch (faust.types.tuples.Message.ack)."""
    for e in batch:
        if not e.message.acked:
            consumer.ack(e.message)


def test_batches_are_written_in_order_one_at_a_time_and_acknowledged_after_their_write() -> None:
    consumer, log = Consumer(), []
    behind = WriteBehind(lambda: consumer, lambda: 0, depth=2)
    release = asyncio.Event()

    async def write(name: str, wait: bool) -> None:
        log.append(f"{name} starts")
        if wait:
            await release.wait()
        log.append(f"{name} written")

    async def scenario() -> None:
        first, second, third = events(0, 1), events(2, 3), events(4)
        await behind.submit(first, 0, lambda: write("first", True))
        take_events_ack(first, consumer)  # the agent moved on: nothing may be committed yet
        await behind.submit(second, 0, lambda: write("second", False))  # queued behind it: the agent goes on
        take_events_ack(second, consumer)
        await asyncio.sleep(0.01)
        assert consumer.acked == [] and log == ["first starts"]
        submitted = asyncio.create_task(behind.submit(third, 0, lambda: write("third", False)))
        await asyncio.sleep(0.01)
        assert not submitted.done()  # two batches queued already: the third waits (bounded memory)
        release.set()
        await submitted
        take_events_ack(third, consumer)
        await behind.wait()

    asyncio.run(scenario())
    assert log == ["first starts", "first written", "second starts", "second written", "third starts", "third written"]
    assert consumer.acked == [0, 1, 2, 3, 4]


def test_a_failed_write_is_not_acknowledged_and_raises_at_the_next_batch() -> None:
    consumer = Consumer()
    behind = WriteBehind(lambda: consumer, lambda: 0)

    async def broken() -> None:
        raise ConnectionError("store down for good")

    async def fine() -> None:
        pass

    async def scenario() -> None:
        await behind.submit(events(0, 1), 0, broken)
        with pytest.raises(ConnectionError):  # at the next batch, or the one after (when the failure is seen)
            await behind.submit(events(2), 0, fine)  # queued behind the failing one: not written either
            await behind.submit(events(3), 0, fine)
        await behind.wait()  # nothing left queued

    asyncio.run(scenario())
    assert consumer.acked == []


def test_a_batch_a_revocation_overlapped_is_left_to_the_next_owner() -> None:
    consumer = Consumer()
    generation = {"n": 0}
    behind = WriteBehind(lambda: consumer, lambda: generation["n"])

    async def revoked_meanwhile() -> None:
        generation["n"] += 1

    async def scenario() -> None:
        batch = events(0, 1)
        batch[1].message.acked = True  # of a partition this worker no longer owned: left to its owner
        await behind.submit(batch, 0, lambda: asyncio.sleep(0))
        await behind.wait()
        assert consumer.acked == [0]
        await behind.submit(events(2, 3), 0, revoked_meanwhile)
        await behind.wait()

    asyncio.run(scenario())
    assert consumer.acked == [0]


def test_messages_of_a_partition_no_longer_owned_when_written_are_not_acknowledged() -> None:
    """The profile that marks a revoked partition's events may still run when the batch is queued: ownership is
    checked again when the write returned."""
    consumer = Consumer()
    owned = {0}
    behind = WriteBehind(lambda: consumer, lambda: 0, owned=lambda m: m.offset % 2 in owned)

    async def scenario() -> None:
        await behind.submit(events(0, 1, 2, 3), 0, lambda: asyncio.sleep(0))
        await behind.wait()

    asyncio.run(scenario())
    assert consumer.acked == [0, 2]


def test_the_batch_s_other_work_is_awaited_outside_the_gate_before_its_acknowledgement() -> None:
    """The profile of a batch (``after``) waits for a rebalance to end, and a rebalance waits for ``gate``: the
    profile is awaited outside it, and the batch is acknowledged only once both are done."""
    consumer = Consumer()
    behind = WriteBehind(lambda: consumer, lambda: 0)

    async def scenario() -> None:
        profiled = asyncio.get_running_loop().create_future()
        await behind.submit(events(0, 1), 0, lambda: asyncio.sleep(0), after=profiled)
        await asyncio.sleep(0.01)
        async with asyncio.timeout(1):
            async with behind.gate:  # what a rebalance's fence does: not held by the batch waiting for its profile
                pass
        assert consumer.acked == []
        profiled.set_result(None)
        await behind.wait()

    asyncio.run(scenario())
    assert consumer.acked == [0, 1]


def test_a_failed_profile_fails_the_batch_and_is_not_acknowledged() -> None:
    consumer = Consumer()
    behind = WriteBehind(lambda: consumer, lambda: 0)

    async def scenario() -> None:
        profiled = asyncio.get_running_loop().create_future()
        profiled.set_exception(RuntimeError("profile failed"))
        await behind.submit(events(0), 0, lambda: asyncio.sleep(0), after=profiled)
        with pytest.raises(RuntimeError, match="profile failed"):
            await behind.wait()

    asyncio.run(scenario())
    assert consumer.acked == []
