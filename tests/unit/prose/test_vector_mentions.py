"""Vector objects carry the entity refs of their chunk's MENTIONS (agents/mentions_vectors.py) in the embedded store,
and vector search filtered to an entity returns exactly the chunks the graph says mention it (the same behaviour as
the Weaviate adapter: tests/integration/test_weaviate_mentions.py)."""

from __future__ import annotations

import json
import shutil
from collections import defaultdict
from pathlib import Path

from esc.agents.mentions_vectors import entity_ref
from esc.agents.query.agent import QueryAgent
from esc.agents.query.vector import mention_refs, search
from esc.contract.records import Record
from esc.streams.events import envelope_for
from esc.streams.readers import read, scan_with_errors
from tests.unit.prose.conftest import COLLECTION, PACK, Ingested, ingest_pack

EVERYTHING = 100_000


def graph_links(pack: Ingested) -> dict[str, set[str]]:
    """Entity ref -> the chunk ids whose MENTIONS in the graph reach that entity."""
    ids = [r.id for r in pack.graph.chunk_rows("", EVERYTHING)]
    out: dict[str, set[str]] = defaultdict(set)
    for m in pack.graph.mentions_in(ids):
        out[entity_ref(m.label, m.key)].add(m.chunk_id)
    return out


def filtered_ids(pack: Ingested, ref: str) -> set[str]:
    probe = pack.ingestor.embedder.embed_one("notes")
    hits = pack.vectors.near_vector_mentioning(COLLECTION, [float(x) for x in probe], [ref], EVERYTHING)
    assert all(ref in h["mentions"] for h in hits)
    return {str(h["id"]) for h in hits}


def test_every_entity_filter_returns_the_chunks_the_graph_links(mentions_pack: Ingested) -> None:
    links = graph_links(mentions_pack)
    assert len(links) > 50
    for ref, chunks in links.items():
        assert filtered_ids(mentions_pack, ref) == chunks, ref
    assert filtered_ids(mentions_pack, entity_ref("Nobody", '{"id": -1}')) == set()


def test_a_question_naming_someone_searches_only_the_chunks_that_mention_them(mentions_pack: Ingested) -> None:
    p = mentions_pack
    note, m = next((n, m) for n, ms in p.truth["mentions"].items() for m in ms if m["source"] == "people")
    agent = QueryAgent(p.contract, p.graph, p.vectors, p.ingestor.embedder, COLLECTION)
    question = f"What do the notes say about {m['surface']}?"
    refs = mention_refs(agent.prose(), question)
    want = entity_ref(p.label("people"), json.dumps(m["key"], sort_keys=True))
    assert want in refs
    hits = search(p.vectors, p.ingestor.embedder, COLLECTION, question, limit=5, mentioning=refs)
    assert hits and all(set(h["mentions"]) & set(refs) for h in hits)
    assert any(h["file"] == note for h in search(p.vectors, p.ingestor.embedder, COLLECTION, question, limit=50,
                                                 mentioning=[want]))  # fmt: skip
    unfiltered = search(p.vectors, p.ingestor.embedder, COLLECTION, question, limit=5)
    assert unfiltered and [h["id"] for h in unfiltered] != [h["id"] for h in hits]  # the filter changed the result


def test_a_rewritten_chunk_gets_its_refs_back_when_linked_again(tmp_path: Path) -> None:
    shutil.copytree(PACK / "drop", tmp_path / "drop")
    pack = ingest_pack(tmp_path / "drop")
    try:
        before = graph_links(pack)
        files, _ = scan_with_errors(tmp_path / "drop")
        corpus = next(sf for sf in files if sf.rel == "notes")
        again = [r for r in read(corpus) if isinstance(r, Record)][:3]  # three notes again: their objects are
        pack.ingestor.handle([envelope_for(r, corpus.rel, "test") for r in again])  # rewritten without refs
        names = {r.location.file for r in again}
        rewritten = {r.id for r in pack.graph.chunk_rows("", EVERYTHING) if r.file in names}
        cleared = {ref: chunks & rewritten for ref, chunks in before.items() if chunks & rewritten}
        assert cleared and all(not filtered_ids(pack, ref) & ids for ref, ids in cleared.items())
        assert pack.ingestor.link_mentions().chunks == len(rewritten)
        assert graph_links(pack) == before
        for ref, chunks in before.items():
            assert filtered_ids(pack, ref) == chunks, ref
    finally:
        pack.graph.close()
        pack.vectors.close()
