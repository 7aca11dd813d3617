"""``bench/ingest.py --backfill-records N``: the freshness of new records while a backfill runs (issue 15: p95 <= 5 s).

A backfill is set off the way users set one off: one ``escbench_lineitem`` record arrives with a field no lineitem
record had, the contract adds the field, and the worker replays the whole source under the new version (600,572
records at SF 0.1). While it runs, N new ``escbench_orders`` rows are pushed at ``--steady-rate``/s and timed as in
the steady phase (every 25th: send -> its node readable in Neo4j). The report says whether the replay was still
running when the last of them had been sent, so that the figure is one *during* a backfill.
"""

from __future__ import annotations

import asyncio
import csv
import json
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench._ingest_names import PREFIX
from bench._ingest_phases import push_orders
from bench._ingest_proc import Worker

BACKFILL_KEY = 20_000_000
SOURCE = PREFIX + "lineitem"


async def _send_probe(worker: Worker, tpch: Path, field: str) -> None:
    from esc.streams.events import RecordEnvelope
    from esc.streams.runtime.kafka_io import producer

    with (tpch / "lineitem.csv").open(newline="") as fh:
        payload = dict(next(csv.DictReader(fh)))
    payload.update({"l_orderkey": str(BACKFILL_KEY), "l_linenumber": "1", field: "1"})
    env = RecordEnvelope(source=SOURCE, record_id="esc_bench_backfill_probe", payload=payload,
                         event_time=datetime.now(UTC))
    prod = producer(worker.settings)
    await prod.start()
    try:
        await prod.send_and_wait(worker.settings.topic("records"), env.model_dump_json().encode(), key=env.key().encode())
    finally:
        await prod.stop()


def _replaying(worker: Worker) -> dict[str, Any] | None:
    return (json.loads(worker.get("/healthz")).get("backfill") or {}).get(SOURCE)


def backfill_phase(worker: Worker, drv: Any, tpch: Path, label: str, n: int, rate: float,
                   timeout: float) -> dict[str, Any]:
    field = f"bench_backfill_{uuid.uuid4().hex[:6]}"
    t0 = time.perf_counter()
    asyncio.run(_send_probe(worker, tpch, field))
    started: float | None = None
    while time.perf_counter() - t0 < 120:
        if _replaying(worker):
            started = time.perf_counter() - t0
            break
        time.sleep(0.2)
    if started is None:
        return {"error": f"no backfill of {SOURCE} within 120 s of the probe (field {field})"}
    pushed = push_orders(worker, drv, tpch, label, n, rate, timeout, key_base=BACKFILL_KEY)
    during = _replaying(worker)
    while _replaying(worker) and time.perf_counter() - t0 < timeout:
        time.sleep(0.5)
    return {**pushed, "source": SOURCE, "field": field, "backfill_started_after_s": round(started, 2),
            "backfill_running_after_push": during is not None, "backfill_progress_after_push": during,
            "backfill_seconds": round(time.perf_counter() - t0 - started, 1)}
