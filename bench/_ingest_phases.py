"""``bench/ingest.py``: the measured phases (the initial load, vectors catching up, the steady push, the
schema-diff trials)."""

from __future__ import annotations

import asyncio
import csv
import json
import shutil
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench._baselines import q
from bench._ingest_metrics import _r, pct, total
from bench._ingest_names import PREFIX, SUBDIR
from bench._ingest_neo4j import count
from bench._ingest_proc import Worker
from bench._tpch import TABLES
from esc.settings import Settings

# ------------------------------------------------------------------------------------------------ phases


def load_phase(worker: Worker, drv: Any, tpch: Path, labels: dict[str, str], rows: dict[str, int],
               timeout: float, say: Callable[[str], None],
               cpu: Callable[[], dict[str, float]] = dict) -> dict[str, Any]:
    staging = worker.data / SUBDIR
    staging.mkdir(parents=True, exist_ok=True)
    for t in TABLES:  # hidden names are ignored by the watcher; a rename makes each file appear whole
        shutil.copyfile(tpch / f"{t}.csv", staging / f".{PREFIX}{t}.csv.part")
    cpu0 = cpu()
    t0 = time.perf_counter()
    for t in TABLES:
        (staging / f".{PREFIX}{t}.csv.part").rename(staging / f"{PREFIX}{t}.csv")
    done: dict[str, float] = {}
    counts: dict[str, int] = {}
    last_say = 0.0
    while len(done) < len(TABLES):
        elapsed = time.perf_counter() - t0
        if elapsed > timeout or not worker.alive():
            raise TimeoutError(
                f"load not complete after {elapsed:.0f}s (worker alive: {worker.alive()}); Neo4j counts "
                f"{counts} of {rows}; /healthz {_safe(lambda: worker.get('/healthz').decode())}\n"
                f"--- worker log tail ---\n{worker.tail()}"
            )
        for t in TABLES:
            if t in done:
                continue
            n = count(drv, labels[t], real_only=False)  # count store: cheap; stubs excluded only when it matters
            if n >= rows[t]:
                n = count(drv, labels[t])
            counts[t] = n
            if n >= rows[t]:
                done[t] = round(time.perf_counter() - t0, 2)
        if elapsed - last_say >= 30:
            last_say = elapsed
            health = _safe(lambda: worker.get("/healthz").decode())
            say(f"  {elapsed:6.0f}s  " + " ".join(f"{t}={counts.get(t, 0)}/{rows[t]}" for t in TABLES)
                + f"  healthz {health[:300]}")
        time.sleep(1.0)
    secs = time.perf_counter() - t0
    cpu1 = cpu()
    total = sum(rows.values())
    return {"records": total, "seconds": round(secs, 2), "records_per_s": round(total / secs, 1),
            "table_done_at_s": done,
            "cpu_seconds": {k: round(cpu1[k] - cpu0.get(k, 0.0), 1) for k in cpu1},
            "vectors": vectors_catch_up(worker, t0, timeout)}


def vectors_catch_up(worker: Worker, t0: float, timeout: float) -> dict[str, Any]:
    """Text chunks are embedded behind the graph (the worker's vector outbox): wait until the outbox is empty
    and report when that was, from the same start as the graph load, with what was embedded after the load (the
    tail, when the vector lane runs alone)."""
    tail0 = time.perf_counter()
    texts0 = total(worker.metrics(), "esc_records_out", "esc_records_out_total", store="weaviate")
    while True:
        health = json.loads(worker.get("/healthz"))
        pending = int(health.get("vectors_pending") or 0)
        if pending == 0:
            break
        if time.perf_counter() - t0 > timeout or not worker.alive():
            raise TimeoutError(f"vectors not caught up: {pending} text chunks still pending")
        time.sleep(0.5)
    m = worker.metrics()
    texts = total(m, "esc_records_out", "esc_records_out_total", store="weaviate")
    return {"caught_up_at_s": round(time.perf_counter() - t0, 2), "records_with_text": int(texts),
            "chunks": int(texts), "tail_chunks": int(texts - texts0), "tail_seconds": round(time.perf_counter() - tail0, 2)}


def _safe(fn: Callable[[], str]) -> str:
    try:
        return fn()
    except Exception as exc:  # diagnostics only
        return f"({type(exc).__name__}: {exc})"


STEADY_KEY = 10_000_000
SAMPLE_EVERY = 25


async def _steady_push(
    settings: Settings, template: list[dict[str, str]], n: int, rate: float, sent: dict[int, float],
    key_base: int = STEADY_KEY,
) -> float:
    from esc.streams.events import RecordEnvelope
    from esc.streams.runtime.kafka_io import producer

    prod = producer(settings)
    await prod.start()
    t0 = time.perf_counter()
    try:
        step = max(1, int(rate / 10))
        for i in range(0, n, step):
            for j in range(i, min(n, i + step)):
                payload = dict(template[j % len(template)])
                payload["o_orderkey"] = str(key_base + j)
                env = RecordEnvelope(source=PREFIX + "orders", record_id=f"esc_bench_push_{key_base + j}",
                                     payload=payload, event_time=datetime.now(UTC))
                if j % SAMPLE_EVERY == 0:
                    sent[key_base + j] = time.perf_counter()
                await prod.send(settings.topic("records"), env.model_dump_json().encode(), key=env.key().encode())
            await asyncio.sleep(max(0.0, t0 + (i + step) / rate - time.perf_counter()))
        await prod.flush()
    finally:
        await prod.stop()
    return time.perf_counter() - t0


def push_orders(worker: Worker, drv: Any, tpch: Path, label: str, n: int, rate: float, timeout: float,
                key_base: int = STEADY_KEY) -> dict[str, Any]:
    """Push ``n`` new orders rows at ``rate``/s and wait until every one is a node in Neo4j; every
    ``SAMPLE_EVERY``th is timed directly: send -> its node readable (polled every 0.1 s)."""
    with (tpch / "orders.csv").open(newline="") as fh:
        template = [row for _, row in zip(range(1000), csv.DictReader(fh), strict=False)]
    sent: dict[int, float] = {}
    seen: dict[int, float] = {}
    stop = threading.Event()

    def poll() -> None:
        while not stop.is_set():
            keys = [k for k in list(sent) if k not in seen]
            if keys:
                recs, _, _ = drv.execute_query(
                    f"MATCH (n:{q(label)}) WHERE n.o_orderkey IN $keys AND n._stub IS NULL RETURN n.o_orderkey AS k",
                    keys=keys)
                now = time.perf_counter()
                for r in recs:
                    seen.setdefault(int(r["k"]), now)
            time.sleep(0.1)

    def arrived() -> int:
        recs, _, _ = drv.execute_query(
            f"MATCH (n:{q(label)}) WHERE n.o_orderkey >= $lo AND n.o_orderkey < $hi AND n._stub IS NULL "
            "RETURN count(n) AS c", lo=key_base, hi=key_base + n)
        return int(recs[0]["c"])

    poller = threading.Thread(target=poll, daemon=True)
    poller.start()
    t0 = time.perf_counter()
    try:
        sent_s = asyncio.run(_steady_push(worker.settings, template, n, rate, sent, key_base))
        while arrived() < n or len(seen) < len(sent):
            if time.perf_counter() - t0 > timeout or not worker.alive():
                raise TimeoutError(f"{arrived()} of {n} pushed {label} nodes after {time.perf_counter() - t0:.0f}s"
                                   f"\n--- worker log tail ---\n{worker.tail()}")
            time.sleep(0.5)
    finally:
        stop.set()
        poller.join(timeout=5)
    lat = [seen[k] - sent[k] for k in sent if k in seen]
    return {"records": n, "rate_per_s": rate, "send_seconds": round(sent_s, 2),
            "seconds_to_last_upsert": round(time.perf_counter() - t0, 2),
            "sampled": {"n": len(lat), "p50_s": _r(pct(lat, 0.5)), "p95_s": _r(pct(lat, 0.95)),
                        "max_s": _r(max(lat, default=None))},
            "sampled_by_send_time": by_send_time({k: sent[k] - t0 for k in sent if k in seen},
                                                 {k: seen[k] - sent[k] for k in sent if k in seen})}


def by_send_time(offsets: dict[int, float], latencies: dict[int, float], window: float = 2.0) -> list[dict[str, Any]]:
    """The sampled latencies in windows of their send time (seconds into the push): where in the push a tail is."""
    out: dict[int, list[float]] = {}
    for k, at in offsets.items():
        out.setdefault(int(at // window), []).append(latencies[k])
    return [{"from_s": w * window, "n": len(v), "p95_s": _r(pct(v, 0.95)), "max_s": _r(max(v))}
            for w, v in sorted(out.items())]


async def _diff_trials(settings: Settings, run_id: str, trials: int, timeout: float) -> list[float | None]:
    from aiokafka import AIOKafkaConsumer, TopicPartition

    from esc.streams.events import RecordEnvelope
    from esc.streams.runtime.kafka_io import producer

    topic = settings.topic("schema.diffs")
    cons = AIOKafkaConsumer(bootstrap_servers=settings.kafka_bootstrap, enable_auto_commit=False, group_id=None,
                            fetch_max_wait_ms=20)
    prod = producer(settings)
    await cons.start()
    await prod.start()
    out: list[float | None] = []
    try:
        tp = TopicPartition(topic, 0)
        cons.assign([tp])
        await cons.seek_to_end(tp)
        await cons.position(tp)
        for i in range(trials):
            name = f"bench_{run_id[-6:]}_f{i}"
            payload = {"n_nationkey": str(1000 + i), "n_name": f"BENCH {i}", "n_regionkey": "0",
                       "n_comment": "bench probe", name: str(i)}
            env = RecordEnvelope(source=PREFIX + "nation", record_id=f"esc_bench_probe_{i}", payload=payload,
                                 event_time=datetime.now(UTC))
            t0 = time.perf_counter()
            await prod.send_and_wait(settings.topic("records"), env.model_dump_json().encode(), key=env.key().encode())
            got: float | None = None
            while got is None and time.perf_counter() - t0 < timeout:
                batch = await cons.getmany(timeout_ms=100)
                for msgs in batch.values():
                    for m in msgs:
                        if got is None and name in json.dumps(json.loads(m.value).get("data", {}).get("added", {})):
                            got = time.perf_counter() - t0
            out.append(got)
            await asyncio.sleep(0.5)
    finally:
        await prod.stop()
        await cons.stop()
    return out
