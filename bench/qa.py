"""Question answering over the shared relational eval packs: exact match overall and by kind, citation rate,
latency p50/p95 (after a warm-up pass; the cold pass is reported too), with no LLM.

    .venv/bin/python bench/qa.py                          # in-memory graph, all three packs
    .venv/bin/python bench/qa.py --backend embedded       # ingested by the embedded runtime (esc ingest --embedded)
    .venv/bin/python bench/qa.py --backend neo4j --reset  # Neo4j from ESC_NEO4J_URI / the local stack
    .venv/bin/python bench/qa.py --part tatqa             # TAT-QA evidence recall@5: ours vs vector-only

``--backend neo4j`` WIPES THE WHOLE GRAPH (``MATCH (n) DETACH DELETE n``) before each pack, so it refuses to run
without ``--reset``; never point it at a graph others use.

Per pack: the contract comes from ``contract.discover`` + ``contract.evolve``; records are read by the contract
readers, wrapped by the file connector's ``envelope_for`` and written through ``agents.extractors.plan`` (the code
the Ingestor runs; vectors are not needed for these questions). The harness then asks every question through
``QueryAgent.ask`` and only afterwards compares with the gold answer (normalised exact match as the eval README
defines it). A citation *resolves* when its (source, record_id) is a record the pack's readers produced.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agents.query.agent import QueryAgent
from agents.query.memstore import MemoryGraphStore, load_folder
from agents.stores.base import GraphStore
from contract.discover import discover
from contract.evolve import evolve
from contract.model import Contract

EVAL = Path(__file__).resolve().parents[2] / "shared" / "eval"
PACKS = ("chinook", "sakila", "northwind")


def _num(v: Any) -> float | None:
    if isinstance(v, bool):
        return None
    if isinstance(v, int | float):
        return float(v)
    try:
        return float(str(v).strip())
    except ValueError:
        return None


def same(got: Any, gold: Any) -> bool:
    """Exact match after normalisation: strings trimmed and case-folded, numbers within 0.005, lists as sets
    (a one-element list equals its element)."""
    if isinstance(gold, list) or isinstance(got, list):
        a = got if isinstance(got, list) else [got]
        b = gold if isinstance(gold, list) else [gold]
        return len(a) == len(b) and {_key(x) for x in a} == {_key(x) for x in b}
    if got is None:
        return False
    ng, nd = _num(got), _num(gold)
    if ng is not None and nd is not None:
        return abs(ng - nd) < 0.005
    return str(got).strip().casefold() == str(gold).strip().casefold()


def _key(v: Any) -> str:
    n = _num(v)
    return f"{n:.2f}" if n is not None else str(v).strip().casefold()


def record_ids(root: Path) -> set[tuple[str, str]]:
    from contract.readers import read, scan_with_errors
    from contract.records import Record
    from streams.connectors.file_watcher import envelope_for

    out: set[tuple[str, str]] = set()
    files, _ = scan_with_errors(root)
    for sf in files:
        for item in read(sf):
            if isinstance(item, Record):
                env = envelope_for(item, sf.rel, "bench")
                out.add((env.source, env.resolved_id()))
    return out


def make_graph(backend: str, reset: bool) -> GraphStore:
    if backend == "memory":
        return MemoryGraphStore()
    if backend == "embedded":
        from agents.stores.embedded.graph import EmbeddedGraphStore

        return EmbeddedGraphStore()
    if not reset:
        raise SystemExit(
            "--backend neo4j wipes the whole graph; pass --reset to confirm (never on a shared graph)"
        )
    from agents.stores.neo4j import Neo4jGraphStore
    from esc.settings import Settings

    store = Neo4jGraphStore(Settings().neo4j_uri)
    driver = store._driver  # the bench owns this graph: wipe it in batches
    while True:
        records, _, _ = driver.execute_query(
            "MATCH (n) WITH n LIMIT 20000 DETACH DELETE n RETURN count(*) AS c"
        )
        if not records or records[0]["c"] == 0:
            break
    return store


def load(pack: str, graph: GraphStore) -> tuple[Contract, float]:
    root = EVAL / "relational" / pack / "drop"
    started = time.perf_counter()
    contract, _ = evolve(None, discover(root).contract)
    load_folder(graph, root, contract)
    return contract, time.perf_counter() - started


def load_embedded(pack: str) -> tuple[Contract, GraphStore, float]:
    """The embedded backend ingests the pack like ``esc ingest DROP --embedded``: the in-process runtime (file
    connector, profiler, contract writer, extraction worker with backfills) into DuckDB stores in a temporary
    ESC_STATE_DIR; the contract is the one that runtime published (not a batch discovery)."""
    import dataclasses
    import tempfile

    from agents.stores.embedded import EmbeddedGraphStore, embedded_dir
    from esc.settings import Settings
    from streams.runtime.inprocess import ingest_embedded, load_contract

    state = Path(tempfile.mkdtemp(prefix=f"qa-{pack}-"))
    settings = dataclasses.replace(Settings(), state_dir=state, app_id=pack)
    started = time.perf_counter()
    ingest_embedded(settings, EVAL / "relational" / pack / "drop")
    contract = load_contract(state)
    if contract is None:
        raise SystemExit(f"{pack}: the embedded runtime published no contract")
    return contract, EmbeddedGraphStore(embedded_dir(state) / "graph.duckdb"), time.perf_counter() - started


def run_pack(pack: str, backend: str, reset: bool, verbose: bool) -> dict[str, Any]:
    if backend == "embedded":
        contract, graph, load_s = load_embedded(pack)
    else:
        graph = make_graph(backend, reset)
    try:
        if backend != "embedded":
            contract, load_s = load(pack, graph)
        real = record_ids(EVAL / "relational" / pack / "drop")
        agent = QueryAgent(contract, graph)
        t0 = time.perf_counter()
        agent.grounding()
        ground_s = time.perf_counter() - t0
        questions = [json.loads(line) for line in (EVAL / "relational" / pack / "questions.jsonl").open()]
        # warm-up: one cold pass (Neo4j plans each new query shape once; its plan cache keeps it)
        cold = [agent.ask(q["question"]).latency_ms or 0.0 for q in questions]
        results = []
        for q in questions:
            ans = agent.ask(q["question"])  # the gold answer is only looked at below
            results.append((q, ans))
    finally:
        graph.close()
    by_kind: dict[str, list[int]] = {}
    cited = resolved = answered = covers = 0
    latencies: dict[str, list[float]] = {}
    failures = []
    for q, ans in results:
        ok = ans.route != "abstain" and same(ans.answer, q["answer"])
        k = by_kind.setdefault(q["kind"], [0, 0])
        k[0] += ok
        k[1] += 1
        latencies.setdefault(ans.route, []).append(ans.latency_ms or 0.0)
        if ans.route != "abstain":
            answered += 1
            if ans.citations:
                cited += 1
            if ans.citations and all((c.source, c.record_id) in real for c in ans.citations):
                resolved += 1
            if set(q.get("sources") or []) <= {c.source for c in ans.citations}:
                covers += 1
        if not ok:
            failures.append({"id": q["id"], "question": q["question"], "gold": q["answer"], "got": ans.answer,
                             "route": ans.route, "reason": ans.reason})  # fmt: skip
    all_lat = [x for xs in latencies.values() for x in xs]
    det = [x for r, xs in latencies.items() if r in ("lookup", "traverse", "aggregate") for x in xs]
    total = sum(v[1] for v in by_kind.values())
    report = {
        "pack": pack,
        "backend": backend,
        "ingest": "in-process runtime (esc ingest --embedded)"
        if backend == "embedded"
        else "discover + load_folder",
        "questions": total,
        "exact_match": round(sum(v[0] for v in by_kind.values()) / max(total, 1), 4),
        "by_kind": {k: round(v[0] / v[1], 4) for k, v in sorted(by_kind.items())},
        "answered": answered,
        "citation_rate": round(cited / max(answered, 1), 4),
        "citations_resolve": round(resolved / max(answered, 1), 4),
        "citations_cover_sources": round(covers / max(answered, 1), 4),
        "latency_ms": {
            "p50": round(statistics.median(all_lat), 2) if all_lat else None,
            "p95": round(_p95(all_lat), 2) if all_lat else None,
            "deterministic_p95": round(_p95(det), 2) if det else None,
            "cold_p50": round(statistics.median(cold), 2) if cold else None,
            "cold_p95": round(_p95(cold), 2) if cold else None,
        },
        "load_s": round(load_s, 2),
        "grounding_s": round(ground_s, 3),
        "failures": failures if verbose else len(failures),
    }
    return report


def _p95(xs: list[float]) -> float:
    if not xs:
        return 0.0
    s = sorted(xs)
    return s[min(len(s) - 1, round(0.95 * (len(s) - 1)))]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--backend", choices=["memory", "embedded", "neo4j"], default="memory")
    ap.add_argument("--reset", action="store_true", help="neo4j only: wipe the whole graph before each pack")
    ap.add_argument("--pack", action="append", choices=PACKS, help="pack(s) to run (default: all three)")
    ap.add_argument("--verbose", action="store_true", help="list every failed question")
    ap.add_argument("--json", action="store_true", help="print one JSON report per pack")
    ap.add_argument("--part", choices=["relational", "tatqa", "all"], default="all",
                    help="relational packs (EM), TAT-QA (evidence recall@5, bench/qa_tatqa.py), or both")  # fmt: skip
    args = ap.parse_args()
    if args.part in ("tatqa", "all"):
        import qa_tatqa  # bench/qa_tatqa.py, beside this script

        tat = qa_tatqa.run(EVAL / "tatqa", args.backend, args.reset, args.verbose, make_graph)
        if args.json:
            print(json.dumps(tat, ensure_ascii=False, default=str))
        else:
            qa_tatqa.print_report(tat)
            for t in tat.get("traces", []):
                print("   TRACE", json.dumps(t, ensure_ascii=False, default=str))
    if args.part == "tatqa":
        return
    for pack in args.pack or PACKS:
        report = run_pack(pack, args.backend, args.reset, args.verbose)
        if args.json:
            print(json.dumps(report, ensure_ascii=False, default=str))
            continue
        lat = report["latency_ms"]
        print(
            f"{pack:10s} [{args.backend}: {report['ingest']}] EM {report['exact_match']:.3f} ({report['questions']} q)  "
            f"cited {report['citation_rate']:.3f} resolve {report['citations_resolve']:.3f} "
            f"cover {report['citations_cover_sources']:.3f}  p50 {lat['p50']} ms p95 {lat['p95']} ms "
            f"(deterministic p95 {lat['deterministic_p95']} ms; cold pass p50 {lat['cold_p50']} p95 {lat['cold_p95']} ms)"
            f"  load {report['load_s']} s"
        )
        print("           by kind: " + ", ".join(f"{k} {v:.3f}" for k, v in report["by_kind"].items()))
        if args.verbose:
            for f in report["failures"]:
                print("   FAIL", json.dumps(f, ensure_ascii=False, default=str))


if __name__ == "__main__":
    main()
