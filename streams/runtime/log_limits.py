"""Bounded logs during an outage: the Kafka clients log every failed connection attempt (thousands of
lines in a minute while a broker is down). ``RepeatFilter`` lets each message template through once per
``window`` seconds per logger and says how many it held back; ESC's own dependency lines
(``agents.stores.resilient``) already come one per state change plus a periodic summary.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable

WINDOW_SECONDS = 60.0
_DIGITS = re.compile(r"\d+")
NOISY = ("aiokafka", "kafka", "neo4j", "weaviate", "grpc", "httpx", "faust.transport.producer")
"""Loggers of clients that log per attempt (faust's producer buffer logs a line per flush while it drains a
backlog, e.g. the changelogs of the shared tables after Kafka returns)."""


SERVES = {"aiokafka": "kafka", "kafka": "kafka", "neo4j": "neo4j", "weaviate": "weaviate", "grpc": "weaviate",
          "httpx": "weaviate", "faust.transport.producer": "kafka"}  # fmt: skip
"""Which dependency a client logger talks to: while ESC has reported that dependency down (one line, then a
summary every 30 s), the client's own per-attempt lines say nothing new and are held back."""


CLIENT_BURST = 3
"""Lines a dependency's clients may log per window, all messages together: when a server goes away each of its
clients (fetcher, coordinator, producer, connection, metadata) says so in its own words within the same second,
before ESC's probe has reported the outage; the rest of the window's lines are counted, not shown."""


class RepeatFilter(logging.Filter):
    def __init__(self, window: float = WINDOW_SECONDS, clock: Callable[[], float] = time.monotonic,
                 prefixes: tuple[str, ...] = NOISY, down: Callable[[str], bool] = lambda _: False,
                 burst: int = CLIENT_BURST) -> None:  # fmt: skip
        super().__init__()
        self.window, self._clock, self.prefixes, self._down, self.burst = window, clock, prefixes, down, burst
        self._opened: dict[tuple[str, str], float] = {}  # key -> start of its current window
        self._shown: dict[tuple[str, str], int] = {}
        self._held: dict[tuple[str, str], int] = {}
        self.held_while_down = 0

    def filter(self, record: logging.LogRecord) -> bool:
        if not record.name.startswith(self.prefixes):
            return True
        verdict = getattr(record, "_esc_shown", None)  # the filter sits on every handler: decide once per record
        if verdict is None:
            verdict = self._decide(record)
            record._esc_shown = verdict
        return bool(verdict)

    def _decide(self, record: logging.LogRecord) -> bool:
        dep = SERVES.get(record.name.split(".", 1)[0]) or next(
            (d for p, d in SERVES.items() if "." in p and record.name.startswith(p)), None)
        if dep is not None and self._down(dep):
            self.held_while_down += 1
            return False
        if dep is not None and record.levelno >= logging.WARNING:  # one budget for all of a server's clients
            key, budget = ("client", dep), self.burst
        else:  # the same message template, once per window
            key, budget = (record.name, _DIGITS.sub("#", record.getMessage())[:200]), 1
        now = self._clock()
        opened = self._opened.get(key)
        if opened is None or now - opened >= self.window:
            self._opened[key], self._shown[key] = now, 0
        if self._shown[key] >= budget:
            self._held[key] = self._held.get(key, 0) + 1
            return False
        self._shown[key] += 1
        if record.exc_info and record.exc_info[1] is not None:  # a client's traceback: one line is enough
            record.msg = f"{record.getMessage()} [{type(record.exc_info[1]).__name__}: {record.exc_info[1]}]"
            record.args, record.exc_info, record.exc_text = (), None, None
        held = self._held.pop(key, 0)
        if held:
            record.msg = f"{record.getMessage()} ({held} similar lines in the last {self.window:.0f} s not shown)"
            record.args = ()
        if len(self._opened) > 10_000:  # bounded: forget the oldest templates
            for k in sorted(self._opened, key=self._opened.__getitem__)[:5_000]:
                self._opened.pop(k, None)
                self._shown.pop(k, None)
        return True


def install(root: logging.Logger | None = None, window: float = WINDOW_SECONDS,
            down: Callable[[str], bool] = lambda _: False) -> RepeatFilter:  # fmt: skip
    """Put one shared filter on every handler of the root logger (call after the runtime configured logging);
    ``down(name)`` tells whether a dependency is in a reported outage."""
    logging.getLogger("httpx").setLevel(logging.WARNING)  # a line per request to Weaviate's REST API otherwise
    flt = RepeatFilter(window, down=down)
    for handler in (root or logging.getLogger()).handlers:
        if not any(isinstance(f, RepeatFilter) for f in handler.filters):
            handler.addFilter(flt)
    return flt
