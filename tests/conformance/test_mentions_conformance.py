"""The mentions pack through each graph backend: the same MENTIONS links (precision and recall against the planted
truth) from DuckDB and from Neo4j (in a label namespace of its own, removed afterwards)."""

from __future__ import annotations

import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from esc.agents.embedding import HashingEmbedder
from esc.agents.ingest import Ingestor
from esc.agents.stores.base import GraphStore
from esc.agents.stores.embedded import EmbeddedVectorStore
from esc.contract.evolve import evolve
from esc.contract.records import Record
from esc.settings import Settings
from esc.streams.discover import discover
from esc.streams.events import envelope_for
from esc.streams.readers import read, scan_with_errors
from tests.integration.conftest import require
from tests.unit.prose.conftest import PACK, Ingested
from tests.unit.prose.test_mentions import found_links, planted_links


@pytest.fixture(params=["embedded", pytest.param("neo4j", marks=pytest.mark.integration)])
def graph(request: pytest.FixtureRequest, settings: Settings) -> Iterator[GraphStore]:
    if request.param == "embedded":
        from esc.agents.stores.embedded import EmbeddedGraphStore

        store: GraphStore = EmbeddedGraphStore()
        yield store
        store.close()
        return
    from esc.agents.stores.neo4j import Neo4jGraphStore
    from esc.stack.neo4j import bolt_ping

    uri = settings.neo4j_uri
    require(settings, "neo4j", uri, lambda: bolt_ping(uri, timeout_s=5.0))
    namespace = f"m{uuid.uuid4().hex[:8]}__"
    neo = Neo4jGraphStore(uri, namespace=namespace)
    try:
        yield neo
    finally:
        driver = neo._driver
        driver.execute_query("MATCH (n) WHERE any(l IN labels(n) WHERE l STARTS WITH $p) DETACH DELETE n", p=namespace)
        for c in driver.execute_query("SHOW CONSTRAINTS YIELD name, labelsOrTypes RETURN name, labelsOrTypes")[0]:
            if any(str(label).startswith(namespace) for label in c["labelsOrTypes"] or []):
                driver.execute_query(f"DROP CONSTRAINT `{c['name']}` IF EXISTS")
        neo.close()


def test_mentions_pack_links_alike_on_every_backend(graph: GraphStore, tmp_path: Path) -> None:
    import json

    shutil.copytree(PACK / "drop", tmp_path / "drop")
    contract, _ = evolve(None, discover(tmp_path / "drop").contract)
    vectors = EmbeddedVectorStore()
    ingestor = Ingestor(graph, vectors, HashingEmbedder(), "C", contract)
    files, _ = scan_with_errors(tmp_path / "drop")
    for sf in sorted(files, key=lambda f: f.rel):
        ingestor.handle([envelope_for(r, sf.rel, "conf") for r in read(sf) if isinstance(r, Record)])
    result = ingestor.link_mentions()
    assert result.chunks >= 60 and result.mentions > 300
    truth = json.loads((PACK / "truth.json").read_text(encoding="utf-8"))
    pack = Ingested(contract, graph, vectors, ingestor, truth)  # type: ignore[arg-type]
    found, planted = found_links(pack), planted_links(pack)
    assert len(found & planted) / len(found) >= 0.95 and len(found & planted) / len(planted) >= 0.9
    assert ingestor.link_mentions().chunks == 0  # nothing left to link under the same dictionary
    vectors.close()
