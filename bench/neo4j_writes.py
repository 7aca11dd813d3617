"""Neo4j write shapes, measured on the running stack: what one lineitem-like row costs the graph store.

    .venv/bin/python bench/neo4j_writes.py            # 50,000 rows with 4 foreign keys each
    .venv/bin/python bench/neo4j_writes.py --rows 20000 --json

Three shapes write the same rows (the stack must be up: ``esc stack up``), each into fresh labels:

- ``nodes only``: the ingest benchmark's baseline statement, ``UNWIND $rows MERGE (n:L {key}) SET n += row``;
- ``separate``: ESC's entity statement (SourceRecord + DERIVED_FROM) and one statement per foreign key for the
  edges (``Neo4jGraphStore.upsert_entities`` then ``upsert_edges``: both ends MERGEd again);
- ``folded``: ``Neo4jGraphStore.upsert``, each row's edges MERGEd inside its entity statement.

For each it prints rows/s and the CPU seconds Neo4j spent (from /proc, so the server's own cost is visible apart
from this process's). Rows go in batches of 5,000, as the pipeline's backfill writes them. The labels are
removed afterwards.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from esc.agents.stores.neo4j import Neo4jGraphStore  # noqa: E402
from esc.agents.types import EdgeWrite, EntityWrite, SourceRecordRef  # noqa: E402
from esc.settings import Settings, load  # noqa: E402

BATCH = 5000
FKS = (("order", 1500), ("part", 2000), ("supplier", 100), ("partsupp", 8000))


def neo4j_cpu(settings: Settings) -> float | None:
    try:
        pid = int((settings.state_dir / "stack" / "neo4j" / "neo4j.pid").read_text().split()[0])
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / 100.0  # utime + stime, in clock ticks (USER_HZ = 100)
    except (OSError, ValueError, IndexError):
        return None


def rows(n: int, run: str) -> tuple[list[EntityWrite], list[EdgeWrite]]:
    label = f"BenchLine{run}"
    ents, edges = [], []
    for i in range(n):
        key = {"l_orderkey": i // 4, "l_linenumber": i % 4}
        props = {"l_quantity": float(i % 50), "l_comment": f"line {i}", "l_shipmode": "MAIL", "l_tax": 0.02}
        prov = SourceRecordRef(source=f"bench_{run}", record_id=str(i), location=f"bench.csv:{i + 2}", file="bench.csv")
        ents.append(EntityWrite(label=label, key=key, properties=props, provenance=prov, contract_version=1))
        for name, card in FKS:
            edges.append(EdgeWrite(type=f"HAS_{name.upper()}", from_label=label, from_key=key,
                                   to_label=f"Bench{name.title()}{run}", to_key={"id": i * 7 % card},
                                   contract_version=1))
    return ents, edges


def timed(settings: Settings, fn: Callable[[], Any], n: int) -> dict[str, Any]:
    cpu0, t0 = neo4j_cpu(settings), time.perf_counter()
    fn()
    secs = time.perf_counter() - t0
    cpu1 = neo4j_cpu(settings)
    return {"rows": n, "seconds": round(secs, 2), "rows_per_s": round(n / secs, 1),
            "neo4j_cpu_s": round(cpu1 - cpu0, 1) if cpu0 is not None and cpu1 is not None else None}


def wipe(store: Neo4jGraphStore, run: str) -> None:
    drv = store._driver
    for pattern in ("BenchLine", "BenchOrder", "BenchPart", "BenchSupplier", "BenchPartsupp", "BenchNodes"):
        label = f"`{pattern}{run}`"
        while drv.execute_query(f"MATCH (n:{label}) WITH n LIMIT 5000 DETACH DELETE n RETURN count(*) AS c"
                                ).records[0]["c"]:
            pass
    while drv.execute_query("MATCH (s:SourceRecord) WHERE s.source STARTS WITH $p WITH s LIMIT 5000 "
                            "DETACH DELETE s RETURN count(*) AS c", p=f"bench_{run}").records[0]["c"]:
        pass
    for rec in drv.execute_query("SHOW CONSTRAINTS YIELD name, labelsOrTypes").records:
        if any(str(x).endswith(run) for x in rec["labelsOrTypes"]):
            drv.execute_query(f"DROP CONSTRAINT `{rec['name']}` IF EXISTS")


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    ap.add_argument("--rows", type=int, default=50_000)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    settings = load()
    store = Neo4jGraphStore(settings.neo4j_uri)
    out: dict[str, Any] = {"rows": args.rows, "foreign_keys_per_row": len(FKS)}
    runs = {shape: uuid.uuid4().hex[:8] for shape in ("nodes", "separate", "folded")}
    try:
        # nodes only (the ingest benchmark's baseline shape)
        ents, _ = rows(args.rows, runs["nodes"])
        label = f"BenchNodes{runs['nodes']}"
        store._driver.execute_query(f"CREATE CONSTRAINT IF NOT EXISTS FOR (n:`{label}`) "
                                    "REQUIRE (n.l_orderkey, n.l_linenumber) IS UNIQUE")
        flat = [{**e.key, **e.properties} for e in ents]
        query = (f"UNWIND $rows AS row MERGE (n:`{label}` {{l_orderkey: row.l_orderkey, "
                 "l_linenumber: row.l_linenumber}) SET n += row")

        def nodes() -> None:
            for i in range(0, len(flat), BATCH):
                store._driver.execute_query(query, rows=flat[i : i + BATCH])

        out["nodes only"] = timed(settings, nodes, args.rows)
        for shape in ("separate", "folded"):
            ents, edges = rows(args.rows, runs[shape])

            def write(ents: list[EntityWrite] = ents, edges: list[EdgeWrite] = edges, shape: str = shape) -> None:
                for i in range(0, len(ents), BATCH):
                    e, r = ents[i : i + BATCH], edges[i * len(FKS) : (i + BATCH) * len(FKS)]
                    if shape == "folded":
                        store.upsert(e, r)
                    else:
                        store.upsert_entities(e)
                        store.upsert_edges(r)

            out[shape] = timed(settings, write, args.rows)
    finally:
        for run in runs.values():
            wipe(store, run)
        store.close()
    if args.json:
        print(json.dumps(out, indent=2))
        return
    print(f"Neo4j write shapes: {args.rows} rows, {len(FKS)} foreign keys each, batches of {BATCH}")
    for shape in ("nodes only", "separate", "folded"):
        r = out.get(shape)
        if r:
            print(f"  {shape:<11} {r['rows_per_s']:>9.1f} rows/s  ({r['seconds']} s; neo4j CPU {r['neo4j_cpu_s']} s)")


if __name__ == "__main__":
    main()
