"""Embedded store speed: vector search over 50k x 384 and graph writes / query plans, on local DuckDB files.

Usage: ``.venv/bin/python bench/embedded_store.py [--vectors 50000] [--dim 384] [--queries 200]
[--entities 100000] [--json]``

Vectors: upsert throughput, cold index load after a restart, and near_vector latency (p50/p95, top 10) of
``EmbeddedVectorStore`` (numpy matrix + DuckDB properties) against three baselines over the same data in the same
run: bare numpy brute force (matrix-vector product + argpartition, no properties), DuckDB
``list_cosine_similarity`` over the stored ``FLOAT[]`` rows, and DuckDB ``array_cosine_similarity`` over a
``FLOAT[dim]`` copy. Graph: entity and edge upsert throughput, and ``run_plan`` latency for lookup, count,
two-hop and grouped-aggregate plans. Vectors are seeded random unit vectors; numbers depend on the CPU and on
whatever else runs (the load average is printed alongside).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import duckdb
import numpy as np

from esc.agents.query.plan import Filter, Hop, NodePattern, OrderBy, QueryPlan, ReturnItem
from esc.agents.stores.embedded import EmbeddedGraphStore, EmbeddedVectorStore
from esc.agents.types import EdgeWrite, EntityWrite, SourceRecordRef, TextObject


def timed(fn: Callable[[], Any], repeat: int) -> dict[str, float]:
    fn()  # warm
    samples = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - t) * 1000)
    samples.sort()
    return {
        "p50_ms": round(statistics.median(samples), 3),
        "p95_ms": round(samples[int(0.95 * (len(samples) - 1))], 3),
        "mean_ms": round(statistics.fmean(samples), 3),
    }


def bench_vectors(folder: Path, n: int, dim: int, queries: int) -> dict[str, Any]:
    rng = np.random.default_rng(0)
    mat = rng.normal(size=(n, dim)).astype(np.float32)
    objects = [
        TextObject(
            object_id=f"{i:08d}-0000-0000-0000-000000000000",
            text=f"chunk {i}",
            provenance=SourceRecordRef(source="bench", record_id=str(i), location=f"bench.txt:chunk={i}"),
            vector=mat[i].tolist(),
        )
        for i in range(n)
    ]
    out: dict[str, Any] = {"n": n, "dim": dim}
    path = folder / "vectors.duckdb"
    store = EmbeddedVectorStore(path)
    t = time.perf_counter()
    for i in range(0, n, 1000):
        store.upsert("bench", objects[i : i + 1000])
    out["upsert_per_s"] = round(n / (time.perf_counter() - t))
    store.close()

    store = EmbeddedVectorStore(path)
    t = time.perf_counter()
    store.near_vector("bench", mat[0].tolist(), limit=10)
    out["cold_load_and_first_query_ms"] = round((time.perf_counter() - t) * 1000, 1)
    qs = rng.normal(size=(queries, dim)).astype(np.float32)
    it = iter(range(10**9))

    def q() -> np.ndarray:
        return qs[next(it) % queries]

    out["store_near_vector"] = timed(lambda: store.near_vector("bench", q(), limit=10), queries)
    hits = store.near_vector("bench", qs[0], limit=10)
    store.close()

    unit = mat / np.linalg.norm(mat, axis=1, keepdims=True)

    def brute() -> list[int]:
        v = q()
        sims = unit @ (v / np.linalg.norm(v))
        top = np.argpartition(-sims, 9)[:10]
        return top[np.argsort(-sims[top])].tolist()

    out["numpy_brute_force"] = timed(brute, queries)
    exact = np.argsort(-(unit @ (qs[0] / np.linalg.norm(qs[0]))))[:10].tolist()
    out["store_top10_equals_exact"] = [int(h["record_id"]) for h in hits] == exact

    con = duckdb.connect(str(path), read_only=True)
    sql_list = "SELECT id FROM objects WHERE collection = 'bench' ORDER BY list_cosine_similarity(vec, ?) DESC LIMIT 10"
    duck_q = max(10, queries // 10)
    out["duckdb_list_cosine"] = timed(lambda: con.execute(sql_list, [q().tolist()]).fetchall(), duck_q)
    con.close()
    mem = duckdb.connect()
    mem.execute(
        f"CREATE TABLE a AS SELECT i, v::FLOAT[{dim}] AS v FROM (SELECT unnest(range(?)) AS i, unnest(?) AS v)",
        [n, mat.tolist()],
    )
    sql_arr = f"SELECT i FROM a ORDER BY array_cosine_similarity(v, ?::FLOAT[{dim}]) DESC LIMIT 10"
    out["duckdb_array_cosine_in_memory"] = timed(
        lambda: mem.execute(sql_arr, [q().tolist()]).fetchall(), duck_q
    )
    mem.close()
    out["file_mb"] = round(path.stat().st_size / 2**20, 1)
    return out


def bench_graph(folder: Path, n: int) -> dict[str, Any]:
    rng = np.random.default_rng(1)
    store = EmbeddedGraphStore(folder / "graph.duckdb")
    n_albums, n_artists = max(1, n // 10), max(1, n // 100)
    out: dict[str, Any] = {"tracks": n, "albums": n_albums, "artists": n_artists}

    def ent(label: str, key: str, i: int, props: dict[str, Any]) -> EntityWrite:
        return EntityWrite(
            label=label,
            key={key: i},
            properties=props,
            provenance=SourceRecordRef(
                source=label.lower(), record_id=str(i), location=f"{label}.csv:row={i}"
            ),
        )

    rows = [
        ent(
            "Track",
            "TrackId",
            i,
            {
                "Name": f"Track {i}",
                "Milliseconds": int(rng.integers(60_000, 600_000)),
                "UnitPrice": float(rng.choice([0.99, 1.29, 1.99])),
            },
        )
        for i in range(n)
    ]
    rows += [ent("Album", "AlbumId", i, {"Title": f"Album {i}"}) for i in range(n_albums)]
    rows += [ent("Artist", "ArtistId", i, {"Name": f"Artist {i}"}) for i in range(n_artists)]
    t = time.perf_counter()
    for i in range(0, len(rows), 5000):
        store.upsert_entities(rows[i : i + 5000])
    out["entity_upsert_per_s"] = round(len(rows) / (time.perf_counter() - t))
    edges = [
        EdgeWrite(
            type="ALBUM",
            from_label="Track",
            from_key={"TrackId": i},
            to_label="Album",
            to_key={"AlbumId": i % n_albums},
        )
        for i in range(n)
    ]
    edges += [
        EdgeWrite(
            type="ARTIST",
            from_label="Album",
            from_key={"AlbumId": i},
            to_label="Artist",
            to_key={"ArtistId": i % n_artists},
        )
        for i in range(n_albums)
    ]
    t = time.perf_counter()
    for i in range(0, len(edges), 5000):
        store.upsert_edges(edges[i : i + 5000])
    out["edge_upsert_per_s"] = round(len(edges) / (time.perf_counter() - t))
    t = time.perf_counter()
    store.upsert_entities(rows[:5000])
    out["reupsert_5000_existing_ms"] = round((time.perf_counter() - t) * 1000, 1)

    def node(var: str, label: str, *f: Filter) -> NodePattern:
        return NodePattern(var=var, label=label, filters=list(f))

    plans = {
        "lookup": QueryPlan(
            kind="lookup",
            start=node("n0", "Track", Filter(prop="Name", value=f"Track {n // 2}")),
            returns=[ReturnItem(var="n0", prop="Milliseconds", alias="ms")],
            cite=["n0"],
        ),
        "count_one_hop": QueryPlan(
            kind="count",
            start=node("n0", "Album", Filter(prop="Title", value="Album 7")),
            hops=[Hop(rel_type="ALBUM", direction="in", target=node("n1", "Track"))],
            returns=[ReturnItem(var="n1", agg="count", alias="n")],
            cite=["n1"],
        ),
        "two_hop_list": QueryPlan(
            kind="traverse",
            start=node("n0", "Artist", Filter(prop="Name", value="Artist 3")),
            hops=[
                Hop(rel_type="ARTIST", direction="in", target=node("n1", "Album")),
                Hop(rel_type="ALBUM", direction="in", target=node("n2", "Track")),
            ],
            returns=[ReturnItem(var="n2", prop="Name", alias="t")],
            cite=["n2"],
        ),
        "superlative": QueryPlan(
            kind="superlative",
            start=node("n0", "Track"),
            returns=[ReturnItem(var="n0", prop="Name", alias="t")],
            order_by=OrderBy(var="n0", prop="Milliseconds"),
            limit=1,
            cite=["n0"],
        ),
        "grouped_aggregate_all_artists": QueryPlan(
            kind="aggregate",
            start=node("n0", "Artist"),
            hops=[
                Hop(rel_type="ARTIST", direction="in", target=node("n1", "Album")),
                Hop(rel_type="ALBUM", direction="in", target=node("n2", "Track")),
            ],
            returns=[
                ReturnItem(var="n0", prop="Name", alias="a"),
                ReturnItem(var="n2", prop="Milliseconds", agg="sum", alias="ms"),
            ],
            group_by=["n0"],
            order_by=OrderBy(alias="ms"),
            limit=5,
            cite=["n0"],
        ),
    }
    out["run_plan"] = {name: timed(lambda p=plan: store.run_plan(p), 20) for name, plan in plans.items()}
    store.close()
    out["file_mb"] = round((folder / "graph.duckdb").stat().st_size / 2**20, 1)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--vectors", type=int, default=50_000)
    ap.add_argument("--dim", type=int, default=384)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--entities", type=int, default=100_000)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        result = {
            "duckdb": duckdb.__version__,
            "cpus": os.cpu_count(),
            "loadavg_1m": round(os.getloadavg()[0], 2),
            "vectors": bench_vectors(Path(tmp), args.vectors, args.dim, args.queries),
            "graph": bench_graph(Path(tmp), args.entities),
        }
    if args.json:
        print(json.dumps(result, indent=2))
        return
    v, g = result["vectors"], result["graph"]
    print(f"duckdb {result['duckdb']}, {result['cpus']} CPUs, load {result['loadavg_1m']}")
    print(
        f"vectors: {v['n']} x {v['dim']}  upsert {v['upsert_per_s']}/s  file {v['file_mb']} MB  "
        f"cold load + first query {v['cold_load_and_first_query_ms']} ms  exact top10 {v['store_top10_equals_exact']}"
    )
    for name in (
        "store_near_vector",
        "numpy_brute_force",
        "duckdb_list_cosine",
        "duckdb_array_cosine_in_memory",
    ):
        s = v[name]
        print(f"  {name:32s} p50 {s['p50_ms']:8.2f} ms  p95 {s['p95_ms']:8.2f} ms")
    print(
        f"graph: {g['tracks']} tracks, {g['albums']} albums, {g['artists']} artists  file {g['file_mb']} MB"
    )
    print(
        f"  entity upsert {g['entity_upsert_per_s']}/s  edge upsert {g['edge_upsert_per_s']}/s  "
        f"re-upsert 5000 existing {g['reupsert_5000_existing_ms']} ms"
    )
    for name, s in g["run_plan"].items():
        print(f"  run_plan {name:30s} p50 {s['p50_ms']:8.2f} ms  p95 {s['p95_ms']:8.2f} ms")


if __name__ == "__main__":
    main()
