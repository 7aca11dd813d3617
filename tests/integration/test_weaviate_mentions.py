"""Weaviate chunks carry the entity refs their MENTIONS found, and vector search filtered to an entity returns exactly
the chunks the graph links to it (the mentions pack, linked over the embedded graph, vectors in a collection of its
own on the stack's Weaviate, dropped afterwards). The embedded store's twin: tests/unit/prose/test_vector_mentions.py.
"""

from __future__ import annotations

import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from esc.agents.embedding import HashingEmbedder
from esc.agents.ingest import Ingestor
from esc.agents.mentions_vectors import entity_ref
from esc.agents.query.agent import QueryAgent
from esc.agents.query.vector import mention_refs, search
from esc.agents.stores.embedded import EmbeddedGraphStore
from esc.contract.evolve import evolve
from esc.contract.records import Record
from esc.settings import Settings
from esc.streams.discover import discover
from esc.streams.events import envelope_for
from esc.streams.readers import read, scan_with_errors
from tests.unit.prose.conftest import PACK
from tests.unit.prose.test_vector_mentions import graph_links

pytestmark = pytest.mark.integration
EVERYTHING = 10_000


@pytest.fixture
def weaviate_store(stack_settings: Settings, weaviate_client: Any) -> Iterator[tuple[Any, str]]:
    import weaviate.classes as wvc

    from esc.agents.stores.weaviate import TEXT_PROPERTIES, WeaviateVectorStore, _property

    name = f"Mentions{uuid.uuid4().hex[:8]}Text"
    # a collection as older versions made it (no entity refs): ensure_collection must add the property
    weaviate_client.collections.create(name, vector_config=wvc.config.Configure.Vectors.self_provided(),
                                       properties=[_property(n, t) for n, t in TEXT_PROPERTIES if n != "mentions"])
    store = WeaviateVectorStore(stack_settings.weaviate_url, grpc_port=stack_settings.weaviate_grpc_port)
    try:
        yield store, name
    finally:
        store.drop(name)
        store.close()


def filtered(store: Any, name: str, ref: str) -> set[str]:
    probe = [float(x) for x in HashingEmbedder().embed_one("notes")]
    hits = store.near_vector_mentioning(name, probe, [ref], EVERYTHING)
    assert all(ref in h["mentions"] for h in hits)
    return {h["id"] for h in hits}


def test_weaviate_chunks_carry_their_mentions_and_search_filters_by_them(
    weaviate_store: tuple[Any, str], tmp_path: Path
) -> None:
    store, name = weaviate_store
    drop = tmp_path / "drop"
    shutil.copytree(PACK / "drop", drop)
    contract, _ = evolve(None, discover(drop).contract)
    graph = EmbeddedGraphStore()
    try:
        ingestor = Ingestor(graph, store, HashingEmbedder(), name, contract)
        files, _ = scan_with_errors(drop)
        for sf in sorted(files, key=lambda f: f.rel):
            ingestor.handle([envelope_for(r, sf.rel, "it") for r in read(sf) if isinstance(r, Record)])
        linked = ingestor.link_mentions()
        assert linked.chunks >= 60 and linked.mentions > 300
        pack: Any = type("Pack", (), {"graph": graph})
        links = graph_links(pack)
        assert len(links) > 50
        for ref, chunks in links.items():
            assert filtered(store, name, ref) == chunks, ref
        assert filtered(store, name, entity_ref("Nobody", '{"id": -1}')) == set()
        # the query agent's search: a question naming a person searches the chunks that mention them
        agent = QueryAgent(contract, graph, store, ingestor.embedder, name)
        person = next(e for e in contract.entities if e.source == "people").name
        every = graph.mentions_in([r.id for r in graph.chunk_rows("", EVERYTHING)])
        first = next(m for m in every if m.label == person and m.score >= 1.0 and " " in m.surface)
        some, surface = entity_ref(first.label, first.key), first.surface
        question = f"What do the notes say about {surface}?"
        refs = mention_refs(agent.prose(), question)
        assert some in refs
        hits = search(store, ingestor.embedder, name, question, limit=5, mentioning=refs)
        assert hits and all(set(h["mentions"]) & set(refs) for h in hits)
        # the same notes again: their objects are rewritten without refs until the linker links their chunks again
        corpus = next(sf for sf in files if sf.rel == "notes")
        again = [r for r in read(corpus) if isinstance(r, Record)][:3]
        ingestor.handle([envelope_for(r, corpus.rel, "it") for r in again])
        assert ingestor.link_mentions().chunks > 0
        for ref, chunks in links.items():
            assert filtered(store, name, ref) == chunks, ref
    finally:
        graph.close()

