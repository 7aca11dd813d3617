"""A second baseline for ``bench/ingest.py --graph-baseline``: the same *graph* ESC writes, straight into Neo4j.

The issue's baseline writes nodes only. ESC also writes, for every row, a ``SourceRecord`` and a ``DERIVED_FROM``
edge, and one relationship per foreign-key value (to a stub when the target is not there yet). This baseline
writes exactly that from one Python process: the CSV rows (typed like the node baseline), one
``UNWIND $rows ... MERGE`` statement per table and batch of 5,000, the foreign keys of the TPC-H specification
(``bench._tpch.TPCH_FKS``) folded into the statement. No Kafka, no profiling, no contract: ours / this one is
what the streaming pipeline costs on top of writing the graph itself.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from bench._tpch import TABLES, TPCH_FKS, TPCH_KEYS

SUFFIX = "_graphbaseline"
SOURCE = "GraphBaselineRecord"


def q(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


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


def constraints(drv: Any, labels: dict[str, str]) -> None:
    drv.execute_query(f"CREATE CONSTRAINT esc_bench_graph_source IF NOT EXISTS FOR (s:{SOURCE}) REQUIRE s.sid IS UNIQUE")
    for t in TABLES:
        props = ", ".join(f"n.{q(k)}" for k in TPCH_KEYS[t])
        drv.execute_query(f"CREATE CONSTRAINT {q('esc_bench_' + labels[t])} IF NOT EXISTS "
                          f"FOR (n:{q(labels[t])}) REQUIRE ({props}) IS UNIQUE")


def graph_baseline(uri: str, tpch: str, labels: dict[str, str], out: Any) -> None:
    """Run in a spawned process (its RSS is its own); puts the result (or an error) on ``out``."""
    import neo4j

    from bench.ingest import _rows, peak_rss  # the node baseline's CSV typing, so both read the same values

    drv = neo4j.GraphDatabase.driver(uri, auth=None, notifications_min_severity="OFF")
    per: dict[str, dict[str, Any]] = {}
    t0 = time.perf_counter()
    try:
        constraints(drv, labels)
        for t in TABLES:
            query, key = statement(t, labels), TPCH_KEYS[t]
            ts, n = time.perf_counter(), 0
            for batch in _rows(Path(tpch) / f"{t}.csv"):
                rows = []
                for i, row in enumerate(batch, start=n):
                    rid = "|".join(str(row[k]) for k in key)
                    rows.append({"p": row, "sid": f"{t}\x1f{rid}", "source": t, "rid": rid, "loc": f"{t}.csv:{i + 2}",
                                 "file": f"{t}.csv"})
                drv.execute_query(query, rows=rows)
                n += len(batch)
            per[t] = {"records": n, "seconds": round(time.perf_counter() - ts, 2)}
        secs = time.perf_counter() - t0
        total = sum(p["records"] for p in per.values())
        out.put({"records": total, "seconds": round(secs, 2), "records_per_s": round(total / secs, 1),
                 "tables": per, "peak_rss_mib": peak_rss(os.getpid())["peak_mib"]})
    except Exception as exc:
        out.put({"error": f"{type(exc).__name__}: {exc}"})
    finally:
        drv.close()


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
