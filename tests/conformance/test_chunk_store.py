"""ChunkStore behaviours every graph backend shares: chunks replaced per record, MENTIONS to existing entities only,
relinking by dictionary fingerprint, the chunks that mention an entity, deletion with the record."""

from __future__ import annotations

import json

from esc.agents.chunk_graph import MentionWrite, chunk_store
from esc.agents.stores.base import GraphStore
from esc.agents.types import SourceRecordRef, TextObject
from tests.conformance.conftest import Names
from tests.conformance.helpers import entity


def chunk(source: str, record: str, index: int, text: str, start: int = 0) -> TextObject:
    prov = SourceRecordRef(source=source, record_id=record, location=f"notes/{record}.md", file=f"notes/{record}.md")
    return TextObject(object_id=f"{source}-{record}-{index}", text=text, provenance=prov, chunk_index=index,
                      field="text", start=start, entity_label="Note", entity_key=json.dumps({"_record_id": record}))  # fmt: skip


def test_chunks_mentions_and_their_lifecycle(graph_store: GraphStore, names: Names) -> None:
    store = chunk_store(graph_store)
    assert store is not None
    person, people, notes = names.label("Person"), names.source("people"), names.source("notes")
    graph_store.ensure_entity_key(person, ["id"])
    graph_store.upsert_entities([entity(person, {"id": 1}, {"name": "Ada Lovelace"}, people, 1),
                                 entity(person, {"id": 2}, {"name": "Alan Turing"}, people, 2)])  # fmt: skip
    try:
        first = [chunk(notes, "n1", 0, "Met Ada Lovelace today."), chunk(notes, "n1", 1, "Later Alan Turing came.", 24),
                 chunk(notes, "n1", 2, "Nothing else.", 48)]  # fmt: skip
        assert store.upsert_chunks(first) == 3
        # written again with fewer chunks: the record's old third chunk goes
        store.upsert_chunks(first[:2])
        rows = [r for r in store.chunk_rows("", 1000) if r.source == notes]
        assert [(r.id, r.start, r.field) for r in rows] == [(f"{notes}-n1-0", 0, "text"), (f"{notes}-n1-1", 24, "text")]
        todo = [r for r in store.chunks_to_link("fp1", 1000) if r.source == notes]
        assert len(todo) == 2
        ada, alan = json.dumps({"id": 1}), json.dumps({"id": 2})
        writes = [MentionWrite(chunk_id=f"{notes}-n1-0", label=person, key=ada, start=4, end=16, surface="Ada Lovelace",
                               score=1.0, field="name", value="Ada Lovelace"),
                  MentionWrite(chunk_id=f"{notes}-n1-1", label=person, key=alan, start=6, end=17, surface="Alan Turing",
                               score=0.9, field="name", value="Alan Turing"),
                  MentionWrite(chunk_id=f"{notes}-n1-1", label=person, key=json.dumps({"id": 99}), start=0, end=5,
                               surface="Later", score=0.5)]  # an entity the graph does not hold: not written  # fmt: skip
        assert store.replace_mentions([r.id for r in todo], writes, "fp1") == 2
        assert [r for r in store.chunks_to_link("fp1", 1000) if r.source == notes] == []
        assert len([r for r in store.chunks_to_link("fp2", 1000) if r.source == notes]) == 2  # a new dictionary
        about_ada = store.mentioning(person, ada, 10)
        assert [(r["id"], r["m_start"], r["m_end"], r["surface"], r["text"]) for r in about_ada] == [
            (f"{notes}-n1-0", 4, 16, "Ada Lovelace", "Met Ada Lovelace today.")]  # fmt: skip
        got = store.mentions_in([f"{notes}-n1-0", f"{notes}-n1-1"])
        assert {(m.chunk_id, m.label, json.loads(m.key)["id"], m.surface) for m in got} == {
            (f"{notes}-n1-0", person, 1, "Ada Lovelace"), (f"{notes}-n1-1", person, 2, "Alan Turing")}  # fmt: skip
        # relinking replaces a chunk's mentions
        store.replace_mentions([f"{notes}-n1-0"], [], "fp2")
        assert store.mentioning(person, ada, 10) == []
        assert store.delete_chunks(notes, ["n1"]) == 2
        assert [r for r in store.chunk_rows("", 1000) if r.source == notes] == []
        assert store.mentioning(person, alan, 10) == []
    finally:
        store.delete_chunks(notes, ["n1"])
