"""A drop-folder delivery that fails is tried again, with backoff, instead of ending the folder task.

A file's delivery sends its records, flushes them and sends its completion; while Kafka is away any of these can
raise (a flush that gave up, a send that timed out). The folder task used to end there: in CI a Kafka outage in
the middle of a file left 30,396 of its 40,000 records unsent for good, the worker otherwise healthy. Now the
same delivery runs again after a pause (1 s, doubling up to 30 s) until it goes through. What a failed attempt
left undone is redone: its batch's files are still undelivered in the manifest (``file_batch.py``), an
interrupted scan resumes under its id, and records sent twice are written idempotently (deterministic ids).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

log = logging.getLogger(__name__)

FIRST_WAIT_SECONDS = 1.0
MOST_WAIT_SECONDS = 30.0


async def until_done(step: Callable[[], Awaitable[object]], what: str) -> int:
    """Run ``step`` until it returns; returns the failed attempts. Logged: the first failure, each one once the
    pause is at its longest, and the success after failures (a few lines per outage, no traceback: an outage's
    lines are bounded, ``tests/integration/test_outages.py``)."""
    wait, most, failures = FIRST_WAIT_SECONDS, MOST_WAIT_SECONDS, 0
    while True:
        try:
            await step()
        except Exception as exc:  # the clients raise their own kinds in an outage (librdkafka, aiokafka, stores)
            failures += 1
            if failures == 1:
                log.warning("%s failed (%s: %s); trying again in %.0f s", what, type(exc).__name__, exc, wait)
            elif wait >= most:
                log.warning("%s still failing after %d attempts (%s: %s); trying again in %.0f s", what, failures,
                            type(exc).__name__, exc, wait)  # fmt: skip
            await asyncio.sleep(wait)
            wait = min(wait * 2, most)
            continue
        if failures:
            log.warning("%s went through after %d failed attempts", what, failures)
        return failures
