"""chunk_tokens / chunk_for_embedding: chunks fit the embedder's window in its own word pieces, keep their context,
cover the text exactly, and a re-ingest with another chunking leaves no stale chunk behind."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from esc.agents.chunking import (
    CHUNK_TOKENS,
    CONTEXT_TOKENS,
    WINDOW_TOKENS,
    TokenCounter,
    chunk_for_embedding,
    chunk_tokens,
    default_counter,
)
from esc.agents.embedding import HashingEmbedder
from esc.agents.embedding_minilm import minilm_tokenizer
from esc.agents.ingest import Ingestor
from esc.contract.entities import with_entities
from esc.streams.events import RecordEnvelope
from tests.fakes.contracts import chinook_like
from tests.unit.agents.fakes import RecordingGraph, RecordingVectors

ESTIMATE = TokenCounter(None)
SENTENCES = " ".join(f"Sentence {i} tells how the harbour crane number {i} was repaired in spring." for i in range(90))


def _invariants(text: str, counter: TokenCounter, max_tokens: int = CHUNK_TOKENS) -> None:
    chunks = chunk_tokens(text, max_tokens=max_tokens, overlap_tokens=min(8, max_tokens - 1), counter=counter)
    if not text.strip():
        assert chunks == []
        return
    assert chunks[0].start == 0 and chunks[-1].end == len(text)
    for i, c in enumerate(chunks):
        assert text[c.start : c.end] == c.text and c.index == i
        assert len(counter.starts(c.text)) <= max_tokens or len(c.text) == 1
        if i:
            assert chunks[i - 1].start < c.start <= chunks[i - 1].end  # in order, no gap
    assert chunk_tokens(text, max_tokens=max_tokens, overlap_tokens=min(8, max_tokens - 1), counter=counter) == chunks


@pytest.mark.skipif(minilm_tokenizer() is None, reason="needs the MiniLM tokenizer (the embed extra)")
def test_chunks_fit_the_minilm_window_with_their_context() -> None:
    counter = default_counter()
    assert counter.name == "minilm-wordpiece"
    md = "# Harbour report\n\n## Cranes\n\n" + SENTENCES + "\n\n## Ledger\n\n| item | cost |\n|---|---|\n" + "".join(
        f"| spare part {i} | {i * 13} |\n" for i in range(150)
    )
    chunks = chunk_for_embedding(md)
    assert len(chunks) > 4
    tok = minilm_tokenizer()
    for c in chunks:
        embedded = f"{c.context}\n{c.text}" if c.context else c.text
        assert len(tok.encode(embedded).ids) <= WINDOW_TOKENS  # [CLS] + context + text + [SEP]: nothing truncated
        assert counter.count(c.context) <= CONTEXT_TOKENS
    ledger = [c for c in chunks if c.start > md.index("| spare part 20 |")]
    assert ledger and all(c.context.endswith("| item | cost |\n|---|---|") for c in ledger)  # table rows keep header
    assert all(c.context.startswith("Harbour report > Ledger") for c in ledger)
    cranes = [c for c in chunks if md.index("Sentence 40") < c.start < md.index("## Ledger")]
    assert cranes and all(c.context == "Harbour report > Cranes" for c in cranes)
    # an overlap repeats whole rows / sentences, never the middle of one
    assert all(c.text.startswith(("| spare", "Sentence", "#", "| item")) for c in chunks)


@settings(max_examples=150, deadline=None)
@given(text=st.lists(st.sampled_from([*"ab c.!?\n#|-é字", "## ", "\n\n", ". ", "| x | y |\n", "word "]), max_size=500).map("".join),
       size=st.integers(min_value=2, max_value=40))  # fmt: skip
def test_property_estimate_counter(text: str, size: int) -> None:
    _invariants(text, ESTIMATE, size)


def test_property_real_tokenizer_on_prose() -> None:
    counter = default_counter()
    for size in (16, 64, CHUNK_TOKENS):
        _invariants(SENTENCES, counter, size)
        _invariants("Überfluß café naïve " * 300, counter, size)


def test_a_field_of_a_table_record_is_its_chunks_context() -> None:
    chunks = chunk_for_embedding(SENTENCES, field="notes", counter=ESTIMATE)
    assert chunks and all(c.context.startswith("notes:") for c in chunks)


def test_reingest_with_another_chunking_leaves_no_stale_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    """A state written with the old 8,000-character chunks, then the same record again: the record's old chunks are
    removed before its new ones are written (ids change with the chunking; counts must not add up)."""
    from esc.agents import chunking, extractors

    graph, vectors = RecordingGraph(), RecordingVectors()
    ing = Ingestor(graph, vectors, HashingEmbedder(), "C", embed_batch=16)
    contract = with_entities(chinook_like())
    notes = SENTENCES * 3
    envs = [RecordEnvelope(source="Customer", record_id="c1", payload={"CustomerId": 1, "Notes": notes})]

    def old_chunks(text: str, field: str | None = None, counter: object = None) -> list[chunking.Chunk]:
        return chunking.chunk_text(text, 8000, 500)

    monkeypatch.setattr(extractors, "chunk_for_embedding", old_chunks)
    ing.handle(envs, contract)
    old = dict(vectors.objects["C"])
    assert len(old) == len(chunking.chunk_text(notes, 8000, 500))
    monkeypatch.undo()
    ing.handle(envs, contract)
    new = vectors.objects["C"]
    assert len(new) == len(chunk_for_embedding(notes, "Notes")) > len(old)
    assert all(len(default_counter().starts(o.text)) <= CHUNK_TOKENS for o in new.values())
    # and back: the fewer, longer chunks replace the many short ones (the short ones' higher indexes do not linger)
    monkeypatch.setattr(extractors, "chunk_for_embedding", old_chunks)
    ing.handle(envs, contract)
    assert vectors.objects["C"].keys() == old.keys()
