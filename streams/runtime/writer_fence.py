"""The contract agent under a rebalance and a stop (the Faust runtime).

The agent's state is a changelog-backed table of one partition that moves with the profiles topic's partition.
A batch being applied finishes (its state saved) before the worker gives the partition up or stops; the next
batch on this worker starts from the table as recovered, never from a writer left in memory from before the
partition moved away and back; a batch fetched before its partition moved is left to the new owner.
"""

from __future__ import annotations

import asyncio
from typing import Any, cast

import faust

from esc.agents.pipeline import ContractWriter
from esc.streams.runtime.seen_table import SharedSeen


class WriterFence:
    def __init__(self, app: faust.App, table: Any, topic_name: str, seen: SharedSeen, *gates: asyncio.Lock) -> None:
        self.app = app
        self.topic_name = topic_name
        self.seen = seen
        self.ready = asyncio.Event()  # the table is recovered for the current assignment
        self.gate = asyncio.Lock()  # held while a batch is applied
        self.writer: ContractWriter | None = None
        table.on_recover(self._recovered)
        app.on_partitions_revoked.connect(cast(Any, self._revoked))
        stop_app = app.on_stop

        async def on_stop() -> None:
            """Before the consumer stops (and commits): finish the batches being profiled and applied."""
            self.ready.clear()
            await seen.drain(self.gate, *gates)  # (gates: the records batch being written)
            await stop_app()

        app.on_stop = on_stop  # type: ignore[method-assign]

    async def _recovered(self) -> None:
        self.ready.set()

    async def _revoked(self, sender: Any, *args: Any, signal: Any, **kwargs: Any) -> None:
        self.ready.clear()
        async with self.gate:
            self.writer = None

    def owned(self) -> bool:
        return any(tp.topic == self.topic_name for tp in self.app.consumer.assignment())
