"""The example queries of every public pack's contract return results on Neo4j: each pack streams through the
in-process runtime into a Neo4j graph store (its own label namespace), the runtime runs the version's examples when
it lands (the contract carries the report), and they run again here through the Cypher compiler. The embedded
(DuckDB) half is tests/unit/test_contract_artifacts_packs.py."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

import pytest

from esc.agents.embedding import HashingEmbedder
from esc.agents.examples_runner import run_examples
from esc.contract.examples import example_queries
from esc.settings import Settings
from esc.streams.runtime.inprocess import open_runtime
from tests.integration.conftest import require
from tests.paths import RELATIONAL

PACKS = sorted(p.name for p in RELATIONAL.iterdir() if (p / "drop").is_dir())


def _drop_namespace(uri: str, ns: str) -> None:
    from neo4j import GraphDatabase

    from esc.agents.stores.cypher import ident

    with GraphDatabase.driver(uri, auth=None) as driver:
        driver.execute_query("MATCH (n) WHERE any(l IN labels(n) WHERE l STARTS WITH $ns) DETACH DELETE n", ns=ns)
        constraints, _, _ = driver.execute_query("SHOW CONSTRAINTS YIELD name, labelsOrTypes RETURN name, labelsOrTypes")
        for c in constraints:
            if any(str(label).startswith(ns) for label in c["labelsOrTypes"] or []):
                driver.execute_query(f"DROP CONSTRAINT {ident(c['name'])} IF EXISTS")


@pytest.mark.integration
@pytest.mark.parametrize("pack", PACKS)
def test_every_pack_s_example_queries_return_results_on_neo4j(pack: str, tmp_path: Path, settings: Settings) -> None:
    from esc.agents.stores.embedded import EmbeddedVectorStore
    from esc.agents.stores.neo4j import Neo4jGraphStore, label_namespace
    from esc.stack.neo4j import bolt_ping

    uri = settings.neo4j_uri
    require(settings, "neo4j", uri, lambda: bolt_ping(uri, timeout_s=5.0))
    app_id = f"ex{uuid.uuid4().hex[:10]}"
    ns = label_namespace(app_id)
    graph = Neo4jGraphStore(uri, namespace=ns)
    vectors = EmbeddedVectorStore(tmp_path / "vectors.duckdb")
    local = settings.replace(state_dir=tmp_path / "state", app_id=app_id, topic_prefix="esc")
    runtime, close = open_runtime(local, RELATIONAL / pack / "drop", graph=graph, vectors=vectors,
                                  embedder=HashingEmbedder())  # fmt: skip
    try:
        asyncio.run(runtime.ingest_once())
        contract = runtime.contract
        assert contract is not None and contract.entities
        examples = example_queries(contract)
        assert {e.kind for e in examples} == {"count", "lookup", "hop"}
        # the runtime checked the version when it landed, on this Neo4j store
        assert contract.examples is not None and contract.examples.version == contract.version
        assert contract.examples.ran == len(examples) and contract.examples.failed == 0, contract.examples
        report, runs = run_examples(contract, graph, "neo4j")
        assert not [(r.name, r.error) for r in report.results if not r.ok]
        counts = {r.example.entity: r.rows[0].values["n"] for r in runs if r.example.kind == "count"}
        assert all(n > 0 for n in counts.values()) and len(counts) == len(contract.entities)
    finally:
        close()
        graph.close()
        vectors.close()
        _drop_namespace(uri, ns)
