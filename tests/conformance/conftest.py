"""One suite, every backend: the same test bodies run against the embedded stores and the real stack.

``graph_store`` is parametrized over ``embedded`` (DuckDB in a temp dir) and ``neo4j``; ``vector_store`` over
``embedded`` and ``weaviate``. The real-stack params are marked ``integration`` and FAIL (never skip) when the
service is down, through the same ``require`` as tests/integration. Every test names its labels, sources and
collections with a fresh tag (``names``) and everything carrying that tag is removed from the real stack after it.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from esc.agents.stores.base import GraphStore, VectorStore
from esc.settings import Settings, load
from tests.integration.conftest import require

GRAPH_BACKENDS = ["embedded", pytest.param("neo4j", marks=pytest.mark.integration)]
VECTOR_BACKENDS = ["embedded", pytest.param("weaviate", marks=pytest.mark.integration)]


class Names:
    """Unique names for one test, remembered so the real stack can be cleaned up afterwards."""

    def __init__(self) -> None:
        self.tag = uuid.uuid4().hex[:10]
        self.labels: set[str] = set()
        self.sources: set[str] = set()
        self.collections: set[str] = set()

    def label(self, base: str) -> str:
        name = f"{base}_{self.tag}"
        self.labels.add(name)
        return name

    def source(self, base: str) -> str:
        name = f"{base}_{self.tag}"
        self.sources.add(name)
        return name

    def collection(self, base: str = "Conf") -> str:
        name = f"{base}_{self.tag}"
        self.collections.add(name)
        return name


@pytest.fixture
def names() -> Names:
    return Names()


@pytest.fixture(scope="session")
def settings() -> Settings:
    return load()


def _neo4j_cleanup(uri: str, names: Names) -> None:
    from neo4j import GraphDatabase

    from esc.agents.stores.cypher import ident

    with GraphDatabase.driver(uri, auth=None) as driver:
        for label in names.labels:
            driver.execute_query(f"MATCH (n:{ident(label)}) DETACH DELETE n")
        for source in names.sources:
            driver.execute_query(
                "MATCH (s:SourceRecord) WHERE s.sid STARTS WITH $prefix DETACH DELETE s",
                prefix=source + "\x1f",
            )
        constraints, _, _ = driver.execute_query(
            "SHOW CONSTRAINTS YIELD name, labelsOrTypes RETURN name, labelsOrTypes"
        )
        for c in constraints:
            if any(label in names.labels for label in c["labelsOrTypes"] or []):
                driver.execute_query(f"DROP CONSTRAINT {ident(c['name'])} IF EXISTS")


@pytest.fixture(params=GRAPH_BACKENDS)
def graph_store(
    request: pytest.FixtureRequest, tmp_path: Path, names: Names, settings: Settings
) -> Iterator[GraphStore]:
    if request.param == "embedded":
        from esc.agents.stores.embedded import EmbeddedGraphStore

        embedded = EmbeddedGraphStore(tmp_path / "graph.duckdb")
        try:
            yield embedded
        finally:
            embedded.close()
        return
    from esc.agents.stores.neo4j import Neo4jGraphStore
    from esc.stack.neo4j import bolt_ping

    uri = settings.neo4j_uri
    require(settings, "neo4j", uri, lambda: bolt_ping(uri, timeout_s=5.0))
    store = Neo4jGraphStore(uri)
    try:
        yield store
    finally:
        store.close()
        _neo4j_cleanup(uri, names)


@pytest.fixture(params=VECTOR_BACKENDS)
def vector_store(
    request: pytest.FixtureRequest, tmp_path: Path, names: Names, settings: Settings
) -> Iterator[Any]:
    """A VectorStore that also has ``delete_by_record`` and ``drop`` (both adapters do)."""
    if request.param == "embedded":
        from esc.agents.stores.embedded import EmbeddedVectorStore

        embedded = EmbeddedVectorStore(tmp_path / "vectors.duckdb")
        try:
            yield embedded
        finally:
            embedded.close()
        return
    from urllib.parse import urlparse

    from esc.agents.stores.weaviate import WeaviateVectorStore
    from esc.stack.process import http_ok, port_open

    url = urlparse(settings.weaviate_url)
    host, grpc_port = url.hostname or settings.host, settings.weaviate_grpc_port

    def ready() -> bool:
        return http_ok(f"{settings.weaviate_url}/v1/.well-known/ready") and port_open(host, grpc_port)

    require(settings, "weaviate", f"{settings.weaviate_url} (grpc {grpc_port})", ready)
    store = WeaviateVectorStore(settings.weaviate_url, grpc_port=grpc_port)
    try:
        yield store
    finally:
        for name in names.collections:
            if store._client.collections.exists(name):
                store.drop(name)
        store.close()


def backend_of(store: GraphStore | VectorStore) -> str:
    return type(store).__module__.rsplit(".", 1)[-1]
