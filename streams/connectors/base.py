"""Connector base: something that turns an outside source into envelopes on ``esc.records``.

A connector is runtime-agnostic: it gets two async callables, ``emit`` for records and ``dead_letter`` for
anything rejected, so the Faust runtime and the in-process runtime drive the same code.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from esc.streams.events import DeadLetter, RecordEnvelope


@dataclass(frozen=True, slots=True)
class Emission:
    """One record message, ready for ``esc.records``: built and serialized off the event loop (connectors do it
    in their reader thread), so a runtime only has to hand the bytes to its producer."""

    source: str
    key: bytes
    value: bytes
    profiled: bool = False  # its file was profiled whole (streams/connectors/file_profiles.py)

    @classmethod
    def of(cls, env: RecordEnvelope, profiled: bool = False) -> Emission:
        return cls(env.source, env.key().encode("utf-8"), env.model_dump_json().encode("utf-8"), profiled)


Emit = Callable[[Emission], Awaitable[None]]
EmitDead = Callable[[DeadLetter], Awaitable[None]]
Flush = Callable[[], Awaitable[None]]


class Connector(ABC):
    def __init__(self, emit: Emit, dead_letter: EmitDead, flush: Flush | None = None) -> None:
        self.emit = emit
        self.dead_letter = dead_letter
        self.flush = flush

    @abstractmethod
    async def run(self) -> None:
        """Run until cancelled."""

    async def _flush(self) -> None:
        if self.flush is not None:
            await self.flush()
