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
4. **Freshness during a backfill** (``--backfill-records N``, bench/_ingest_backfill.py): a lineitem record with a
   brand-new field makes the worker replay lineitem; N orders rows pushed meanwhile are timed as in step 3.
5. **Schema-diff latency**: ``--diff-trials`` times, pushes one ``escbench_nation`` record carrying a brand-new field while
   a consumer tails ``<prefix>.schema.diffs``; latency = send -> the diff event naming that field is received.
6. **Peak RSS** (``VmHWM``) of the worker (and its children), of this process, of the baseline process, and of the
   stack's servers (their peak since they started, read from ``<state>/stack/<svc>/<svc>.pid``).
7. **Baseline**, in the same run: one Python process reads the same CSVs (columns typed int/float/str from the
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
import json
import os
import resource
import shutil
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench._baselines import GRAPH_SUFFIX, graph_baseline, node_baseline, run_baseline, wipe_graph_baseline  # noqa: E402
from bench._ingest_backfill import backfill_phase  # noqa: E402
from bench._ingest_embedder import embedder_rate, text_sample, vector_rates  # noqa: E402
from bench._ingest_metrics import _r, buckets, minus, pct, summary, total, wait_metrics, written  # noqa: E402
from bench._ingest_names import BASELINE_SUFFIX, PREFIX  # noqa: E402
from bench._ingest_neo4j import (  # noqa: E402
    _drop_topics,
    cleanup_step,
    count,
    driver,
    drop_baseline_constraints,
    drop_collection,
    drop_run_schema,
    wipe,
)
from bench._ingest_phases import _diff_trials, load_phase, push_orders  # noqa: E402
from bench._ingest_proc import Worker, cpu_snapshot, peak_rss, server_rss  # noqa: E402
from bench._ingest_report import report  # noqa: E402
from bench._tpch import TABLES, row_counts, tpch_dir  # noqa: E402
from esc.agents.stores.neo4j import label_namespace  # noqa: E402
from esc.contract.entities import assign_entity_names  # noqa: E402
from esc.settings import Settings  # noqa: E402

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
    if args.graph_baseline_first and not args.baseline_only:
        # the same writer before ESC too: otherwise ESC always has the first load on a freshly started Neo4j
        _run_graph_baseline(res, "graph_baseline_before", stack, drv, tpch, labels, errors, say)
    if not args.baseline_only:
        try:
            say(f"{run_id}: wiping bench labels {sorted(labels.values())} (+{BASELINE_SUFFIX}) and bench source records")
            wipe(drv, [*reversed(labels.values()), *reversed(base_labels.values())])
            drop_baseline_constraints(drv, list(base_labels.values()))
            drop_run_schema(drv)
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
                before = written(m1, PREFIX + "orders")
                if args.steady_delay:
                    say(f"waiting {args.steady_delay} s before the steady push")
                    time.sleep(args.steady_delay)
                res["steady"] = push_orders(worker, drv, tpch, labels["orders"], args.steady_records,
                                            args.steady_rate, args.timeout)
                res["steady"]["delay_s"] = args.steady_delay
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
            if args.backfill_records:
                say(f"freshness during a backfill: {args.backfill_records} records pushed while {PREFIX}lineitem replays")
                res["backfill"] = backfill_phase(worker, drv, tpch, labels["orders"], args.backfill_records,
                                                 args.steady_rate, args.timeout)
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
                drop_run_schema(drv)
            with cleanup_step(errors, "topics"):
                asyncio.run(_drop_topics(stack, run_id))
            with cleanup_step(errors, "weaviate collection"):
                drop_collection(stack, run_id)
            shutil.rmtree(root, ignore_errors=True)
    if res.get("load", {}).get("vectors"):  # the embedder alone, after the worker stopped (issue 15, point 4)
        res["embedder"] = embedder_rate(text_sample(tpch, list(TABLES), lane=True))
        res["embedder_raw_comments"] = embedder_rate(text_sample(tpch, list(TABLES)))
        res["load"]["vectors"].update(vector_rates(res["load"]["vectors"]))
    if args.baseline_only:
        wipe(drv, list(reversed(base_labels.values())))
        drop_baseline_constraints(drv, list(base_labels.values()))
    if not args.skip_baseline:
        say("baseline: one process, UNWIND MERGE batches of 5000")
        try:
            res["baseline"] = _run_writer(stack, tpch, base_labels, node_baseline)
            res["rss"]["baseline"] = {"peak_mib": res["baseline"].pop("peak_rss_mib")}
            if "load" in res:
                res["ratio"] = round(res["load"]["records_per_s"] / res["baseline"]["records_per_s"], 3)
        finally:
            with cleanup_step(errors, "wipe baseline"):
                wipe(drv, list(reversed(base_labels.values())))
                drop_baseline_constraints(drv, list(base_labels.values()))
    if args.graph_baseline:
        _run_graph_baseline(res, "graph_baseline", stack, drv, tpch, labels, errors, say)
        if "load" in res:
            res["ratio_graph"] = round(res["load"]["records_per_s"] / res["graph_baseline"]["records_per_s"], 3)
            if "graph_baseline_before" in res:
                res["ratio_graph_before"] = round(
                    res["load"]["records_per_s"] / res["graph_baseline_before"]["records_per_s"], 3)
    res["rss"]["bench"] = {"peak_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)}
    res["rss"]["servers_since_start"] = server_rss(stack.state_dir / "stack")
    res["cleanup_errors"] = errors
    drv.close()
    return res


def _run_writer(stack: Any, tpch: Path, labels: dict[str, str], target: Callable[..., None]) -> dict[str, Any]:
    """One baseline writer's timings, with ``cpu_seconds``: its own process's and each server's while it ran."""
    cpu0 = cpu_snapshot(None, stack.state_dir / "stack")
    out = run_baseline(stack.neo4j_uri, tpch, labels, target)
    cpu1 = cpu_snapshot(None, stack.state_dir / "stack")
    out["cpu_seconds"] = {"writer": out.pop("writer_cpu_s"), **{k: round(v - cpu0.get(k, 0.0), 1) for k, v in cpu1.items()}}
    return out


def _run_graph_baseline(res: dict[str, Any], key: str, stack: Any, drv: Any, tpch: Path, labels: dict[str, str],
                        errors: list[str], say: Callable[[str], None]) -> None:
    """The same-graph writer into its own labels (wiped before and after); its timings go to ``res[key]``."""
    graph_labels = {t: label + GRAPH_SUFFIX for t, label in labels.items()}
    say("baseline, same graph: one process, nodes + SourceRecord + DERIVED_FROM + FK edges, batches of 5000"
        + (" (before ESC)" if key.endswith("_before") else ""))
    try:
        with cleanup_step(errors, "wipe graph baseline (before)"):
            wipe_graph_baseline(drv, graph_labels)
        res[key] = _run_writer(stack, tpch, graph_labels, graph_baseline)
        res["rss"][key] = {"peak_mib": res[key].pop("peak_rss_mib")}
    finally:
        with cleanup_step(errors, "wipe graph baseline"):
            wipe_graph_baseline(drv, graph_labels)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    ap.add_argument("--sf", default="0.1", help="TPC-H scale factor (default 0.1)")
    ap.add_argument("--skip-baseline", action="store_true")
    ap.add_argument("--baseline-only", action="store_true", help="run only the baseline (no worker)")
    ap.add_argument("--graph-baseline", action="store_true",
                    help="also run a second baseline writing the same graph as ESC (nodes, SourceRecord + DERIVED_FROM, "
                         "FK edges) straight into Neo4j: ours / that is the streaming pipeline's own cost")
    ap.add_argument("--graph-baseline-first", action="store_true",
                    help="with --graph-baseline: run that writer before ESC too (ESC then does not have the first load "
                         "on a freshly started Neo4j); the ratio against each is printed")
    ap.add_argument("--json", action="store_true", help="print one JSON document")
    ap.add_argument("--timeout", type=float, default=3600.0, help="seconds allowed for the load (and steady) phase")
    ap.add_argument("--steady-records", type=int, default=5000, help="orders rows pushed after the load (0: skip)")
    ap.add_argument("--steady-rate", type=float, default=500.0, help="records/s of the steady phase")
    ap.add_argument("--steady-delay", type=float, default=0.0,
                    help="seconds to wait before the steady push once the load is in and its vectors caught up (0: at "
                         "once, while background work may still run: the first mention links, example queries)")
    ap.add_argument("--worker-profile", default="", help="run the worker under cProfile, write the stats here "
                    "(diagnosis only: it slows the worker down)")
    ap.add_argument("--diff-trials", type=int, default=20, help="schema-diff latency trials (0: skip)")
    ap.add_argument("--backfill-records", type=int, default=0,
                    help="orders rows pushed while a new lineitem field makes the worker replay lineitem: their "
                         "freshness during a backfill (0: skip)")
    ap.add_argument("--workers", type=int, default=1, help="N > 1: the load with one worker and with N (bench/_workers.py)")
    return ap.parse_args(argv)


def main() -> None:
    args = parse_args()

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
