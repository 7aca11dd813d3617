"""An entity type the LLM pass adds over a written source gets its nodes, DERIVED_FROM and edges on every graph
backend (embedded DuckDB and Neo4j): the in-process runtime streams a small drop folder into the store under test
while the local OpenAI-compatible test server holds its answer; the version it then writes is back-filled by the
same ExtractionWorker replay the Faust worker runs (agents/extraction.py), and the type's example queries return
rows through the store's own compiler."""

from __future__ import annotations

import asyncio
import threading
import uuid
from pathlib import Path
from typing import Any

import pytest

from esc.agents.embedding import HashingEmbedder
from esc.agents.examples_runner import run_examples
from esc.agents.query.plan import Hop, NodePattern, QueryPlan, ReturnItem
from esc.agents.stores.base import GraphStore
from esc.settings import Settings
from esc.streams.runtime.inprocess import open_runtime
from tests.conformance.conftest import backend_of
from tests.fakes.openai_server import FakeOpenAI
from tests.unit.test_llm_stream import ROWS, good, write_drop


def _count(graph: GraphStore, label: str, rel: str | None = None, target: str | None = None) -> int:
    hops = [Hop(rel_type=rel, direction="out", target=NodePattern(var="n1", label=target))] if rel and target else []
    plan = QueryPlan(kind="count", start=NodePattern(var="n0", label=label), hops=hops,
                     returns=[ReturnItem(var="n0", agg="count", alias="n")], cite=["n0"])  # fmt: skip
    return int(graph.run_plan(plan)[0].values["n"])


def test_a_proposed_type_gets_its_graph_on_every_backend(
    graph_store: GraphStore, tmp_path: Path, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    from esc.agents.stores.embedded import EmbeddedVectorStore

    drop = write_drop(tmp_path / "drop")
    monkeypatch.setenv("ESC_LLM_TIMEOUT", "60")
    monkeypatch.setenv("ESC_LLM_RETRIES", "0")
    release = threading.Event()

    def held(request: dict[str, Any]) -> dict[str, Any]:
        assert release.wait(60)
        return good(request)

    graph = graph_store
    if backend_of(graph_store) == "neo4j":  # a label namespace of its own, dropped afterwards
        from esc.agents.stores.neo4j import Neo4jGraphStore, label_namespace

        app_id = f"tn{uuid.uuid4().hex[:10]}"
        graph = Neo4jGraphStore(settings.neo4j_uri, namespace=label_namespace(app_id))
    else:
        app_id = "tn"
    with FakeOpenAI([held, "{}"]) as server:
        monkeypatch.setenv("ESC_LLM_BASE_URL", server.base_url)
        local = Settings().replace(state_dir=tmp_path / "state", app_id=app_id, topic_prefix="esc")
        runtime, close = open_runtime(local, drop, graph=graph, vectors=EmbeddedVectorStore(tmp_path / "v.duckdb"),
                                      embedder=HashingEmbedder())  # fmt: skip
        try:
            async def run() -> None:
                await runtime.ingest_once()
                release.set()
                assert await asyncio.to_thread(runtime.writer.llm.wait, 30.0)
                await runtime.tick()
                await runtime.drain()
                await runtime.stop()

            asyncio.run(run())
            contract = runtime.contract
            people = contract.entity_for_source("people")
            (team,) = [e for e in contract.entities if e.source == "people" and e is not people]
            (rel,) = [r for r in contract.relationships if r.to_entity == team.name]
            assert _count(graph, team.name) == 4
            assert _count(graph, people.name, rel.name, team.name) == ROWS
            lookup = QueryPlan(kind="lookup", start=NodePattern(var="n0", label=team.name),
                               returns=[ReturnItem(var="n0", prop="team", alias="t")], cite=["n0"])  # fmt: skip
            rows = graph.run_plan(lookup)
            assert sorted(r.values["t"] for r in rows) == ["east", "north", "south", "west"]
            assert all(len(r.citations) == ROWS // 4 for r in rows)  # DERIVED_FROM every record of the team
            report, _ = run_examples(contract, graph)
            assert report.failed == 0 and any(r.entity == team.name for r in report.results)
        finally:
            close()
            if graph is not graph_store:
                graph.close()  # type: ignore[attr-defined]
                from tests.conformance.test_contract_examples_conformance import _drop_namespace

                _drop_namespace(settings.neo4j_uri, label_namespace(app_id))
