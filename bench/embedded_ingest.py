"""Embedded ingest speed (issue 15.3): ``esc ingest DIR --embedded`` on TPC-H, beside DuckDB's own load time of the
same files (the limit: the store itself reading the CSVs into tables).

    .venv/bin/python bench/embedded_ingest.py                      # SF 0.01 (86,805 records), this checkout
    .venv/bin/python bench/embedded_ingest.py --baseline ns        # ... and git ref `ns` in the same run
    .venv/bin/python bench/embedded_ingest.py --profile out.prof   # this checkout under cProfile
    .venv/bin/python bench/embedded_ingest.py --baseline ns --spy /tmp/spy   # each run under py-spy: where time goes

Each measurement runs in a new process importing ESC from its checkout (``--baseline REF``: a temporary
``git worktree``, as ``bench/many_sources.py`` does) and ingests into a new state folder with the embedder
``ESC_EMBEDDER`` names (default: the one ESC would use). It prints records/s end to end (reading, profiling,
contract, planning, graph and vector writes, grounding) and, where the checkout has the columnar path, records/s
to structured completion (every entity, edge and source record written, before the vector lane starts), the
vector lane's vectors/s beside the embedder's own texts/s, and the child process's peak RSS; the graph it left (nodes per label, SourceRecords,
DERIVED_FROM and other edges, chunks) so two checkouts can be compared for the same graph, and DuckDB's
``read_csv`` of the same files into tables in the same run.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:  # after PYTHONPATH: a --baseline child imports ESC from the baseline's checkout
    sys.path.append(str(REPO))

from bench._tpch import TABLES, row_counts, tpch_dir  # noqa: E402


def duckdb_load(folder: Path) -> dict[str, Any]:
    """DuckDB reading every CSV into a table of a new file database: the store's own load time (the limit)."""
    import duckdb

    root = Path(tempfile.mkdtemp(prefix="esc-bench-duck-"))
    try:
        con = duckdb.connect(str(root / "load.duckdb"))
        t0 = time.perf_counter()
        rows = 0
        for t in TABLES:
            con.execute(f"CREATE TABLE {t} AS SELECT * FROM read_csv(?, header = true)", [str(folder / f"{t}.csv")])
            rows += int(con.execute(f"SELECT count(*) FROM {t}").fetchone()[0])  # type: ignore[index]
        con.execute("CHECKPOINT")
        seconds = time.perf_counter() - t0
        con.close()
        return {"seconds": round(seconds, 3), "records": rows, "records_per_s": round(rows / seconds)}
    finally:
        shutil.rmtree(root, ignore_errors=True)


def embedder_rate(folder: Path, n: int = 512) -> dict[str, Any]:
    """The embedder's own texts/s on TPC-H comments (what the ingest embeds), in batches of 64: how much of an
    ingest its text chunks take at best."""
    import duckdb

    from esc.agents.embedding import get_embedder

    texts = [str(r[0]) for r in duckdb.sql(
        f"SELECT o_comment FROM read_csv('{folder / 'orders.csv'}', header = true) LIMIT {n}").fetchall()]  # fmt: skip
    embedder = get_embedder()
    embedder.embed(texts[:64])  # loads the model
    t0 = time.perf_counter()
    for i in range(0, len(texts), 64):
        embedder.embed(texts[i : i + 64])
    seconds = time.perf_counter() - t0
    return {"embedder": type(embedder).__name__, "texts_per_s": round(len(texts) / seconds, 1)}


def chunk_rate(state: Path, n: int = 1024) -> float | None:
    """The embedder's own texts/s on this run's chunks (``field`` + newline + text, what a field chunk's embedder
    input is; up to ``n`` of them, batches of 64): the rate the vector lane is compared with."""
    import duckdb

    from esc.agents.embedding import get_embedder

    path = next((state / "embedded").glob("graph*.duckdb"), None)
    if path is None:
        return None
    con = duckdb.connect(str(path), read_only=True)
    try:
        texts = [f"{f}\n{t}" for f, t in con.execute(f"SELECT field, text FROM chunks ORDER BY id LIMIT {int(n)}").fetchall()]
    finally:
        con.close()
    if len(texts) < 64:
        return None
    embedder = get_embedder()
    embedder.embed(texts[:64])  # loads the model
    t0 = time.perf_counter()
    for i in range(0, len(texts), 64):
        embedder.embed(texts[i : i + 64])
    return round(len(texts) / (time.perf_counter() - t0), 1)


def graph_counts(state: Path) -> dict[str, Any]:
    """What the embedded graph holds: nodes per label (stubs apart), SourceRecords, edges per type, chunks."""
    import duckdb

    path = next((state / "embedded").glob("graph*.duckdb"), None)
    if path is None:
        return {}
    con = duckdb.connect(str(path), read_only=True)
    try:
        labels = dict(con.execute("SELECT label, count(*) FROM entities WHERE NOT stub GROUP BY 1 ORDER BY 1").fetchall())
        edges = dict(con.execute("SELECT type, count(*) FROM edges GROUP BY 1 ORDER BY 1").fetchall())
        one = lambda q: int(con.execute(q).fetchone()[0])  # type: ignore[index]  # noqa: E731
        return {"nodes": labels, "stubs": one("SELECT count(*) FROM entities WHERE stub"),
                "chunks": one("SELECT count(*) FROM chunks"),
                "source_records": one("SELECT count(*) FROM source_records"),
                "derived_from": one("SELECT count(*) FROM derived_from"), "edges": edges}  # fmt: skip
    finally:
        con.close()


def child(sf: str, profile: str) -> dict[str, Any]:
    """One ingest in this process (ESC imported from PYTHONPATH's checkout)."""
    from esc.settings import load
    from esc.streams.runtime.inprocess import ingest_embedded

    folder = tpch_dir(sf)
    root = Path(tempfile.mkdtemp(prefix="esc-bench-emb-"))
    try:
        drop = root / "drop"
        drop.mkdir()
        for t in TABLES:
            os.link(folder / f"{t}.csv", drop / f"{t}.csv") if _same_fs(folder, drop) else shutil.copy(folder / f"{t}.csv", drop)
        settings = load().replace(state_dir=root / "state")
        prof = None
        if profile:
            import cProfile

            prof = cProfile.Profile()
            prof.enable()
        t0 = time.perf_counter()
        summary = ingest_embedded(settings, drop)
        seconds = time.perf_counter() - t0
        if prof is not None:
            prof.disable()
            prof.dump_stats(profile)
        records = sum(row_counts(folder).values())
        import resource

        import esc

        structured = getattr(summary, "structured_seconds", None)  # absent before the columnar path
        return {"esc": str(Path(esc.__file__).resolve().parent.parent), "seconds": round(seconds, 2), "records": records, "records_per_s": round(records / seconds),
                "structured_seconds": structured, "columnar_files": getattr(summary, "columnar_files", 0),
                "vector_chunks": getattr(summary, "vector_chunks", 0), "vector_seconds": getattr(summary, "vector_seconds", 0.0),
                "rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
                "written": summary.written + summary.backfilled, "contract_version": summary.contract_version,
                "dead": summary.dead, "graph": graph_counts(root / "state"),
                "embedder_on_chunks": chunk_rate(root / "state")}  # fmt: skip
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _same_fs(a: Path, b: Path) -> bool:
    return os.stat(a).st_dev == os.stat(b).st_dev


def measure(checkout: Path, sf: str, timeout: float, profile: str = "", spy: Path | None = None) -> dict[str, Any]:
    """One ingest in a new process importing ESC from ``checkout`` (under py-spy, raw output to ``spy``)."""
    env = dict(os.environ, PYTHONPATH=str(checkout))
    cmd = [sys.executable, str(REPO / "bench" / "embedded_ingest.py"), "--child", "--sf", sf, "--profile", profile]
    if spy is not None:
        exe = shutil.which("py-spy") or str(Path(sys.executable).parent / "py-spy")
        cmd = [exe, "record", "-r", "50", "-f", "raw", "-o", str(spy), "--", *cmd]
    try:
        out = subprocess.run(cmd, env=env, cwd=checkout, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"error": f"did not finish within {timeout:.0f} s"}
    if out.returncode != 0:
        return {"error": (out.stderr or out.stdout)[-2000:]}
    line = [x for x in out.stdout.splitlines() if x.startswith("{")][-1]  # py-spy prints its own lines around it
    result = dict(json.loads(line))
    if spy is not None and spy.exists():
        from bench._ingest_breakdown import breakdown

        stages, busy, idle = breakdown(spy)
        result["breakdown_s"] = {"busy": round(busy / 50, 1), "idle": round(idle / 50, 1),
                                 **{k: round(v / 50, 1) for k, v in stages.most_common()}}  # fmt: skip
    return result


def worktree(ref: str) -> Path:
    path = Path(tempfile.mkdtemp(prefix="esc-emb-base-")) / "checkout"
    subprocess.run(["git", "-C", str(REPO), "worktree", "add", "--detach", str(path), ref], check=True,
                   capture_output=True)  # fmt: skip
    return path


def show(name: str, r: dict[str, Any], limit: dict[str, Any], rate: dict[str, Any]) -> None:
    if "error" in r:
        print(f"{name:24s} FAILED {r['error'][-600:]}")
        return
    ratio = limit["seconds"] / r["seconds"] if r["seconds"] else 0.0
    print(f"{name:24s} ({r['esc']})")
    print(f"{'':24s} {r['seconds']:8.2f} s  {r['records_per_s']:7d} rec/s  v{r['contract_version']}  "
          f"written {r['written']}/{r['records']}  dead {r['dead']}  ({ratio:.3f}x of DuckDB's own load)")  # fmt: skip
    st = r.get("structured_seconds")
    if st:
        print(f"{'':24s} structured records written at {st:.2f} s: {round(r['records'] / st):7d} rec/s to structured "
              f"completion; {r['records_per_s']} rec/s with vectors caught up; {r['columnar_files']} files columnar")
    own = r.get("embedder_on_chunks")
    if own:
        print(f"{'':24s} the embedder alone on this run's chunk inputs: {own} texts/s")
    if r.get("vector_seconds"):
        vps = r["vector_chunks"] / r["vector_seconds"]
        print(f"{'':24s} vector lane: {r['vector_chunks']} chunks in {r['vector_seconds']:.2f} s after the structured rows "
              f"(chunking, embedding, storing): {vps:.0f} vectors/s, {vps / (own or rate['texts_per_s']):.2f}x of the "
              f"embedder's own rate on them")  # fmt: skip
    print(f"{'':24s} peak RSS {r.get('rss_mb', '?')} MB")
    g = r.get("graph") or {}
    if g:
        print(f"{'':24s} nodes {sum(g['nodes'].values())} {g['nodes']}  stubs {g['stubs']}  source_records "
              f"{g['source_records']}  derived_from {g['derived_from']}  edges {g['edges']}")  # fmt: skip
        print(f"{'':24s} {g['chunks']} text chunks embedded: {g['chunks'] / rate['texts_per_s']:.1f} s of the embedder "
              "alone at its own rate")  # fmt: skip
    b = r.get("breakdown_s")
    if b:
        print(f"{'':24s} py-spy, all threads: {b['busy']} s busy (" + ", ".join(
            f"{k} {v} s" for k, v in b.items() if k not in ("busy", "idle")) + f"); {b['idle']} s idle waits")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sf", default="0.01", help="TPC-H scale factor (default 0.01)")
    ap.add_argument("--baseline", metavar="REF", help="also measure git ref REF (e.g. the branch point) in this run")
    ap.add_argument("--timeout", type=float, default=1800.0, help="seconds allowed per measurement")
    ap.add_argument("--profile", default="", help="run this checkout under cProfile and write the stats here")
    ap.add_argument("--spy", type=Path, help="run each measurement under py-spy (50 Hz), raw profiles into this folder, "
                    "and print where the time went")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(child(args.sf, args.profile)))
        return
    folder = tpch_dir(args.sf)
    checkouts = {"this checkout": REPO}
    base = worktree(args.baseline) if args.baseline else None
    if base is not None:
        checkouts = {f"baseline {args.baseline}": base, **checkouts}
    limit = duckdb_load(folder)
    rate = embedder_rate(folder)
    if not args.json:
        print(f"TPC-H SF {args.sf}: {limit['records']} records; embedder {rate['embedder']} alone "
              f"{rate['texts_per_s']} texts/s (TPC-H comments, batches of 64)")
        print(f"{'DuckDB read_csv (limit)':24s} {limit['seconds']:8.2f} s  {limit['records_per_s']:7d} rec/s", flush=True)
    results: dict[str, Any] = {"sf": args.sf, "duckdb_load": limit, "embedder": rate}
    try:
        for name, path in checkouts.items():
            prof = args.profile if path == REPO else ""
            spy = None
            if args.spy is not None:
                args.spy.mkdir(parents=True, exist_ok=True)
                spy = args.spy / f"{name.replace(' ', '_')}.raw"
            r = results[name] = measure(path, args.sf, args.timeout, prof, spy)
            if not args.json:
                show(name, r, limit, rate)
                sys.stdout.flush()
    finally:
        if base is not None:
            subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force", str(base)], capture_output=True)
    if args.json:
        print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
