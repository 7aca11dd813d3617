"""Streaming ingest benchmark: TPC-H through the real stack (Kafka -> Faust worker -> Neo4j), against a baseline.

    .venv/bin/python bench/ingest.py                       # SF 0.1, with the baseline
    .venv/bin/python bench/ingest.py --sf 0.01 --skip-baseline --json

What it does (the stack must be up: ``esc stack up``; it is shared, so everything here is isolated and cleaned up):

1. Generates TPC-H (``tpchgen-cli``, cached under ~/.cache/esc/tpch/sf<N>) and wipes the bench's labels (ours and
   ``<Label>_baseline``) and their source records left by an earlier run. The files are dropped as
   ``escbench_<table>.csv``, so sources are ``escbench_orders`` ... and labels ``EscbenchOrder`` ...: the graph is
   shared, and plain ``Customer`` / ``Order`` / ``Part`` are labels of other data sets too.
2. Starts ``esc up --data DIR`` as a subprocess with its own ``ESC_APP_ID`` / ``ESC_TOPIC_PREFIX`` /
   ``ESC_STATE_DIR`` / ``ESC_WEB_PORT`` (isolated on Kafka), moves the CSV files into ``DIR/esc_bench_tpch/`` and
   polls Neo4j until every table's label holds its row count (stub nodes excluded): **end-to-end records/s** =
   rows / (files dropped -> last row in Neo4j). A file-fed source is deferred until its file is completely read
   and the contract settles, then backfilled, so the initial-load freshness includes that wait.
3. Steady state: pushes ``--steady-records`` new ``escbench_orders`` rows on ``<prefix>.records`` at ``--steady-rate``/s
   (event time = send time) and waits for them in Neo4j. **Freshness** (event time -> upsert) p50/p95 for the
   initial load and for this phase come from the worker's ``esc_freshness_seconds`` histogram (the difference of
   snapshots taken before and after each phase), as quantiles interpolated linearly inside buckets, the way
   Prometheus' ``histogram_quantile`` does: they are only as fine as the buckets (0.05 .. 300 s), and the steady
   one includes any replay the worker runs meanwhile. So the steady phase is also measured directly: every 25th
   pushed record, send -> its node readable in Neo4j (polled every 0.1 s).
4. **Schema-diff latency**: ``--diff-trials`` times, pushes one ``escbench_nation`` record carrying a brand-new field while
   a consumer tails ``<prefix>.schema.diffs``; latency = send -> the diff event naming that field is received.
5. **Peak RSS** (``VmHWM``) of the worker (and its children), of this process, of the baseline process, and of the
   stack's servers (their peak since they started, read from ``<state>/stack/<svc>/<svc>.pid``).
6. **Baseline**, in the same run: one Python process reads the same CSVs (columns typed int/float/str from the
   first rows) and writes them straight into Neo4j with ``UNWIND $rows AS row MERGE (n:<Label>_baseline {key})
   SET n += row`` in batches of 5,000, under a uniqueness constraint on the same identity keys. It writes nodes
   only: no source-record provenance, no foreign-key edges, no profiling, no Kafka, which our pipeline does too.
   The headline is ours / baseline records/s.

``--worker-profile FILE`` runs the worker under cProfile (for diagnosis: the numbers are then slower).

The worker is stopped (SIGTERM, then SIGKILL), and the labels, source records, baseline constraints, the run's
Kafka topics and Weaviate collection are removed even when a phase fails.
"""

from __future__ import annotations

import argparse
import asyncio
import csv
import json
import os
import resource
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench._baselines import GRAPH_SUFFIX, graph_baseline, q, run_baseline, wipe_graph_baseline  # noqa: E402
from bench._tpch import TABLES, row_counts, tpch_dir  # noqa: E402
from esc.agents.stores.neo4j import label_namespace  # noqa: E402
from esc.contract.entities import assign_entity_names  # noqa: E402
from esc.settings import Settings  # noqa: E402

SUBDIR = "esc_bench_tpch"
PREFIX = "escbench_"
"""Files are dropped as ``escbench_<table>.csv``: sources ``escbench_orders`` ..., labels ``EscbenchOrder`` ...
The graph is shared, and plain TPC-H labels (``Customer``, ``Order``, ``Part``) collide with other data sets'."""
BASELINE_SUFFIX = "_baseline"
SERVICES = ("kafka", "neo4j", "weaviate", "prometheus")


# ------------------------------------------------------------------------------------------------ processes


def _status(pid: int) -> dict[str, str]:
    try:
        text = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return {}
    return dict(line.split(":", 1) for line in text.splitlines() if ":" in line)


def _kib(value: str | None) -> int:
    return int(value.split()[0]) if value else 0


def process_tree(pid: int) -> list[int]:
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        for task in Path(f"/proc/{p}/task").glob("*/children") if Path(f"/proc/{p}").exists() else []:
            try:
                todo += [int(c) for c in task.read_text().split()]
            except OSError:
                pass
    return out


def peak_rss(pid: int) -> dict[str, Any]:
    """VmHWM (peak RSS) of ``pid`` and of each live descendant, in MiB; ``tree`` is their sum."""
    procs = {p: _kib(_status(p).get("VmHWM")) / 1024 for p in process_tree(pid)}
    procs = {p: round(m, 1) for p, m in procs.items() if m}
    return {"pid": pid, "peak_mib": procs.get(pid, 0.0), "tree_peak_mib": round(sum(procs.values()), 1),
            "processes": len(procs)}


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of ``pid`` and its live descendants (threads included)."""
    tick = os.sysconf("SC_CLK_TCK")
    out = 0.0
    for p in process_tree(pid):
        try:
            fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        out += (int(fields[11]) + int(fields[12])) / tick  # utime, stime (fields 14 and 15 of stat)
    return out


def cpu_snapshot(worker_pid: int | None, stack_state: Path) -> dict[str, float]:
    """CPU seconds so far of the worker and of each server (for where a phase's CPU went)."""
    out = {"worker": cpu_seconds(worker_pid)} if worker_pid else {}
    for svc in SERVICES:
        try:
            out[svc] = cpu_seconds(int((stack_state / svc / f"{svc}.pid").read_text().split()[0]))
        except (OSError, ValueError, IndexError):
            pass
    return out


def server_rss(stack_state: Path) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for svc in SERVICES:
        pid_file = stack_state / svc / f"{svc}.pid"
        try:
            out[svc] = peak_rss(int(pid_file.read_text().split()[0]))
        except (OSError, ValueError, IndexError):
            out[svc] = None
    return out


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Worker:
    """``esc up --data DIR`` in its own process group, isolated by app id, topic prefix, state dir and port."""

    def __init__(self, run_id: str, root: Path, profile: Path | None = None) -> None:
        self.root = root
        self.profile = profile
        self.data = root / "drop"
        self.state = root / "state"
        self.log = root / "worker.log"
        self.port = free_port()
        self.env = {
            **os.environ,
            "ESC_APP_ID": run_id,
            "ESC_TOPIC_PREFIX": run_id,
            "ESC_STATE_DIR": str(self.state),
            "ESC_WEB_PORT": str(self.port),
        }
        self.settings = Settings(
            state_dir=self.state, topic_prefix=run_id, app_id=run_id, web_port=self.port
        )
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        self.data.mkdir(parents=True, exist_ok=True)
        esc = str(Path(sys.executable).parent / "esc")
        cmd = [esc, "up", "--data", str(self.data)]
        if self.profile is not None:  # cProfile writes the file when the worker exits after SIGTERM
            cmd = [sys.executable, "-m", "cProfile", "-o", str(self.profile), *cmd]
        with self.log.open("wb") as log:
            self.proc = subprocess.Popen(
                cmd, env=self.env, stdout=log, stderr=subprocess.STDOUT,
                cwd=str(self.root), start_new_session=True,
            )

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def get(self, path: str, timeout: float = 5.0) -> bytes:
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}{path}", timeout=timeout) as resp:
            return bytes(resp.read())

    def wait_ready(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not self.alive():
                raise RuntimeError(f"worker exited (code {self.proc and self.proc.returncode})\n{self.tail()}")
            try:
                self.get("/healthz", timeout=1.0)
                return
            except OSError:
                time.sleep(0.5)
        raise TimeoutError(f"worker /healthz not answering after {timeout:.0f}s\n{self.tail()}")

    def metrics(self) -> dict[str, Any]:
        from prometheus_client.parser import text_string_to_metric_families

        out: dict[str, Any] = {}
        for fam in text_string_to_metric_families(self.get("/metrics").decode()):
            out[fam.name] = [(s.name, dict(s.labels), s.value) for s in fam.samples]
        return out

    def tail(self, lines: int = 40) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no worker log)"

    def stop(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        for sig, wait in ((signal.SIGTERM, 20.0), (signal.SIGKILL, 5.0)):
            try:
                os.killpg(self.proc.pid, sig)
            except ProcessLookupError:
                return
            try:
                self.proc.wait(timeout=wait)
                return
            except subprocess.TimeoutExpired:
                continue


# ------------------------------------------------------------------------------------------------ histograms


def buckets(metrics: dict[str, Any], name: str, **labels: str) -> list[tuple[float, float]]:
    """Cumulative (le, count) pairs of a histogram (the series with ``labels``), sorted by le."""
    rows = [
        (float(lb["le"]), v)
        for n, lb, v in metrics.get(name, [])
        if n == f"{name}_bucket" and all(lb.get(k) == x for k, x in labels.items())
    ]
    return sorted(rows)


def total(metrics: dict[str, Any], name: str, sample: str, **labels: str) -> float:
    return sum(
        v for n, lb, v in metrics.get(name, []) if n == sample and all(lb.get(k) == x for k, x in labels.items())
    )


def minus(a: list[tuple[float, float]], b: list[tuple[float, float]]) -> list[tuple[float, float]]:
    before = dict(b)
    return [(le, c - before.get(le, 0.0)) for le, c in a]


def quantile(q: float, cum: list[tuple[float, float]]) -> float | None:
    """``histogram_quantile``: linear interpolation inside the bucket holding rank q * total; a rank in the
    +Inf bucket returns the largest finite bound (the true value is larger)."""
    if not cum or cum[-1][1] <= 0:
        return None
    rank = q * cum[-1][1]
    lower, below = 0.0, 0.0
    for le, c in cum:
        if c >= rank:
            if le == float("inf"):
                return lower
            return lower + (le - lower) * ((rank - below) / (c - below) if c > below else 1.0)
        lower, below = le, c
    return lower


def summary(cum: list[tuple[float, float]]) -> dict[str, Any]:
    top = max((le for le, _ in cum if le != float("inf")), default=0.0)
    p50, p95 = quantile(0.5, cum), quantile(0.95, cum)
    return {"count": int(cum[-1][1]) if cum else 0, "p50_s": _r(p50), "p95_s": _r(p95),
            "p50_beyond_last_bucket": p50 is not None and p50 >= top,
            "p95_beyond_last_bucket": p95 is not None and p95 >= top}


def show(h: dict[str, Any], q: str) -> str:
    """A histogram quantile for printing: '> 300' when it lies in the +Inf bucket."""
    v = h[f"{q}_s"]
    return "n/a" if v is None else (f"> {v:g}" if h.get(f"{q}_beyond_last_bucket") else f"{v:g}")


def _r(x: float | None, nd: int = 3) -> float | None:
    return None if x is None else round(x, nd)


def pct(xs: list[float], q: float) -> float | None:
    if not xs:
        return None
    s = sorted(xs)
    return s[min(len(s) - 1, max(0, round(q * (len(s) - 1))))]


def written(m: dict[str, Any], source: str) -> float:
    return total(m, "esc_records_out", "esc_records_out_total", source=source, store="neo4j")


def wait_metrics(worker: Worker, ready: Callable[[dict[str, Any]], bool], timeout: float) -> tuple[dict[str, Any], float | None]:
    """Poll /metrics until ``ready``; (metrics, seconds waited), or (last metrics, None) after ``timeout``."""
    t0 = time.perf_counter()
    while True:
        m = worker.metrics()
        if ready(m):
            return m, round(time.perf_counter() - t0, 2)
        if time.perf_counter() - t0 > timeout:
            return m, None
        time.sleep(0.5)


# ------------------------------------------------------------------------------------------------ neo4j


def driver(settings: Settings) -> Any:
    import neo4j

    return neo4j.GraphDatabase.driver(settings.neo4j_uri, auth=None, notifications_min_severity="OFF")


def count(drv: Any, label: str, real_only: bool = True) -> int:
    where = " WHERE n._stub IS NULL" if real_only else ""
    recs, _, _ = drv.execute_query(f"MATCH (n:{q(label)}){where} RETURN count(n) AS c")
    return int(recs[0]["c"])


def wipe(drv: Any, labels: list[str], batch: int = 2_000) -> None:
    """Delete our labels' nodes, the source records they derive from, and orphaned bench source records, in
    bounded transactions (a single ``CALL {} IN TRANSACTIONS`` over 600k nodes planned an Eager step that held
    them all and ran Neo4j's 1 GB heap out of memory)."""

    def drain(query: str, **params: Any) -> None:
        while drv.execute_query(query, n=batch, **params).records[0]["c"]:
            pass

    for label in labels:  # leaves first (lineitem before part): a node's DETACH DELETE costs its relationships
        drain(
            f"MATCH (n:{q(label)}) WITH n LIMIT $n OPTIONAL MATCH (n)-[:DERIVED_FROM]->(r) "
            "DETACH DELETE n, r RETURN count(*) AS c"
        )
    drain(  # earlier runs' graphs: each run's app id namespaces its labels (agents/stores/neo4j.py)
        "MATCH (n) WHERE any(x IN labels(n) WHERE x STARTS WITH 'escbench-') WITH n LIMIT $n DETACH DELETE n "
        "RETURN count(*) AS c"
    )
    drain(
        "MATCH (r:SourceRecord) WHERE r.file STARTS WITH $dir OR r.record_id STARTS WITH 'esc_bench_' "
        "WITH r LIMIT $n DETACH DELETE r RETURN count(*) AS c",
        dir=SUBDIR + "/",
    )


def drop_baseline_constraints(drv: Any, labels: list[str]) -> None:
    for label in labels:
        drv.execute_query(f"DROP CONSTRAINT {q('esc_bench_' + label)} IF EXISTS")


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
    and report when that was, from the same start as the graph load."""
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
    return {"caught_up_at_s": round(time.perf_counter() - t0, 2), "records_with_text": int(texts)}


def _safe(fn: Callable[[], str]) -> str:
    try:
        return fn()
    except Exception as exc:  # diagnostics only
        return f"({type(exc).__name__}: {exc})"


STEADY_KEY = 10_000_000
SAMPLE_EVERY = 25


async def _steady_push(
    settings: Settings, template: list[dict[str, str]], n: int, rate: float, sent: dict[int, float]
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
                payload["o_orderkey"] = str(STEADY_KEY + j)
                env = RecordEnvelope(source=PREFIX + "orders", record_id=f"esc_bench_steady_{j}", payload=payload,
                                     event_time=datetime.now(UTC))
                if j % SAMPLE_EVERY == 0:
                    sent[STEADY_KEY + j] = time.perf_counter()
                await prod.send(settings.topic("records"), env.model_dump_json().encode(), key=env.key().encode())
            await asyncio.sleep(max(0.0, t0 + (i + step) / rate - time.perf_counter()))
        await prod.flush()
    finally:
        await prod.stop()
    return time.perf_counter() - t0


def steady_phase(worker: Worker, drv: Any, tpch: Path, label: str, base: int, n: int, rate: float,
                 timeout: float) -> dict[str, Any]:
    with (tpch / "orders.csv").open(newline="") as fh:
        template = [row for _, row in zip(range(1000), csv.DictReader(fh), strict=False)]
    sent: dict[int, float] = {}
    seen: dict[int, float] = {}
    stop = threading.Event()

    def poll() -> None:  # direct freshness of a sample: send -> the node is readable in Neo4j (~0.1 s resolution)
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

    poller = threading.Thread(target=poll, daemon=True)
    poller.start()
    t0 = time.perf_counter()
    try:
        sent_s = asyncio.run(_steady_push(worker.settings, template, n, rate, sent))
        while count(drv, label) < base + n or len(seen) < len(sent):
            if time.perf_counter() - t0 > timeout or not worker.alive():
                raise TimeoutError(f"steady phase: {count(drv, label)} of {base + n} {label} nodes after "
                                   f"{time.perf_counter() - t0:.0f}s\n--- worker log tail ---\n{worker.tail()}")
            time.sleep(0.5)
    finally:
        stop.set()
        poller.join(timeout=5)
    lat = [seen[k] - sent[k] for k in sent if k in seen]
    return {"records": n, "rate_per_s": rate, "send_seconds": round(sent_s, 2),
            "seconds_to_last_upsert": round(time.perf_counter() - t0, 2),
            "sampled": {"n": len(lat), "p50_s": _r(pct(lat, 0.5)), "p95_s": _r(pct(lat, 0.95)),
                        "max_s": _r(max(lat, default=None))}}




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


# ------------------------------------------------------------------------------------------------ baseline


# ------------------------------------------------------------------------------------------------ cleanup


async def _drop_topics(settings: Settings, run_id: str) -> list[str]:
    from aiokafka.admin import AIOKafkaAdminClient

    admin = AIOKafkaAdminClient(bootstrap_servers=settings.kafka_bootstrap, request_timeout_ms=15000)
    await admin.start()
    try:
        mine = [t for t in await admin.list_topics() if t.startswith(run_id)]
        if mine:
            await admin.delete_topics(mine)
        return mine
    finally:
        await admin.close()


def drop_collection(settings: Settings, run_id: str) -> None:
    from urllib.parse import urlparse

    import weaviate

    from esc.agents.stores.weaviate import collection_name

    url = urlparse(settings.weaviate_url)
    client = weaviate.connect_to_local(host=url.hostname or "127.0.0.1", port=url.port or 8080,
                                       grpc_port=settings.weaviate_grpc_port)
    try:
        name = collection_name(run_id)
        if client.collections.exists(name):
            client.collections.delete(name)
    finally:
        client.close()


@contextmanager
def cleanup_step(errors: list[str], what: str) -> Iterator[None]:
    try:
        yield
    except Exception as exc:
        errors.append(f"cleanup {what}: {type(exc).__name__}: {exc}")


# ------------------------------------------------------------------------------------------------ main


def run(args: argparse.Namespace, say: Callable[[str], None]) -> dict[str, Any]:
    run_id = f"escbench-{uuid.uuid4().hex[:8]}"
    tpch = tpch_dir(args.sf)
    rows = row_counts(tpch)
    plain = {t: assign_entity_names([PREFIX + x for x in TABLES])[PREFIX + t] for t in TABLES}
    labels = {t: label_namespace(run_id) + label for t, label in plain.items()}  # the worker's graph (its app id)
    base_labels = {t: label + BASELINE_SUFFIX for t, label in plain.items()}
    stack = Settings()
    drv = driver(stack)
    root = Path(tempfile.mkdtemp(prefix="esc-bench-ingest-"))
    worker = Worker(run_id, root, Path(args.worker_profile).resolve() if args.worker_profile else None)
    res: dict[str, Any] = {"sf": args.sf, "run_id": run_id, "rows": rows, "labels": labels, "cpus": os.cpu_count()}
    errors: list[str] = []
    res["rss"] = {}
    if not args.baseline_only:
        try:
            say(f"{run_id}: wiping bench labels {sorted(labels.values())} (+{BASELINE_SUFFIX}) and bench source records")
            wipe(drv, [*reversed(labels.values()), *reversed(base_labels.values())])
            drop_baseline_constraints(drv, list(base_labels.values()))
            worker.start()
            worker.wait_ready(120)
            say(f"worker pid {worker.proc and worker.proc.pid} on :{worker.port}, state {worker.state}; loading "
                f"{sum(rows.values())} rows")
            m0 = worker.metrics()
            res["load"] = load_phase(
                worker, drv, tpch, labels, rows, args.timeout, say,
                cpu=lambda: cpu_snapshot(worker.proc.pid if worker.proc else None, stack.state_dir / "stack"))
            # Counters move when a whole batch returns; a backfill batch can be a whole source, whose nodes are
            # in Neo4j before its observations are: wait for the written counts before taking the snapshot.
            m1, res["load"]["metrics_settled_s"] = wait_metrics(
                worker, lambda m: all(written(m, PREFIX + t) >= rows[t] for t in TABLES), 300.0)
            res["load"]["freshness"] = summary(minus(buckets(m1, "esc_freshness_seconds"),
                                                     buckets(m0, "esc_freshness_seconds")))
            res["load"]["records_in"] = int(total(m1, "esc_records_in", "esc_records_in_total"))
            res["load"]["neo4j_writes"] = int(total(m1, "esc_records_out", "esc_records_out_total", store="neo4j"))
            res["load"]["writes_per_row"] = {
                t: round(total(m1, "esc_records_out", "esc_records_out_total", source=PREFIX + t, store="neo4j") / rows[t], 2)
                for t in TABLES
            }
            res["load"]["healthz"] = json.loads(worker.get("/healthz"))
            say(f"loaded in {res['load']['seconds']}s ({res['load']['records_per_s']} rec/s); steady phase")
            if args.steady_records:
                base = count(drv, labels["orders"])
                before = written(m1, PREFIX + "orders")
                res["steady"] = steady_phase(worker, drv, tpch, labels["orders"], base, args.steady_records,
                                             args.steady_rate, args.timeout)
                m2, res["steady"]["metrics_settled_s"] = wait_metrics(
                    worker, lambda m: written(m, PREFIX + "orders") >= before + args.steady_records, 120.0)
                res["steady"]["freshness"] = summary(minus(buckets(m2, "esc_freshness_seconds"),
                                                           buckets(m1, "esc_freshness_seconds")))
            if args.diff_trials:
                say(f"schema-diff latency: {args.diff_trials} trials")
                lat = asyncio.run(_diff_trials(worker.settings, run_id, args.diff_trials, 30.0))
                got = [x for x in lat if x is not None]
                res["schema_diff"] = {"trials": len(lat), "received": len(got), "p50_s": _r(pct(got, 0.5)),
                                      "p95_s": _r(pct(got, 0.95)), "max_s": _r(max(got, default=None)),
                                      "all_s": [_r(x) for x in lat]}
            m3 = worker.metrics()
            res["extraction_batches"] = {
                store: {"count": int(total(m3, "esc_extraction_batch_seconds", "esc_extraction_batch_seconds_count",
                                           store=store)),
                        "sum_s": round(total(m3, "esc_extraction_batch_seconds", "esc_extraction_batch_seconds_sum",
                                             store=store), 2),
                        **{k: v for k, v in summary(buckets(m3, "esc_extraction_batch_seconds", store=store)).items()
                           if k in ("p50_s", "p95_s")}}
                for store in ("neo4j", "weaviate")
            }
            res["contract_version"] = total(m3, "esc_contract_version", "esc_contract_version")
            res["rss"]["worker"] = peak_rss(worker.proc.pid) if worker.proc else None
            res["nodes_final"] = {t: count(drv, labels[t]) for t in TABLES}  # after the pushes and any replay
        finally:
            worker.stop()
            keep = Path(tempfile.gettempdir()) / f"{run_id}-worker.log"
            with cleanup_step(errors, "keep log"):
                shutil.copyfile(worker.log, keep)
                res["worker_log"] = str(keep)
                say(f"worker log kept at {keep}")
            with cleanup_step(errors, "wipe ours"):
                wipe(drv, list(reversed(labels.values())))
            with cleanup_step(errors, "topics"):
                asyncio.run(_drop_topics(stack, run_id))
            with cleanup_step(errors, "weaviate collection"):
                drop_collection(stack, run_id)
            shutil.rmtree(root, ignore_errors=True)
    if args.baseline_only:
        wipe(drv, list(reversed(base_labels.values())))
        drop_baseline_constraints(drv, list(base_labels.values()))
    if not args.skip_baseline:
        say("baseline: one process, UNWIND MERGE batches of 5000")
        try:
            res["baseline"] = run_baseline(stack.neo4j_uri, tpch, base_labels)
            res["rss"]["baseline"] = {"peak_mib": res["baseline"].pop("peak_rss_mib")}
            if "load" in res:
                res["ratio"] = round(res["load"]["records_per_s"] / res["baseline"]["records_per_s"], 3)
        finally:
            with cleanup_step(errors, "wipe baseline"):
                wipe(drv, list(reversed(base_labels.values())))
                drop_baseline_constraints(drv, list(base_labels.values()))
    if args.graph_baseline:
        graph_labels = {t: label + GRAPH_SUFFIX for t, label in labels.items()}
        say("baseline, same graph: one process, nodes + SourceRecord + DERIVED_FROM + FK edges, batches of 5000")
        try:
            with cleanup_step(errors, "wipe graph baseline (before)"):
                wipe_graph_baseline(drv, graph_labels)
            res["graph_baseline"] = run_baseline(stack.neo4j_uri, tpch, graph_labels, graph_baseline)
            res["rss"]["graph_baseline"] = {"peak_mib": res["graph_baseline"].pop("peak_rss_mib")}
            if "load" in res:
                res["ratio_graph"] = round(res["load"]["records_per_s"] / res["graph_baseline"]["records_per_s"], 3)
        finally:
            with cleanup_step(errors, "wipe graph baseline"):
                wipe_graph_baseline(drv, graph_labels)
    res["rss"]["bench"] = {"peak_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)}
    res["rss"]["servers_since_start"] = server_rss(stack.state_dir / "stack")
    res["cleanup_errors"] = errors
    drv.close()
    return res


def _report_baselines(r: dict[str, Any]) -> None:
    if "baseline" in r:
        b = r["baseline"]
        print(f"  baseline (UNWIND)   {b['records_per_s']:>10.1f} records/s  ({b['seconds']} s; nodes only)")
        if "ratio" in r:
            print(f"  ratio ours/baseline {r['ratio']:>10.3f}   (target >= 0.5)")
    if "graph_baseline" in r:
        g = r["graph_baseline"]
        print(f"  baseline, same graph{g['records_per_s']:>10.1f} records/s  ({g['seconds']} s; nodes, SourceRecord + "
              "DERIVED_FROM, FK edges; " + ", ".join(f"{t} {x['seconds']}s" for t, x in g["tables"].items()) + ")")
        if "ratio_graph" in r:
            print(f"  ratio ours/same-graph baseline {r['ratio_graph']:.3f}   (what the streaming pipeline costs on top)")


def report(r: dict[str, Any]) -> None:
    print(f"TPC-H SF {r['sf']}: {sum(r['rows'].values())} rows, {r['cpus']} CPUs, run {r['run_id']}")
    if "load" not in r:
        _report_baselines(r)
        print("  peak RSS (VmHWM)    " + ", ".join(f"{k} {v['peak_mib']} MiB" for k, v in r["rss"].items()
                                                  if isinstance(v, dict) and "peak_mib" in v))
        return
    load, fr = r["load"], r["load"]["freshness"]
    print(f"  ours (end to end)   {load['records_per_s']:>10.1f} records/s  ({load['seconds']} s; tables done at "
          + ", ".join(f"{t} {s}s" for t, s in load["table_done_at_s"].items()) + ")")
    if load.get("cpu_seconds"):
        print("  CPU during the load " + ", ".join(f"{k} {v} s" for k, v in load["cpu_seconds"].items())
              + f"  ({r['cpus']} CPUs x {load['seconds']} s = {round(r['cpus'] * load['seconds'])} CPU-s available)")
    v = load.get("vectors") or {}
    if v:
        print(f"  vectors caught up   at {v['caught_up_at_s']} s  ({v['records_with_text']} records with text embedded "
              "behind the graph)")
    _report_baselines(r)
    print(f"  freshness, load     p50 {show(fr, 'p50')} s  p95 {show(fr, 'p95')} s  ({fr['count']} upserts; from histogram "
          "buckets)")
    if "steady" in r:
        s, sf = r["steady"], r["steady"]["freshness"]
        sm = s["sampled"]
        print(f"  freshness, steady   p50 {show(sf, 'p50')} s  p95 {show(sf, 'p95')} s  ({sf['count']} upserts incl. any "
              f"replay; {s['records']} pushed at {s['rate_per_s']}/s)   (target p95 <= 2 s)")
        print(f"    sampled directly  p50 {sm['p50_s']} s  p95 {sm['p95_s']} s  max {sm['max_s']} s  (send -> node "
              f"readable in Neo4j, every {SAMPLE_EVERY}th record, n={sm['n']})")
    if "schema_diff" in r:
        d = r["schema_diff"]
        print(f"  schema-diff latency p50 {d['p50_s']} s  p95 {d['p95_s']} s  max {d['max_s']} s  "
              f"({d['received']}/{d['trials']} received)   (target p95 <= 1 s)")
    print("  writes per row      " + ", ".join(f"{t} {x}" for t, x in load["writes_per_row"].items())
          + "  (backfill replays as the contract evolves)")
    print(f"  neo4j writes {load['neo4j_writes']} for {load['records']} rows; extraction batches: "
          + "; ".join(f"{k} n={v['count']} sum={v['sum_s']}s p50={v['p50_s']} p95={v['p95_s']}"
                      for k, v in r["extraction_batches"].items()))
    rss = r["rss"]
    w = rss.get("worker") or {}
    parts = [f"worker {w.get('peak_mib')} MiB (tree {w.get('tree_peak_mib')})", f"bench {rss['bench']['peak_mib']} MiB"]
    if "baseline" in rss:
        parts.append(f"baseline {rss['baseline']['peak_mib']} MiB")
    parts += [f"{svc} {v['peak_mib']} MiB" for svc, v in rss["servers_since_start"].items() if v]
    print("  peak RSS (VmHWM)    " + ", ".join(parts) + "  (servers: since they started)")
    for e in r["cleanup_errors"]:
        print(f"  ! {e}")


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    ap.add_argument("--sf", default="0.1", help="TPC-H scale factor (default 0.1)")
    ap.add_argument("--skip-baseline", action="store_true")
    ap.add_argument("--baseline-only", action="store_true", help="run only the baseline (no worker)")
    ap.add_argument("--graph-baseline", action="store_true",
                    help="also run a second baseline writing the same graph as ESC (nodes, SourceRecord + DERIVED_FROM, "
                         "FK edges) straight into Neo4j: ours / that is the streaming pipeline's own cost")
    ap.add_argument("--json", action="store_true", help="print one JSON document")
    ap.add_argument("--timeout", type=float, default=3600.0, help="seconds allowed for the load (and steady) phase")
    ap.add_argument("--steady-records", type=int, default=5000, help="orders rows pushed after the load (0: skip)")
    ap.add_argument("--steady-rate", type=float, default=500.0, help="records/s of the steady phase")
    ap.add_argument("--worker-profile", default="", help="run the worker under cProfile, write the stats here "
                    "(diagnosis only: it slows the worker down)")
    ap.add_argument("--diff-trials", type=int, default=20, help="schema-diff latency trials (0: skip)")
    ap.add_argument("--workers", type=int, default=1, help="N > 1: the load with one worker and with N (bench/_workers.py)")
    args = ap.parse_args()

    def say(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    if args.workers > 1:
        from bench._workers import report_workers, run_workers

        w = run_workers(args, say)
        print(json.dumps(w, indent=2, default=str)) if args.json else report_workers(w)
        return

    r = run(args, say)
    if args.json:
        print(json.dumps(r, indent=2, default=str))
    else:
        report(r)


if __name__ == "__main__":
    main()
