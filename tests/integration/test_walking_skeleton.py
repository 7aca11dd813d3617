"""Walking skeleton, end to end on the real stack: drop a CSV -> esc.records -> Neo4j + Weaviate -> Prometheus."""

from __future__ import annotations

import json
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from esc.contract.entities import entity_name
from esc.settings import load
from tests.integration.worker import Worker, poll

pytestmark = pytest.mark.integration

BIO = "{} was a pioneer of computing. Their work still shapes how programs are written today."
ROWS = [("1", "Ada Lovelace", "ada@example.org"), ("2", "Alan Turing", "alan@example.org"), ("3", "Grace Hopper", "")]


@pytest.fixture
def worker(tmp_path: Path) -> Iterator[Worker]:
    from esc.stack import register_target, unregister_target

    w = Worker(tmp_path).start()
    target = f"skeleton-{w.run}"
    register_target(load(), target, f"127.0.0.1:{w.web_port}")  # Prometheus scrapes this worker's /metrics
    try:
        yield w
    finally:
        unregister_target(load(), target)
        w.stop()


def test_csv_drop_reaches_neo4j_weaviate_and_prometheus(
    kafka_bootstrap: str, neo4j_driver: Any, weaviate_client: Any, prometheus_url: str, worker: Worker
) -> None:
    from esc.agents.embedding import get_embedder
    from esc.agents.stores.neo4j import Neo4jGraphStore
    from esc.agents.stores.weaviate import WeaviateVectorStore, collection_name

    settings = load()
    source = f"Scientist{worker.run}"
    label = entity_name(source)
    lines = ["id,name,email,bio"] + [f'{i},{n},{e},"{BIO.format(n)}"' for i, n, e in ROWS]
    tmp = worker.data / f".{source}.csv.part"
    tmp.write_text("\n".join(lines) + "\n", "utf-8")
    tmp.rename(worker.data / f"{source}.csv")  # appears atomically, as a well-behaved producer would do

    graph = Neo4jGraphStore(settings.neo4j_uri, namespace=worker.label(""))  # the worker's graph
    vectors = WeaviateVectorStore(settings.weaviate_url, grpc_port=settings.weaviate_grpc_port)
    collection = collection_name(worker.app_id)
    try:
        poll(lambda: graph.count(label), lambda c: c == len(ROWS), 90, f"{len(ROWS)} :{label} nodes", worker.log)
        rows = graph.read(
            f"MATCH (n:`{worker.label(label)}`)-[:DERIVED_FROM]->(s:`{worker.label('SourceRecord')}`) "
            "RETURN n.name AS name, n.email AS email, n.id AS id, s.source AS source, s.location AS location "
            "ORDER BY name"
        )
        assert [r["name"] for r in rows] == sorted(r[1] for r in ROWS)
        assert sorted(r["id"] for r in rows) == [1, 2, 3]  # typed by the contract: an int identity key
        assert all(r["source"] == source for r in rows)
        assert all(r["location"].startswith(f"{source}.csv:row=") for r in rows)
        assert {r["email"] for r in rows} == {"ada@example.org", "alan@example.org", None}

        poll(lambda: vectors.count(collection), lambda c: c == len(ROWS), 90, "Weaviate objects", worker.log)
        hits = vectors.near_vector(collection, get_embedder().embed_one("Grace Hopper, computing pioneer").tolist(), 1)
        assert hits and "Grace Hopper" in hits[0]["text"] and hits[0]["source"] == source

        query = f'sum(esc_records_in_total{{source="{source}"}})'
        url = f"{prometheus_url}/api/v1/query?" + urllib.parse.urlencode({"query": query})

        def prom() -> float:
            with urllib.request.urlopen(url, timeout=5) as resp:
                result = json.load(resp)["data"]["result"]
            return float(result[0]["value"][1]) if result else 0.0

        poll(prom, lambda v: v >= len(ROWS), 45, "the records counter in Prometheus", worker.log)
    finally:
        graph.close()
        neo4j_driver.execute_query(
            f"MATCH (n:`{worker.label(label)}`) OPTIONAL MATCH (n)-[:DERIVED_FROM]->(s) DETACH DELETE n, s"
        )
        if vectors.count(collection):
            vectors.drop(collection)
        vectors.close()
