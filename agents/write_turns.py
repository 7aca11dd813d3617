"""Whose turn it is to write the graph: new records before a backfill's next part (issue 15: new records stay fresh
while a backfill runs).

Live batches and a backfill share one store writer (one write at a time). With a plain FIFO lock the two took
turns: every new batch waited for one replayed part, and a new batch also waits for the new batch before it
(written in order), so under a steady push each new batch cost a part's write plus its own and the new records
queued up for seconds behind the replay (TPC-H SF 0.05, 500 records/s during a lineitem replay: a record's age when
written rose to 3 s, a replayed part's write taking up to 1.1 s beside them). Here a new batch holds its claim from
the moment it is planned until it is written, and a backfill's part waits while any claim is held, so new batches
are written back to back and a part goes in between them, never in front of one waiting. ``patience`` bounds that
wait: a steady stream of new records slows a backfill down but cannot stop it.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable

PATIENCE_SECONDS = 1.0


class WriteTurns:
    """One writer at a time (``lock``); new batches claim their turn ahead of a backfill's parts."""

    def __init__(self, patience: float = PATIENCE_SECONDS) -> None:
        self.lock = asyncio.Lock()
        self.patience = patience
        self._claims = 0
        self._clear = asyncio.Event()
        self._clear.set()

    def claim(self) -> Callable[[], None]:
        """A new batch is on its way to the writer (planned or about to be); the returned function ends the claim
        (idempotent: call it when the batch was written, or dropped)."""
        self._claims += 1
        self._clear.clear()
        done = False

        def release() -> None:
            nonlocal done
            if done:
                return
            done = True
            self._claims -= 1
            if self._claims == 0:
                self._clear.set()

        return release

    @property
    def claims(self) -> int:
        return self._claims

    async def after_new(self) -> None:
        """Wait until no new batch holds a claim, ``patience`` seconds at most (a backfill's part, before it
        plans or takes the lock)."""
        if self._claims:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._clear.wait(), self.patience)
