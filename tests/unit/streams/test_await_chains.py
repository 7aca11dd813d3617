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
