"""bench/qa.py packs: finding a pack and its question files, ingesting it into a graph (memory, embedded or
Neo4j), and asking every question of a set (in process or over HTTP)."""

from __future__ import annotations

import json
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._qa_score import HTTP_TIMEOUT_S, _lat, _rate, score_set, scored
from esc.agents.query.agent import QueryAgent
from esc.agents.query.answer import Answer
from esc.agents.query.memstore import MemoryGraphStore, load_folder
from esc.agents.stores.base import GraphStore
from esc.contract.evolve import evolve
from esc.contract.model import Contract
from esc.streams.discover import discover

REPO = Path(__file__).resolve().parents[1]
EVAL = REPO / "tests" / "data" / "eval"
FLIGHTS = REPO / "tests" / "data" / "flights"
PACKS = ("chinook", "sakila", "northwind", "flights")
SET_ORDER = ("questions", "paraphrases")


# -- packs ------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Pack:
    name: str
    root: Path  # holds drop/ and the question files
    sets: dict[str, Path]  # set name (the file's stem) -> question file

    @property
    def drop(self) -> Path:
        return self.root / "drop"


def pack_root(name: str, eval_root: Path) -> Path:
    return FLIGHTS if name == "flights" else eval_root / "relational" / name


def question_files(root: Path, which: str) -> dict[str, Path]:
    """The question files of a pack folder (``questions`` first, then ``paraphrases``, then any other)."""
    files = {p.stem: p for p in sorted(root.glob("*.jsonl")) if p.is_file()}
    if which != "all":
        files = {k: v for k, v in files.items() if k == which}
    order = {s: i for i, s in enumerate(SET_ORDER)}
    return dict(sorted(files.items(), key=lambda kv: (order.get(kv[0], len(order)), kv[0])))


def find_pack(name: str, eval_root: Path, which: str) -> Pack | str:
    """The pack, or why it cannot run."""
    root = pack_root(name, eval_root)
    if not (root / "drop").is_dir():
        return f"no {root / 'drop'}"
    sets = question_files(root, which)
    if not sets:
        return f"no {'question files' if which == 'all' else which + '.jsonl'} in {root}"
    return Pack(name, root, sets)


def read_questions(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def record_ids(root: Path) -> set[tuple[str, str]]:
    from esc.contract.records import Record
    from esc.streams.events import envelope_for
    from esc.streams.readers import read, scan_with_errors

    out: set[tuple[str, str]] = set()
    files, _ = scan_with_errors(root)
    for sf in files:
        for item in read(sf):
            if isinstance(item, Record):
                env = envelope_for(item, sf.rel, "bench")
                out.add((env.source, env.resolved_id()))
    return out


# -- stores and ingest ------------------------------------------------------------------------------------------


def make_graph(backend: str, reset: bool) -> GraphStore:
    if backend == "memory":
        return MemoryGraphStore()
    if backend == "embedded":
        from esc.agents.stores.embedded.graph import EmbeddedGraphStore

        return EmbeddedGraphStore()
    if not reset:
        raise SystemExit(
            "--backend neo4j wipes the whole graph; pass --reset to confirm (never on a shared graph)"
        )
    from esc.agents.stores.neo4j import Neo4jGraphStore
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


def load(drop: Path, graph: GraphStore) -> tuple[Contract, float, int]:
    started = time.perf_counter()
    contract, _ = evolve(None, discover(drop).contract)
    written = load_folder(graph, drop, contract)
    return contract, time.perf_counter() - started, written


def load_embedded(name: str, drop: Path) -> tuple[Contract, GraphStore, float]:
    """The embedded backend ingests the folder like ``esc ingest DROP --embedded``: the in-process runtime (file
    connector, profiler, contract writer, extraction worker with backfills) into DuckDB stores in a temporary
    ESC_STATE_DIR; the contract is the one that runtime published (not a batch discovery)."""

    from esc.agents.stores.embedded import EmbeddedGraphStore, embedded_dir
    from esc.settings import Settings
    from esc.streams.runtime.inprocess import ingest_embedded, load_contract

    state = Path(tempfile.mkdtemp(prefix=f"qa-{name}-"))
    settings = Settings().replace(state_dir=state, app_id=name)
    started = time.perf_counter()
    ingest_embedded(settings, drop)
    contract = load_contract(state)
    if contract is None:
        raise SystemExit(f"{name}: the embedded runtime published no contract")
    return contract, EmbeddedGraphStore(embedded_dir(state) / "graph.duckdb"), time.perf_counter() - started


def _records(contract: Contract) -> int:
    return sum(spec.records for spec in contract.sources.values() if spec.parent is None)


@dataclass
class State:
    """One ingested pack: something to ask, and what it took to get there."""

    ask: Callable[[str], tuple[Answer, float]]  # question -> (answer, wall ms)
    backend: str
    ingest: str
    load_s: float | None = None
    grounding_s: float | None = None
    records: int | None = None
    close: Callable[[], None] = lambda: None
    contract: Contract | None = None


def open_state(name: str, drop: Path, backend: str, reset: bool) -> State:
    """Ingest ``drop`` once and ground an in-process agent over it."""
    if backend == "embedded":
        contract, graph, load_s = load_embedded(name, drop)
        ingest = "in-process runtime (esc ingest --embedded)"
    else:
        graph = make_graph(backend, reset)
        try:
            contract, load_s, _ = load(drop, graph)
        except BaseException:
            graph.close()
            raise
        ingest = "discover + load_folder"
    agent = QueryAgent(contract, graph)
    t0 = time.perf_counter()
    agent.grounding()
    ground_s = time.perf_counter() - t0

    def ask(question: str) -> tuple[Answer, float]:
        t = time.perf_counter()
        ans = agent.ask(question)
        return ans, (time.perf_counter() - t) * 1000

    return State(ask, backend, ingest, load_s, ground_s, _records(contract), graph.close, contract)


def http_asker(url: str) -> Callable[[str], tuple[Answer, float]]:
    """POST ``{"question": q}`` to ``url/v1/ask``; the reply is an AnswerEnvelope (an Answer plus id/time)."""
    endpoint = url.rstrip("/") + "/v1/ask"

    def ask(question: str) -> tuple[Answer, float]:
        body = json.dumps({"question": question}).encode("utf-8")
        req = urllib.request.Request(
            endpoint, data=body, headers={"Content-Type": "application/json"}, method="POST"
        )
        t = time.perf_counter()
        try:
            with urllib.request.urlopen(req, timeout=HTTP_TIMEOUT_S) as resp:
                raw = resp.read()
        except urllib.error.HTTPError as exc:  # a 400 still carries an abstaining envelope
            raw = exc.read()
        except (urllib.error.URLError, OSError) as exc:
            raise SystemExit(f"{endpoint} did not answer: {exc}") from exc
        wall = (time.perf_counter() - t) * 1000
        try:
            data = json.loads(raw.decode("utf-8"))
            return Answer.model_validate(data), wall
        except (ValueError, TypeError) as exc:
            reason = f"bench: unreadable reply from {endpoint}: {exc}: {raw[:200]!r}"
            return Answer.abstain(reason, 0), wall

    return ask


# -- one pack ---------------------------------------------------------------------------------------------------


def run_set(state: State, pack: Pack, set_name: str, real: set[tuple[str, str]] | None, verbose: bool
            ) -> dict[str, Any]:  # fmt: skip
    questions = read_questions(pack.sets[set_name])
    # warm-up: one cold pass (Neo4j plans each new query shape once; its plan cache keeps it)
    cold = [state.ask(q["question"])[0].latency_ms or 0.0 for q in questions]
    items = []
    for q in questions:
        ans, wall = state.ask(q["question"])  # the gold answer is only looked at below
        items.append(scored(q, ans, wall))
    report: dict[str, Any] = {
        "pack": pack.name,
        "set": set_name,
        "backend": state.backend,
        "ingest": state.ingest,
    }
    report.update(score_set(items))
    answered = [s for s in items if not s.abstained]
    cited = sum(bool(s.citations) for s in answered)
    covers = sum(set(s.q.get("sources") or []) <= {src for src, _ in s.citations} for s in answered)
    resolved = (
        sum(bool(s.citations) and all(c in real for c in s.citations) for s in answered)
        if real is not None
        else None
    )
    report["answered"] = len(answered)
    report["citation_rate"] = _rate(cited, len(answered))
    report["citations_resolve"] = _rate(resolved, len(answered)) if resolved is not None else None
    report["citations_cover_sources"] = _rate(covers, len(answered))
    lat = [s.latency_ms for s in items]
    det = [s.latency_ms for s in items if s.route in ("lookup", "traverse", "aggregate")]
    p50, p95 = _lat(lat)
    cold50, cold95 = _lat(cold)
    report["latency_ms"] = {"p50": p50, "p95": p95, "deterministic_p95": _lat(det)[1],
                            "cold_p50": cold50, "cold_p95": cold95}  # fmt: skip
    if state.backend == "http":
        report["latency_ms"]["http_p50"], report["latency_ms"]["http_p95"] = _lat([s.wall_ms for s in items])
    report["load_s"] = round(state.load_s, 2) if state.load_s is not None else None
    report["grounding_s"] = round(state.grounding_s, 3) if state.grounding_s is not None else None
    failures = [
        {"id": s.q.get("id"), "category": s.category, "question": s.q["question"], "gold": s.q.get("answer"),
         "got": s.answer, "route": s.route, "confidence": round(s.confidence, 3), "reason": s.reason}
        for s in items if not s.ok
    ]  # fmt: skip
    report["failures"] = failures if verbose else len(failures)
    return report


def run_pack(pack: Pack, backend: str, reset: bool, verbose: bool, http: str | None, stack: bool = False
             ) -> list[dict[str, Any]]:  # fmt: skip
    """Ingest and ground ``pack`` once (unless asking over HTTP) and run each of its question files."""
    if stack:
        from _qa_stack import StackPack  # bench/_qa_stack.py, beside this script

        with StackPack(pack.name, pack.drop) as running:
            state = State(http_asker(running.url), "stack", "esc up (Faust worker, Kafka -> Neo4j), POST /v1/ask",
                          load_s=running.ingest_s)  # fmt: skip
            real = record_ids(pack.drop)
            return [run_set(state, pack, s, real, verbose) for s in pack.sets]
    if http:
        state = State(http_asker(http), "http", f"pre-ingested, asked at {http.rstrip('/')}/v1/ask")
    else:
        state = open_state(pack.name, pack.drop, backend, reset)
    try:
        real = record_ids(pack.drop)
        return [run_set(state, pack, s, real, verbose) for s in pack.sets]
    finally:
        state.close()
