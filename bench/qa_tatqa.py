"""TAT-QA part of bench/qa.py: evidence recall@5 of our schema-routed retrieval vs a vector-only baseline.

Ingest: the 80 tables (one CSV source each) and the docs corpus of the TAT-QA eval pack go through discover +
evolve + the Ingestor (graph rows; document chunks embedded into the collection). Each table row is also embedded
into the same collection as one text object (its cells joined with `` | ``), so the baseline can retrieve table
evidence too: both methods search the same collection.

Per question (text only; the gold answer is only read when scoring):
- ours: ``QueryAgent.retrieve`` (row lookup by question terms, schema routing of sources, boosted vector hits,
  reciprocal rank fusion; agents/query/retrieval.py);
- baseline: plain ``near_vector`` over the collection.
Both return cited records as evidence (several chunks of one record, e.g. a document's title and text, are one
piece of evidence with their texts joined), so top-5 means five records for both.

Scopes, the same for both: ``corpus`` (all 80 contexts) and ``context`` (only the question's own table and doc,
as TAT-QA poses its questions; the filter is applied to both methods' candidates).

Paragraph recall@5 (the issue's measure): the share of the paragraphs that hold the answer (``rel_paragraphs``)
found in the top-5 evidence when one piece of evidence is one chunk or one table row (``unit="chunk"``) for both
methods. A paragraph counts as found when a retrieved chunk overlaps it by at least half of the paragraph or half of
the chunk (a whole-document chunk holds every paragraph: the characters of evidence per question are printed beside,
since with 8,000-character chunks the evidence is whole documents). Questions without a relevant paragraph (answers
from the table only) are not counted. ``--chunks both`` runs it with today's token chunks and with the old
8,000-character chunks (500 overlap, the text cut at 256 word pieces by the embedder as it always was).

Evidence recall@5 (answer in evidence): the gold answer appears in the text of the top-5 evidence: spans by normalised string match
(every span of a multi-span answer), numbers (arithmetic/count, numeric spans) by value, also at the scale's
magnitude (``scale`` thousand/million/billion) and with the sign dropped (tables show negatives in parentheses).
Arithmetic answers are computed, so they rarely appear verbatim in any evidence; the report splits by type.
"""

from __future__ import annotations

import json
import shutil
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path, PurePath
from typing import Any

from esc.agents.chunking import Chunk, chunk_text
from esc.agents.embedding import Embedder, get_embedder
from esc.agents.ingest import Ingestor
from esc.agents.query.agent import QueryAgent
from esc.agents.query.retrieval import Evidence, vector_only
from esc.agents.stores.base import GraphStore, VectorStore
from esc.agents.types import SourceRecordRef, TextObject
from esc.contract.evolve import evolve
from esc.contract.records import Record
from esc.streams.discover import discover
from esc.streams.events import envelope_for
from esc.streams.readers import read, scan_with_errors

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _tatqa_score import answer_in, paragraphs_found


def _drop_folder(tatqa: Path) -> Path:
    """Tables and docs only (not the question files), copied: the scanner does not follow symlinks."""
    drop = Path(tempfile.mkdtemp(prefix="esc-tatqa-"))
    shutil.copytree(tatqa / "tables", drop / "tables")
    shutil.copytree(tatqa / "docs", drop / "docs")
    return drop


def _row_objects(drop: Path, contract: Any, embedder: Embedder, collection: str) -> list[TextObject]:
    files, _ = scan_with_errors(drop)
    objects = []
    for sf in files:
        if sf.rel.startswith("docs/"):
            continue
        for item in read(sf):
            if not isinstance(item, Record):
                continue
            env = envelope_for(item, sf.rel, "bench")
            cells = [str(v) for v in env.payload.values() if v not in (None, "")]
            if not cells:
                continue
            rid = env.resolved_id()
            objects.append(
                TextObject(
                    object_id=str(uuid.uuid5(uuid.NAMESPACE_URL, f"{collection}/{env.source}/{rid}/row")),
                    text=" | ".join(cells),
                    provenance=SourceRecordRef(source=env.source, record_id=rid, location=str(env.location.get("text") or rid), file=sf.rel),
                    contract_version=contract.version,
                )
            )  # fmt: skip
    vecs = embedder.embed([o.text for o in objects])
    for obj, vec in zip(objects, vecs, strict=True):
        obj.vector = [float(x) for x in vec]
    return objects


def ingest(
    tatqa: Path, graph: GraphStore, vectors: VectorStore, embedder: Embedder, collection: str
) -> tuple[QueryAgent, dict[str, Any]]:
    started = time.perf_counter()
    drop = _drop_folder(tatqa)
    try:
        contract, _ = evolve(None, discover(drop).contract)
        ingestor = Ingestor(graph, vectors, embedder, collection, contract)
        files, _ = scan_with_errors(drop)
        texts = 0
        for sf in files:
            envs = [envelope_for(r, sf.rel, "bench") for r in read(sf) if isinstance(r, Record)]
            result = ingestor.handle(envs)
            texts += result.texts
        rows = _row_objects(drop, contract, embedder, collection)
        vectors.ensure_collection(collection)
        vectors.upsert(collection, rows)
    finally:
        shutil.rmtree(drop, ignore_errors=True)
    agent = QueryAgent(contract, graph, vectors, embedder, collection)
    t0 = time.perf_counter()
    agent.row_index()
    stats = {
        "sources": len(contract.sources),
        "row_objects": len(rows),
        "collection_objects": vectors.count(collection) if hasattr(vectors, "count") else None,
        "ingest_s": round(time.perf_counter() - started, 2),
        "row_index_s": round(time.perf_counter() - t0, 2),
        "embedder": type(embedder).__name__,
    }
    return agent, stats


def _scope_of(uid: str) -> Callable[[str, str], bool]:
    def scope(source: str, file: str) -> bool:
        return source == uid or PurePath(file.split(":", 1)[0]).stem == uid

    return scope


def evaluate(tatqa: Path, agent: QueryAgent, k: int = 5, verbose: bool = False) -> dict[str, Any]:
    questions = [json.loads(line) for line in (tatqa / "questions.jsonl").open(encoding="utf-8")]
    assert agent.vectors is not None and agent.embedder is not None and agent.collection
    docs = {p.stem: p.read_text(encoding="utf-8") for p in (tatqa / "docs").glob("*.txt")}
    para: dict[str, dict[str, list[float]]] = {}
    chars: dict[str, dict[str, list[int]]] = {}
    results: dict[str, dict[str, dict[str, list[int]]]] = {}
    latency: dict[str, list[float]] = {"ours": [], "baseline": []}
    misses = []
    for scope_name in ("corpus", "context"):
        per = results.setdefault(scope_name, {"ours": {}, "baseline": {}})
        for q in questions:
            scope = _scope_of(q["context_uid"]) if scope_name == "context" else None
            t0 = time.perf_counter()
            pool = 10_000 if scope else 50  # scoped: both methods rank the whole collection, then filter
            ours = agent.retrieve(q["question"], k=k, scope=scope, pool=pool)  # the question text only
            t1 = time.perf_counter()
            base = vector_only(q["question"], agent.vectors, agent.embedder, agent.collection, k=k, scope=scope,
                               pool=pool)  # fmt: skip
            t2 = time.perf_counter()
            if scope_name == "corpus":
                latency["ours"].append((t1 - t0) * 1000)
                latency["baseline"].append((t2 - t1) * 1000)
            for name, evidence in (("ours", ours), ("baseline", base)):
                hit = int(answer_in(q, [e.text for e in evidence]))
                for key in (
                    "all",
                    q["answer_type"],
                    "extractive" if q["answer_type"] != "arithmetic" else None,
                ):
                    if key is not None:
                        per[name].setdefault(key, []).append(hit)
            gold = {(q["context_uid"], int(p)) for p in q.get("rel_paragraphs") or []}
            if gold:
                ours_c = agent.retrieve(q["question"], k=k, scope=scope, pool=pool, unit="chunk")
                base_c = vector_only(q["question"], agent.vectors, agent.embedder, agent.collection, k=k, scope=scope,
                                     pool=pool, unit="chunk")  # fmt: skip
                for name, evidence in (("ours", ours_c), ("baseline", base_c)):
                    got = paragraphs_found(evidence, docs)
                    para.setdefault(scope_name, {}).setdefault(name, []).append(len(gold & got) / len(gold))
                    chars.setdefault(scope_name, {}).setdefault(name, []).append(sum(len(e.text) for e in evidence))
            if verbose and scope_name == "corpus":
                misses.append(_trace(q, ours, base))
    report: dict[str, Any] = {"questions": len(questions), "k": k}
    for scope_name, per in results.items():
        report[scope_name] = {
            name: {key: round(sum(v) / len(v), 4) for key, v in sorted(by.items())}
            for name, by in per.items()
        }
    report["paragraph_recall"] = {sc: {n: round(sum(v) / len(v), 4) for n, v in by.items()} for sc, by in para.items()}
    report["paragraph_questions"] = len(next(iter(next(iter(para.values())).values()))) if para else 0
    report["evidence_chars"] = {sc: {n: round(statistics.mean(v)) for n, v in by.items()} for sc, by in chars.items()}
    report["latency_ms_p50"] = {n: round(statistics.median(v), 2) for n, v in latency.items() if v}
    if verbose:
        report["traces"] = misses
    return report


def _trace(q: dict[str, Any], ours: list[Evidence], base: list[Evidence]) -> dict[str, Any]:
    return {
        "id": q["id"], "question": q["question"], "gold": q["answer"], "type": q["answer_type"],
        "ours": [(e.via, e.source[:12], e.text[:80]) for e in ours],
        "baseline": [(e.source[:12], e.text[:80]) for e in base],
        "ours_hit": answer_in(q, [e.text for e in ours]), "baseline_hit": answer_in(q, [e.text for e in base]),
    }  # fmt: skip


def old_chunks(text: str, field: str | None = None, counter: object = None) -> list[Chunk]:
    """The chunking before issue 17: 8,000 characters, 500 overlapping (the embedder read the first 256 pieces)."""
    return chunk_text(text, 8000, 500)


@contextmanager
def chunking(kind: str) -> Iterator[None]:
    """``tokens`` (what ESC does) or ``chars8000`` (the old chunks), for the extractor and the lexical index alike."""
    if kind == "tokens":
        yield
        return
    from esc.agents import extractors
    from esc.agents.query import chunk_index

    saved = extractors.chunk_for_embedding, chunk_index.chunk_for_embedding
    extractors.chunk_for_embedding = chunk_index.chunk_for_embedding = old_chunks  # type: ignore[assignment]
    try:
        yield
    finally:
        extractors.chunk_for_embedding, chunk_index.chunk_for_embedding = saved


def run(
    tatqa: Path, backend: str, reset: bool, verbose: bool, make_graph: Callable[[str, bool], GraphStore],
    chunks: str = "both",
) -> dict[str, Any]:
    """The report of today's chunking, with ``chunks_8000`` beside it (the old chunking's report) when ``both``."""
    report = _run(tatqa, backend, reset, verbose, make_graph, "tokens")
    if chunks == "both":
        with chunking("chars8000"):
            report["chunks_8000"] = _run(tatqa, backend, reset, False, make_graph, "chars8000")
    return report


def _run(
    tatqa: Path, backend: str, reset: bool, verbose: bool, make_graph: Callable[[str, bool], GraphStore], kind: str
) -> dict[str, Any]:
    embedder = get_embedder()
    collection = f"TatqaBench_{uuid.uuid4().hex[:8]}"
    tmp = Path(tempfile.mkdtemp(prefix="esc-tatqa-vec-"))
    vectors: Any
    if backend == "neo4j":
        from esc.agents.stores.weaviate import WeaviateVectorStore
        from esc.settings import Settings

        settings = Settings()
        vectors = WeaviateVectorStore(settings.weaviate_url, grpc_port=settings.weaviate_grpc_port)
    else:
        from esc.agents.stores.embedded import EmbeddedVectorStore

        vectors = EmbeddedVectorStore(tmp / "vectors.duckdb")
    graph = make_graph(backend, reset)
    try:
        agent, stats = ingest(tatqa, graph, vectors, embedder, collection)
        report = evaluate(tatqa, agent, verbose=verbose)
        report.update(stats)
        report["backend"] = backend
        report["chunking"] = kind
        return report
    finally:
        if backend == "neo4j":
            vectors.drop(collection)
        graph.close()
        vectors.close()
        shutil.rmtree(tmp, ignore_errors=True)


def print_report(report: dict[str, Any]) -> None:
    _print_one(report)
    old = report.get("chunks_8000")
    if old:
        _print_one(old)
        for scope in ("corpus", "context"):
            new_p, old_p = report["paragraph_recall"][scope], old["paragraph_recall"][scope]
            print(f"  paragraph recall@{report['k']} [{scope:7s}] ours: token chunks {new_p['ours']:.3f} vs 8,000-char "
                  f"chunks {old_p['ours']:.3f}; vector-only: {new_p['baseline']:.3f} vs {old_p['baseline']:.3f}")


def _print_one(report: dict[str, Any]) -> None:
    print(f"tatqa chunking={report['chunking']}")
    for scope in ("corpus", "context"):
        p, c = report["paragraph_recall"][scope], report["evidence_chars"][scope]
        print(f"  paragraph recall@{report['k']} [{scope:7s}] ours {p['ours']:.3f} vs vector-only {p['baseline']:.3f} "
              f"(+{100 * (p['ours'] - p['baseline']):.1f} points; {report['paragraph_questions']} questions with a "
              f"relevant paragraph; evidence {c['ours']} vs {c['baseline']} characters per question)")
    print(
        f"tatqa      [{report['backend']}] {report['questions']} q, {report['sources']} sources, "
        f"{report['collection_objects']} objects ({report['row_objects']} table rows), embedder {report['embedder']}, "
        f"ingest {report['ingest_s']} s"
    )
    for scope in ("corpus", "context"):
        o, b = report[scope]["ours"], report[scope]["baseline"]
        print(
            f"  evidence recall@{report['k']} [{scope:7s}] ours {o['all']:.3f} vs vector-only {b['all']:.3f}   "
            f"(extractive {o.get('extractive', 0):.3f} vs {b.get('extractive', 0):.3f}; "
            + ", ".join(
                f"{t} {o.get(t, 0):.3f}/{b.get(t, 0):.3f}"
                for t in ("span", "multi-span", "count", "arithmetic")
            )
            + ")"
        )
    lat = report["latency_ms_p50"]
    print(f"  retrieval p50: ours {lat.get('ours')} ms, vector-only {lat.get('baseline')} ms")


def main(argv: list[str] | None = None) -> int:
    """``python bench/qa_tatqa.py [--chunks both|tokens] [--backend memory|embedded]`` (bench/qa.py --part tatqa
    runs the same)."""
    import argparse
    import sys

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--backend", choices=["memory", "embedded"], default="memory")
    ap.add_argument("--chunks", choices=["both", "tokens"], default="both")
    ap.add_argument("--verbose", action="store_true")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from qa import EVAL, make_graph  # bench/qa.py, beside this script

    report = run(EVAL / "tatqa", args.backend, False, args.verbose, make_graph, args.chunks)
    if args.json:
        print(json.dumps(report, default=str))
    else:
        print_report(report)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
