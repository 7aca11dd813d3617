"""Faust's fetch loop without four tasks per message (faust-streaming 0.15, ``Consumer._drain_messages``).

Faust hands every fetched message to the topic's callback through ``Service.wait_first(callback(message),
suspend_flow.wait())``: four tasks (the callback, the flow, the service's stopped and crashed events) and an
``asyncio.wait`` per message, so that a callback blocked on a full stream buffer gives way when a rebalance suspends
the flow. Almost every callback finishes without waiting (the buffer has room), yet the machinery was ~9 % of the
worker's CPU in a TPC-H load (py-spy, ``Service.wait_first`` under ``Consumer._drain_messages``), with the event loop
scheduling around it on top.

Here the callback's coroutine is started in place: when it finishes without waiting, that is all; when it waits
(a full buffer, flow control, the producer's buffer), the rest of it runs as before, raced against the flow's
suspension by ``wait_first`` (``_finish`` drives it from where it stopped, as a task would). Everything else is
Faust's loop line for line: gaps, commits every ``commit_every`` acks, read offsets, errors.
"""

from __future__ import annotations

import asyncio
import functools
import types
from collections.abc import Coroutine, Generator
from typing import Any, cast

from mode import Service

DRAIN_PATCHED = "_esc_drain_in_place"


def started(coro: Coroutine[Any, Any, Any]) -> tuple[bool, Any]:
    """Run ``coro`` to its first wait: (True, None) when it finished, (False, what it waits for) otherwise.
    An error it raised propagates."""
    try:
        waits_for = coro.send(None)
    except StopIteration:
        return True, None
    return False, waits_for


@types.coroutine
def _resume(coro: Coroutine[Any, Any, Any], waits_for: Any) -> Generator[Any, Any, Any]:
    """The rest of a coroutine that ``started`` left waiting on ``waits_for``, for a task to drive: what the
    coroutine yields goes to the task, what the task throws in (a cancellation) goes to the coroutine where it
    waits, exactly as when the task had run it from its start (``yield from``, spelled out: the coroutine was
    started outside it)."""
    while True:
        try:
            yield waits_for
        except BaseException as exc:  # the task threw it in: a cancellation it could not pass to the future
            step = functools.partial(coro.throw, exc)
        else:
            step = functools.partial(coro.send, None)
        try:
            waits_for = step()
        except StopIteration as stop:
            return stop.value


async def _finish(coro: Coroutine[Any, Any, Any], waits_for: Any) -> Any:
    """Drive a coroutine that ``started`` left waiting on ``waits_for`` to its end (in a task): its waits, results,
    errors and cancellations are the task's, as for a coroutine the task had started itself."""
    return await _resume(coro, waits_for)


def patch_faust_drain_in_place() -> None:
    from faust.transport.consumer import CONSUMER_FETCHING, Consumer

    if getattr(Consumer._drain_messages, DRAIN_PATCHED, False):
        return

    async def _drain_messages(self: Any, fetcher: Any) -> None:  # pragma: no cover - the worker's fetch loop
        callback = self.callback
        getmany = self.getmany
        consumer_should_stop = cast(Service, self)._stopped.is_set
        fetcher_should_stop = cast(Service, fetcher)._stopped.is_set

        get_read_offset = self._read_offset.__getitem__
        set_read_offset = self._read_offset.__setitem__
        flag_consumer_fetching = CONSUMER_FETCHING
        set_flag = self.diag.set_flag
        unset_flag = self.diag.unset_flag
        commit_every = self._commit_every
        acks_enabled_for = self.app.topics.acks_enabled_for

        yield_every = 100
        num_since_yield = 0
        sleep = asyncio.sleep

        try:
            while not (consumer_should_stop() or fetcher_should_stop()):
                set_flag(flag_consumer_fetching)
                ait = getmany(timeout=1.0)
                await self.sleep(0)
                if not self.should_stop:
                    async for tp, message in ait:
                        num_since_yield += 1
                        if num_since_yield > yield_every:
                            await sleep(0)
                            num_since_yield = 0
                        offset = message.offset
                        r_offset = get_read_offset(tp)
                        if r_offset is None or offset >= r_offset:
                            gap = offset - (r_offset or 0)
                            if gap > 1 and r_offset and acks_enabled_for(message.topic):
                                await self._add_gap(tp, r_offset + 1, offset)
                            if commit_every is not None and self._n_acked >= commit_every:
                                self._n_acked = 0
                                await self.commit()
                            coro = callback(message)
                            done, waits_for = started(coro)
                            if not done:  # it waits: the rest gives way to a suspended flow, as in Faust
                                await self.wait_first(_finish(coro, waits_for), self.suspend_flow.wait())
                            set_read_offset(tp, offset)
                    unset_flag(flag_consumer_fetching)
        except self.consumer_stopped_errors:
            if self.transport.app.should_stop:
                self.log.info("Broker stopped consumer, shutting down...")
                return
            raise
        except asyncio.CancelledError:
            if self.transport.app.should_stop:
                self.log.info("Consumer shutting down for user cancel.")
                return
            raise
        except Exception as exc:
            self.log.exception("Drain messages raised: %r", exc)
            raise
        finally:
            unset_flag(flag_consumer_fetching)

    setattr(_drain_messages, DRAIN_PATCHED, True)
    _drain_messages.__wrapped__ = Consumer._drain_messages  # type: ignore[attr-defined]
    Consumer._drain_messages = _drain_messages  # type: ignore[method-assign]
