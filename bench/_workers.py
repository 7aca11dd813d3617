"""``bench/ingest.py --workers N``: the same TPC-H load with one worker and with N workers of one app (same consumer
group; the records topic has 4 partitions), each run against fresh topics and labels. Prints the N-worker /
one-worker throughput ratio and each worker's peak RSS (on 2 cores a ratio near 1 is expected: the workers share
the cores with Kafka and Neo4j)."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import shutil
import tempfile
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench import _ingest_neo4j as neo
from bench import _ingest_proc as proc
from bench._ingest_names import PREFIX
from bench._ingest_phases import load_phase
from bench._tpch import TABLES, row_counts, tpch_dir
from esc.agents.stores.neo4j import label_namespace
from esc.contract.entities import assign_entity_names
from esc.settings import Settings


def run_workers(args: argparse.Namespace, say: Callable[[str], None]) -> dict[str, Any]:
    tpch = tpch_dir(args.sf)
    rows = row_counts(tpch)
    stack = Settings()
    drv = neo.driver(stack)
    plain = {t: assign_entity_names([PREFIX + x for x in TABLES])[PREFIX + t] for t in TABLES}
    out: dict[str, Any] = {"sf": args.sf, "rows": sum(rows.values()), "runs": {}}
    for n in sorted({1, args.workers}):
        run_id = f"escbench-{uuid.uuid4().hex[:8]}"
        labels = {t: label_namespace(run_id) + label for t, label in plain.items()}
        root = Path(tempfile.mkdtemp(prefix=f"esc-bench-workers{n}-"))
        workers = [proc.Worker(run_id, root / f"w{i}") for i in range(n)]  # same app id: one consumer group
        try:
            for w in workers:
                w.start()
                w.wait_ready(120)
            say(f"{n} worker(s) {run_id}: loading {sum(rows.values())} rows")
            load = load_phase(workers[0], drv, tpch, labels, rows, args.timeout, say)
            out["runs"][n] = {"records_per_s": load["records_per_s"], "seconds": load["seconds"],
                              "rss": [proc.peak_rss(w.proc.pid) if w.proc else None for w in workers]}  # fmt: skip
        except Exception:
            for i, w in enumerate(workers):  # what each worker was doing when the load failed
                with contextlib.suppress(OSError):
                    say(f"worker {i} /healthz: {w.get('/healthz').decode()[:2000]}")
            raise
        finally:
            for i, w in enumerate(workers):
                w.stop()
                keep = Path(tempfile.gettempdir()) / f"{run_id}-worker{i}.log"
                with contextlib.suppress(OSError):
                    shutil.copyfile(w.log, keep)
                    say(f"worker {i} log kept at {keep}")
            neo.wipe(drv, list(reversed(labels.values())))
            asyncio.run(neo._drop_topics(stack, run_id))
            neo.drop_collection(stack, run_id)
            shutil.rmtree(root, ignore_errors=True)
    one, many = out["runs"].get(1), out["runs"].get(args.workers)
    if one and many and args.workers != 1:
        out["ratio"] = round(many["records_per_s"] / one["records_per_s"], 3)
    return out


def report_workers(r: dict[str, Any]) -> None:
    print(f"TPC-H SF {r['sf']}: {r['rows']} rows")
    for n, run in sorted(r["runs"].items()):
        rss = ", ".join(f"{x['peak_mib']} MiB (tree {x['tree_peak_mib']})" for x in run["rss"] if x)
        print(f"  {n} worker(s): {run['records_per_s']} rec/s in {run['seconds']} s; peak RSS per worker: {rss}")
    if "ratio" in r:
        print(f"  ratio {max(r['runs'])} workers / 1 worker: {r['ratio']}x")
