"""``/readyz``: is the worker doing its job? ``/healthz`` only says the process is alive.

Ready means the worker has started (its Kafka consumer joined the group and its tables are recovered: records
are being read), every dependency answers (Kafka by a TCP probe every ``PROBE_SECONDS``; Neo4j and Weaviate as their
calls see them, ``agents.stores.resilient``), the contract agent is not stuck in one step, and a pending backfill
moved within ``STUCK_SECONDS``. Not ready answers 503 with the reasons.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from esc import probe
from esc.agents.backfill import BackfillTracker
from esc.agents.stores.resilient import Dependency
from esc.streams.runtime.step_watch import STUCK_SECONDS, StepWatch

PROBE_SECONDS = 1.0


def readiness(
    deps: Mapping[str, Dependency], agent: StepWatch | None = None, backfill: BackfillTracker | None = None,
    started: bool = True,
) -> dict[str, Any]:
    reasons = [] if started else ["starting: the Kafka consumer has not joined its group and recovered its tables yet"]
    reasons += [f"{name} unreachable for {d.snapshot()['for_seconds']} s" for name, d in sorted(deps.items()) if not d.up]
    if agent is not None and agent.check(STUCK_SECONDS):
        reasons.append(f"contract agent stuck at '{agent.step}' for {agent.seconds():.0f} s")
    stalled = backfill.stalled_for() if backfill is not None else 0.0
    if stalled > STUCK_SECONDS and all(d.up for d in deps.values()):  # an outage explains a pause
        reasons.append(f"backfill made no progress for {stalled:.0f} s")
    return {
        "ready": not reasons,
        "reasons": reasons,
        "dependencies": {name: d.snapshot() for name, d in sorted(deps.items())},
    }


async def watch_tcp(dep: Dependency, hostports: str, every: float = PROBE_SECONDS) -> None:
    """Mark ``dep`` down while none of ``hostports`` (comma-separated ``host:port``) accepts a TCP connection, so
    ``/readyz`` tells the truth even when no call is being made (an outage during a backfill that writes no
    vectors). The probe clears only an outage it found itself: a failure the store's own calls see is cleared by
    their next success, so the two never fight (one log line per change, not one per probe)."""
    found_down = False
    while True:
        if await asyncio.to_thread(probe.kafka_reachable, hostports):
            if found_down:
                dep.ok()
                found_down = False
        elif dep.up or found_down:
            dep.failed(ConnectionError(f"nothing accepts connections at {hostports}"))
            found_down = True
        await asyncio.sleep(every)


async def watch_kafka(dep: Dependency, bootstrap: str, every: float = PROBE_SECONDS) -> None:
    """Keep ``dep`` current from a TCP probe of the brokers (the Kafka clients retry on their own)."""
    while True:
        if await asyncio.to_thread(probe.kafka_reachable, bootstrap):
            dep.ok()
        else:
            dep.failed(ConnectionError(f"no broker accepts connections at {bootstrap}"))
        await asyncio.sleep(every)


def hostport(url: str) -> str:
    """``host:port`` of a service URL (``bolt://127.0.0.1:7687``, ``http://127.0.0.1:8080``)."""
    from urllib.parse import urlparse

    u = urlparse(url)
    default = {"bolt": 7687, "neo4j": 7687, "http": 80, "https": 443}.get(u.scheme, 0)
    return f"{u.hostname or '127.0.0.1'}:{u.port or default}"
