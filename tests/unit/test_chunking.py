"""chunk_text: structural boundaries, size and overlap limits, exact offsets (examples and properties)."""

from __future__ import annotations

import itertools
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from esc.agents.chunking import Chunk, chunk_text


def _check_invariants(text: str, chunks: list[Chunk], size: int, overlap: int) -> None:
    if not text:
        assert chunks == []
        return
    assert chunks[0].start == 0 and chunks[-1].end == len(text)
    for i, chunk in enumerate(chunks):
        assert chunk.index == i
        assert text[chunk.start : chunk.end] == chunk.text
        assert 0 < len(chunk.text) <= size
    for prev, nxt in itertools.pairwise(chunks):
        assert nxt.start > prev.start and nxt.end > prev.end  # order preserved, progress made
        assert nxt.start <= prev.end  # no character left out
        assert prev.end - nxt.start <= overlap  # shared text never exceeds the overlap


def _prose(n_words: int, seed: int = 0) -> str:
    rng = random.Random(seed)
    words = ["stream", "schema", "contract", "graph", "vector", "record", "field", "source", "change", "key"]
    out: list[str] = []
    for i in range(n_words):
        out.append(rng.choice(words))
        if i % 12 == 11:
            out[-1] += "."
    return " ".join(out)


# ---------------------------------------------------------------------------------------------- examples


def test_empty_and_short_text() -> None:
    assert chunk_text("") == []
    assert chunk_text("hello", size=10, overlap=2) == [Chunk(text="hello", start=0, end=5, index=0)]
    whole = "x" * 10
    assert chunk_text(whole, size=10, overlap=3) == [Chunk(text=whole, start=0, end=10, index=0)]


def test_invalid_arguments() -> None:
    with pytest.raises(ValueError, match="size"):
        chunk_text("abc", size=0, overlap=0)
    with pytest.raises(ValueError, match="overlap"):
        chunk_text("abc", size=10, overlap=10)
    with pytest.raises(ValueError, match="overlap"):
        chunk_text("abc", size=10, overlap=-1)
    with pytest.raises(TypeError, match="bytes"):
        chunk_text(b"abc")  # type: ignore[arg-type]


def test_markdown_headings_start_chunks() -> None:
    sections = [f"## Section {i}\n\n{_prose(50, seed=i)}\n\n" for i in range(5)]
    text = "".join(sections)
    longest = max(len(s) for s in sections)
    chunks = chunk_text(text, size=longest + 20, overlap=0)
    assert [c.text for c in chunks] == sections


def test_heading_boundary_beats_paragraph_boundary() -> None:
    # Two sections of two paragraphs; a chunk holds three paragraphs, yet the cut falls at the heading.
    para = _prose(20) + "\n\n"
    text = "# A\n" + para + para + "# B\n" + para + para
    chunks = chunk_text(text, size=len(para) * 3, overlap=0)
    assert [c.text for c in chunks] == ["# A\n" + para + para, "# B\n" + para + para]


def test_paragraphs_then_sentences() -> None:
    paragraphs = [_prose(30, seed=i) + "\n\n" for i in range(4)]
    text = "".join(paragraphs)
    chunks = chunk_text(text, size=max(map(len, paragraphs)), overlap=0)
    assert [c.text for c in chunks] == paragraphs
    # One long paragraph: pieces end at sentence ends.
    one = _prose(400, seed=9)
    for chunk in chunk_text(one, size=300, overlap=0)[:-1]:
        assert chunk.text.rstrip().endswith(".")


def test_overlap_starts_at_a_word_and_is_close_to_requested() -> None:
    text = _prose(3000, seed=3)
    chunks = chunk_text(text, size=1000, overlap=150)
    _check_invariants(text, chunks, 1000, 150)
    assert len(chunks) > 10
    for prev, nxt in itertools.pairwise(chunks):
        assert text[nxt.start - 1] == " " and not text[nxt.start].isspace()
        assert 150 - len("contract.") - 1 <= prev.end - nxt.start <= 150


def test_hard_split_without_any_boundary() -> None:
    text = "a" * 1000
    chunks = chunk_text(text, size=100, overlap=10)
    _check_invariants(text, chunks, 100, 10)
    assert all(len(c.text) == 100 for c in chunks[1:-1])
    assert all(prev.end - nxt.start == 10 for prev, nxt in itertools.pairwise(chunks))


def test_long_word_between_sentences() -> None:
    text = "Short one. " + "x" * 250 + " and then more words follow here."
    chunks = chunk_text(text, size=100, overlap=20)
    _check_invariants(text, chunks, 100, 20)
    assert chunks[0].text == "Short one. "


def test_defaults_on_a_large_markdown_document() -> None:
    text = "".join(
        f"# Part {i}\n\n" + "\n\n".join(_prose(120, seed=i * 10 + j) for j in range(6)) + "\n\n"
        for i in range(12)
    )
    chunks = chunk_text(text)
    _check_invariants(text, chunks, 8000, 500)
    assert len(chunks) >= len(text) // 8000
    assert chunk_text(text) == chunks


# ---------------------------------------------------------------------------------------------- properties

_ALPHABET = st.sampled_from([*"ab c.!?\n\n#  \tééß字", "## ", "\n\n", ". ", "\n# "])
_TEXT = st.lists(_ALPHABET, max_size=400).map("".join)


@st.composite
def _size_and_overlap(draw: st.DrawFn) -> tuple[int, int]:
    size = draw(st.integers(min_value=1, max_value=120))
    overlap = draw(st.integers(min_value=0, max_value=size - 1))
    return size, overlap


@settings(max_examples=400, deadline=None)
@given(text=_TEXT, params=_size_and_overlap())
def test_property_structured_text(text: str, params: tuple[int, int]) -> None:
    size, overlap = params
    chunks = chunk_text(text, size=size, overlap=overlap)
    _check_invariants(text, chunks, size, overlap)
    assert chunk_text(text, size=size, overlap=overlap) == chunks


@settings(max_examples=200, deadline=None)
@given(text=st.text(max_size=600), params=_size_and_overlap())
def test_property_any_unicode(text: str, params: tuple[int, int]) -> None:
    size, overlap = params
    _check_invariants(text, chunk_text(text, size=size, overlap=overlap), size, overlap)
