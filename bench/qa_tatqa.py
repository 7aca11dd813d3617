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

Evidence recall@5: the gold answer appears in the text of the top-5 evidence: spans by normalised string match
(every span of a multi-span answer), numbers (arithmetic/count, numeric spans) by value, also at the scale's
magnitude (``scale`` thousand/million/billion) and with the sign dropped (tables show negatives in parentheses).
Arithmetic answers are computed, so they rarely appear verbatim in any evidence; the report splits by type.
"""

from __future__ import annotations

import json
import re
import shutil
import statistics
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path, PurePath
from typing import Any

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

SCALES = {"": 1.0, "thousand": 1e3, "million": 1e6, "billion": 1e9, "percent": 1.0}
_NUM = re.compile(r"\(?-?\$?\s?\d[\d,]*(?:\.\d+)?%?\)?")


def _norm(text: str) -> str:
    text = str(text).casefold().replace("’", "'").replace("–", "-").replace("—", "-")
    return " ".join(re.sub(r"[^\w%.\-']+", " ", text).split())


def _number(text: str) -> float | None:
    t = str(text).strip()
    neg = (t.startswith("(") and t.endswith(")")) or t.startswith("-")
    digits = re.sub(r"[^\d.]", "", t)
    if not digits or digits.count(".") > 1 or not any(c.isdigit() for c in digits):
        return None
    try:
        value = float(digits.strip("."))
    except ValueError:
        return None
    return -value if neg else value


def numbers_in(text: str) -> set[float]:
    out = set()
    for m in _NUM.finditer(text):
        n = _number(m.group(0))
        if n is not None:
            out.add(round(abs(n), 4))
    return out


def _num_found(gold: float, scale: str, found: set[float]) -> bool:
    targets = {abs(gold), abs(gold) * SCALES.get(scale, 1.0)}
    return any(
        abs(t - f) <= max(1e-6, 5e-4 * abs(t)) or round(t, 2) == round(f, 2) for t in targets for f in found
    )


def answer_in(q: dict[str, Any], texts: list[str]) -> bool:
    """Is the gold answer in the evidence texts (see the module docstring)?"""
    blob = "\n".join(texts)
    norm_blob = _norm(blob)
    found = numbers_in(blob)
    answer = q["answer"]
    spans = answer if isinstance(answer, list) else [answer]
    if not spans:
        return False
    for span in spans:
        if isinstance(span, int | float):
            if not _num_found(float(span), q.get("scale", ""), found):
                return False
            continue
        s = str(span).strip()
        n = _number(s) if re.fullmatch(r"[\s$()%\-\d.,]+", s) else None
        if n is not None:
            if not _num_found(n, q.get("scale", ""), found):
                return False
        elif _norm(s) not in norm_blob:
            return False
    return True


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
            if verbose and scope_name == "corpus":
                misses.append(_trace(q, ours, base))
    report: dict[str, Any] = {"questions": len(questions), "k": k}
    for scope_name, per in results.items():
        report[scope_name] = {
            name: {key: round(sum(v) / len(v), 4) for key, v in sorted(by.items())}
            for name, by in per.items()
        }
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


def run(
    tatqa: Path, backend: str, reset: bool, verbose: bool, make_graph: Callable[[str, bool], GraphStore]
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
        return report
    finally:
        if backend == "neo4j":
            vectors.drop(collection)
        graph.close()
        vectors.close()
        shutil.rmtree(tmp, ignore_errors=True)


def print_report(report: dict[str, Any]) -> None:
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
