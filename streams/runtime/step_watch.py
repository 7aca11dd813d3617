"""What a long-running agent is doing and since when, so a stall shows on /healthz and in the log.

The contract agent receives a tick every couple of seconds, so "waiting for a batch" for a minute means its stream
stopped delivering (or one of its steps never returned): one warning per stall names the step and how long.
"""

from __future__ import annotations

import logging
import time
from typing import Any

log = logging.getLogger(__name__)

WAITING_FOR_BATCH = "waiting for a batch"
STUCK_SECONDS = 60.0


class StepWatch:
    def __init__(self, name: str, clock: Any = time.monotonic) -> None:
        self.name = name
        self._clock = clock
        self.step = WAITING_FOR_BATCH
        self.since = clock()
        self._warned = False

    def enter(self, step: str) -> None:
        if self._warned:
            log.warning("%s: moving again (%s) after %.0f s at '%s'", self.name, step, self.seconds(), self.step)
        self.step, self.since, self._warned = step, self._clock(), False

    def seconds(self) -> float:
        return float(self._clock() - self.since)

    def check(self, stuck_after: float) -> bool:
        """True (and one warning per stall) when the current step has lasted longer than ``stuck_after``."""
        stuck = self.seconds() > stuck_after
        if stuck and not self._warned:
            self._warned = True
            log.warning("%s: still '%s' after %.0f s", self.name, self.step, self.seconds())
        return stuck

    def snapshot(self) -> dict[str, Any]:
        return {"step": self.step, "seconds": round(self.seconds(), 1)}
