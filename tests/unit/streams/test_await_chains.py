"""``await_chains``: the worker's SIGUSR1 dump names where a coroutine waits inside an async generator."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import AsyncIterator

from esc.streams.runtime.await_chains import await_chains


async def _batches() -> AsyncIterator[int]:
    while True:
        await asyncio.sleep(3600)  # the wait point the dump must name
        yield 1


async def _consumer() -> None:
    async for _ in _batches():  # mode's task dump stops here (an async_generator_asend)
        pass


def test_the_chain_goes_into_the_async_generator_an_agent_iterates() -> None:
    async def main() -> str:
        task = asyncio.ensure_future(_consumer())
        task.set_name("agent")
        await asyncio.sleep(0.05)
        try:
            return await_chains()
        finally:
            task.cancel()

    dump = asyncio.run(main())
    agent = dump.split("Await chain of task agent:\n", 1)[1].split("Await chain of", 1)[0]
    assert ", in _consumer" in agent
    gen = dump.split("Await chain of async generator _batches (running):\n", 1)[1].split("Await chain of", 1)[0]
    lines, first = inspect.getsourcelines(_batches)
    wait_line = first + next(i for i, line in enumerate(lines) if "sleep(3600)" in line)
    assert f'File "{__file__}", line {wait_line}, in _batches' in gen and "in sleep" in gen


def test_the_consumer_state_names_each_partitions_offsets_and_pauses() -> None:
    from types import SimpleNamespace

    from faust.types import TP

    from esc.streams.runtime.await_chains import consumer_state

    p0, p1 = TP("t.profiles", 0), TP("t.records", 1)
    aio_state = {p0: SimpleNamespace(has_valid_position=True, position=124, paused=False),
                 p1: SimpleNamespace(has_valid_position=False, position=None, paused=True)}  # fmt: skip
    assignment = SimpleNamespace(state_value=aio_state.__getitem__)
    aio = SimpleNamespace(_subscription=SimpleNamespace(subscription=SimpleNamespace(assignment=assignment)))
    consumer = SimpleNamespace(
        assignment=lambda: {p0, p1}, _thread=SimpleNamespace(_consumer=aio), _active_partitions={p0},
        flow_active=True, _paused_partitions=set(), _buffered_partitions=set(),
        _read_offset={p0: 123}, _committed_offset={p0: 40},
    )  # fmt: skip
    lines = consumer_state(consumer).splitlines()
    assert lines == [
        "Consumer: 2 partitions, flow active True",
        "Consumer partition t.profiles/0: position 124, read 123, committed 40",
        "Consumer partition t.records/1: position None, read None, committed None aiokafka-paused inactive",
    ]
    broken = SimpleNamespace(assignment=lambda: (_ for _ in ()).throw(RuntimeError("not started")))
    assert consumer_state(broken).startswith("Consumer: no assignment")
