"""The baselines of ``bench/ingest.py``: the same TPC-H rows written straight into Neo4j by one Python process.

- **nodes only** (the issue's baseline): ``UNWIND $rows AS row MERGE (n:<Label>_baseline {key}) SET n += row``;
- **same graph** (``--graph-baseline``): what ESC writes for every row, that is the node, a ``SourceRecord`` with
  a ``DERIVED_FROM`` edge, one relationship per foreign-key value of the TPC-H specification
  (``bench._tpch.TPCH_FKS``, to a stub when the target is not there yet) and the contract-version properties, in
  one statement per table and batch. No Kafka, no profiling, no contract: ours / this one is what the streaming
  pipeline costs on top of writing the graph itself.

Both read the CSV files the same way (columns typed int/float/str from the first rows), write batches of 5,000 and
run in a spawned process (``run_baseline``), so their RSS is their own. Their row lists go to the driver as the
store's do (``Sent``: the driver's debug line does not ``repr`` them), so the ratio is not the store's workaround.
"""

from __future__ import annotations

import csv
import multiprocessing as mp
import os
import resource
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from bench._tpch import TABLES, TPCH_FKS, TPCH_KEYS
from esc.agents.stores.cypher import Sent

BASELINE_BATCH = 5000
GRAPH_SUFFIX = "_graphbaseline"
SOURCE = "GraphBaselineRecord"

WriteTable = Callable[[Any, str, Path], int]
"""(driver, table, csv path) -> rows written."""


def q(name: str) -> str:
    """A backtick-quoted Cypher identifier."""
    return "`" + name.replace("`", "``") + "`"


def _typed(rows: list[dict[str, str]]) -> dict[str, Callable[[str], Any]]:
    conv: dict[str, Callable[[str], Any]] = {}
    for col in rows[0] if rows else {}:
        for fn in (int, float):
            try:
                for r in rows:
                    fn(r[col])
            except ValueError:
                continue
            conv[col] = fn
            break
    return conv


def csv_batches(path: Path) -> Iterator[list[dict[str, Any]]]:
    """The file's rows, typed from its first 1,000, in batches of ``BASELINE_BATCH``."""
    with path.open(newline="") as fh:
        reader = csv.DictReader(fh)
        first = [row for _, row in zip(range(1000), reader, strict=False)]
        conv = _typed(first)

        def typed(row: dict[str, str]) -> dict[str, Any]:
            out: dict[str, Any] = dict(row)
            for col, fn in conv.items():
                try:
                    out[col] = fn(row[col])
                except ValueError:
                    pass
            return out

        batch = [typed(r) for r in first]
        for row in reader:
            if len(batch) >= BASELINE_BATCH:
                yield batch
                batch = []
            batch.append(typed(row))
        if batch:
            yield batch


def _timed_tables(uri: str, tpch: str, out: Any, write_table: WriteTable) -> None:
    """Run ``write_table`` for every table in order and put the timings (or an error) on ``out``."""
    import neo4j

    from bench.ingest import peak_rss

    drv = neo4j.GraphDatabase.driver(uri, auth=None, notifications_min_severity="OFF")
    per: dict[str, dict[str, Any]] = {}
    t0 = time.perf_counter()
    try:
        for t in TABLES:
            ts = time.perf_counter()
            n = write_table(drv, t, Path(tpch) / f"{t}.csv")
            per[t] = {"records": n, "seconds": round(time.perf_counter() - ts, 2)}
        secs = time.perf_counter() - t0
        total = sum(p["records"] for p in per.values())
        # VmHWM, not ru_maxrss: Linux keeps ru_maxrss across fork + exec, so a spawned child would report at
        # least the parent's RSS at the time it was started.
        out.put({"records": total, "seconds": round(secs, 2), "records_per_s": round(total / secs, 1),
                 "tables": per, "peak_rss_mib": peak_rss(os.getpid())["peak_mib"]})
    except Exception as exc:
        out.put({"error": f"{type(exc).__name__}: {exc}"})
    finally:
        drv.close()


# ------------------------------------------------------------------------------------------------ nodes only


def node_baseline(uri: str, tpch: str, labels: dict[str, str], out: Any) -> None:
    def write_table(drv: Any, t: str, path: Path) -> int:
        label, key = labels[t], TPCH_KEYS[t]
        props = ", ".join(f"n.{q(k)}" for k in key)
        drv.execute_query(f"CREATE CONSTRAINT {q('esc_bench_' + label)} IF NOT EXISTS "
                          f"FOR (n:{q(label)}) REQUIRE ({props}) IS UNIQUE")
        merge = ", ".join(f"{q(k)}: row.{q(k)}" for k in key)
        query = f"UNWIND $rows AS row MERGE (n:{q(label)} {{{merge}}}) SET n += row"
        n = 0
        for batch in csv_batches(path):
            drv.execute_query(query, rows=Sent(batch))  # the store's workaround too (its short repr: ``Sent``)
            n += len(batch)
        return n

    _timed_tables(uri, tpch, out, write_table)


# ------------------------------------------------------------------------------------------------ same graph


def statement(table: str, labels: dict[str, str]) -> str:
    key = TPCH_KEYS[table]
    merge = ", ".join(f"{q(k)}: row.p.{q(k)}" for k in key)
    parts = [
        "UNWIND $rows AS row "
        f"MERGE (s:{SOURCE} {{sid: row.sid}}) SET s.source = row.source, s.record_id = row.rid, s.location = row.loc, "
        "s.file = row.file "
        f"MERGE (n:{q(labels[table])} {{{merge}}}) SET n += row.p, n._contract_version = 1, n._stub = null "
        "MERGE (n)-[:DERIVED_FROM]->(s)"
    ]
    for i, (_, cols, to, to_key) in enumerate(f for f in TPCH_FKS if f[0] == table):
        target = ", ".join(f"{q(tk)}: row.p.{q(c)}" for c, tk in zip(cols, to_key, strict=True))
        present = " AND ".join(f"row.p.{q(c)} IS NOT NULL" for c in cols)
        parts.append(
            f"FOREACH (_ IN CASE WHEN {present} THEN [1] ELSE [] END | "
            f"MERGE (t{i}:{q(labels[to])} {{{target}}}) ON CREATE SET t{i}._stub = true "
            f"MERGE (n)-[r{i}:{q('FK_' + '_'.join(cols).upper())}]->(t{i}) SET r{i}._contract_version = 1)"
        )
    return " ".join(parts)


def graph_baseline(uri: str, tpch: str, labels: dict[str, str], out: Any) -> None:
    def write_table(drv: Any, t: str, path: Path) -> int:
        if t == TABLES[0]:
            drv.execute_query(f"CREATE CONSTRAINT esc_bench_graph_source IF NOT EXISTS FOR (s:{SOURCE}) "
                              "REQUIRE s.sid IS UNIQUE")
        props = ", ".join(f"n.{q(k)}" for k in TPCH_KEYS[t])
        drv.execute_query(f"CREATE CONSTRAINT {q('esc_bench_' + labels[t])} IF NOT EXISTS "
                          f"FOR (n:{q(labels[t])}) REQUIRE ({props}) IS UNIQUE")
        query, key, n = statement(t, labels), TPCH_KEYS[t], 0
        for batch in csv_batches(path):
            rows = []
            for i, row in enumerate(batch, start=n):
                rid = "|".join(str(row[k]) for k in key)
                rows.append({"p": row, "sid": f"{t}\x1f{rid}", "source": t, "rid": rid, "loc": f"{t}.csv:{i + 2}",
                             "file": f"{t}.csv"})
            drv.execute_query(query, rows=Sent(rows))
            n += len(batch)
        return n

    _timed_tables(uri, tpch, out, write_table)


def wipe_graph_baseline(drv: Any, labels: dict[str, str], batch: int = 2_000) -> None:
    """Its labels (leaves first), its source records and its constraints."""
    for t in reversed(TABLES):
        while drv.execute_query(f"MATCH (n:{q(labels[t])}) WITH n LIMIT $n DETACH DELETE n RETURN count(*) AS c",
                                n=batch).records[0]["c"]:
            pass
    while drv.execute_query(f"MATCH (s:{SOURCE}) WITH s LIMIT $n DETACH DELETE s RETURN count(*) AS c",
                            n=batch).records[0]["c"]:
        pass
    drv.execute_query("DROP CONSTRAINT esc_bench_graph_source IF EXISTS")
    for t in TABLES:
        drv.execute_query(f"DROP CONSTRAINT {q('esc_bench_' + labels[t])} IF EXISTS")


# ------------------------------------------------------------------------------------------------ running


def run_baseline(uri: str, tpch: Path, labels: dict[str, str],
                 target: Callable[[str, str, dict[str, str], Any], None] = node_baseline) -> dict[str, Any]:
    """Run one baseline in a spawned process and return its timings and its own CPU seconds (``writer_cpu_s``:
    the only child this process waits for meanwhile)."""
    ctx = mp.get_context("spawn")
    qu = ctx.Queue()
    proc = ctx.Process(target=target, args=(uri, str(tpch), labels, qu))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc.start()
    result = qu.get()
    proc.join()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if "error" in result:
        raise RuntimeError(f"baseline failed: {result['error']}")
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return {**result, "writer_cpu_s": round(cpu, 1)}
