"""Faust's fetch loop starts a message's callback in place (streams/runtime/faust_drain.py): a callback that does not
wait costs no task; one that waits finishes as a task would, and gives way to a cancellation where it waits."""

from __future__ import annotations

import asyncio

import pytest
from faust.transport.consumer import Consumer

from esc.streams.runtime.faust_drain import DRAIN_PATCHED, _finish, patch_faust_drain_in_place, started


async def _no_wait(out: list[str]) -> str:
    out.append("ran")
    return "done"


def test_a_callback_that_does_not_wait_finishes_in_place() -> None:
    async def main() -> None:
        out: list[str] = []
        tasks_before = len(asyncio.all_tasks())
        assert started(_no_wait(out)) == (True, None)
        assert out == ["ran"]
        assert len(asyncio.all_tasks()) == tasks_before

    asyncio.run(main())


def test_a_callback_that_waits_is_finished_from_where_it_stopped() -> None:
    async def main() -> None:
        gate = asyncio.Event()
        steps: list[str] = []

        async def put(value: str) -> str:
            steps.append("before")
            await gate.wait()
            steps.append("between")
            await asyncio.sleep(0)  # a bare yield on the way
            steps.append("after")
            return value

        coro = put("x")
        done, waits_for = started(coro)
        assert not done and steps == ["before"]
        task = asyncio.ensure_future(_finish(coro, waits_for))
        await asyncio.sleep(0.01)
        assert not task.done()
        gate.set()
        assert await task == "x"
        assert steps == ["before", "between", "after"]

    asyncio.run(main())


def test_an_error_of_what_the_callback_waits_for_reaches_the_callback() -> None:
    async def main() -> None:
        fut: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        seen: list[str] = []

        async def cb() -> int:
            try:
                return await fut
            except ValueError as exc:
                seen.append(str(exc))
                return -1

        coro = cb()
        done, waits_for = started(coro)
        assert not done
        task = asyncio.ensure_future(_finish(coro, waits_for))
        fut.set_exception(ValueError("broker said no"))
        assert await task == -1
        assert seen == ["broker said no"]

    asyncio.run(main())


def test_a_cancelled_rest_cancels_the_callback_where_it_waits() -> None:
    """What ``wait_first`` does when a rebalance suspends the flow: the waiting callback sees the cancellation."""

    async def main() -> None:
        gate = asyncio.Event()
        seen: list[str] = []

        async def cb() -> None:
            try:
                await gate.wait()
            except asyncio.CancelledError:
                seen.append("cancelled")
                raise

        coro = cb()
        done, waits_for = started(coro)
        assert not done
        task = asyncio.ensure_future(_finish(coro, waits_for))
        await asyncio.sleep(0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert seen == ["cancelled"]

    asyncio.run(main())


def test_a_cancellation_after_what_it_waits_for_completed_still_reaches_the_callback() -> None:
    """As a task would: the lock it waited for was released to it, then the rest was cancelled before it ran
    again (a rebalance suspending the flow at that moment). The callback sees the cancellation where it waited,
    it does not go on as if nothing happened, and the lock stays usable by others."""

    async def main() -> None:
        lock = asyncio.Lock()
        seen: list[str] = []

        async def cb() -> None:
            try:
                async with lock:
                    seen.append("acquired")
                    await asyncio.sleep(3600)
            except asyncio.CancelledError:
                seen.append("cancelled")
                raise

        await lock.acquire()
        coro = cb()
        done, waits_for = started(coro)
        assert not done
        task = asyncio.ensure_future(_finish(coro, waits_for))
        await asyncio.sleep(0)  # the task waits on the lock's future
        lock.release()  # the future is done: the task is woken...
        task.cancel()  # ...and cancelled before it ran again
        with pytest.raises(asyncio.CancelledError):
            await task
        assert seen == ["cancelled"]
        assert not lock.locked()
        await asyncio.wait_for(lock.acquire(), 1)  # nobody is left holding it

    asyncio.run(main())


def test_an_error_raised_before_the_first_wait_propagates() -> None:
    async def bad() -> None:
        raise RuntimeError("decode failed")

    async def main() -> None:
        with pytest.raises(RuntimeError, match="decode failed"):
            started(bad())

    asyncio.run(main())


def test_the_patch_is_installed_once_and_keeps_faust_s_loop_reachable() -> None:
    patch_faust_drain_in_place()
    patched = Consumer._drain_messages
    patch_faust_drain_in_place()
    assert Consumer._drain_messages is patched
    assert getattr(patched, DRAIN_PATCHED)
    assert not getattr(patched.__wrapped__, DRAIN_PATCHED, False)  # type: ignore[attr-defined]
