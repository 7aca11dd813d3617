"""Split text into overlapping chunks with character offsets, preferring structural boundaries.

``chunk_text`` first cuts the text into *pieces* of at most ``size - overlap`` characters, trying boundaries in
this order: markdown headings, paragraphs (blank lines), sentences, lines, words, and finally a hard cut.
Neighbouring pieces are merged greedily while they fit, but a merge never crosses a boundary of a higher
level than the one being split (a section that needs splitting is split on its own). Each chunk is then one
piece plus up to ``overlap`` characters taken from the end of the previous piece (never all of it, so chunk
starts strictly increase), starting at a word boundary when there is one in that window. So every chunk is at most ``size`` characters, chunks cover the whole text
in order, ``text[chunk.start:chunk.end] == chunk.text``, and the result depends only on the arguments.

Note: embedding models truncate long inputs (MiniLM at 256 word pieces, roughly 1,000 characters of English);
pick ``size`` for the consumer (e.g. ``size=1000, overlap=150`` for MiniLM vectors, the defaults for LLM
extraction).
"""

from __future__ import annotations

import itertools
import re

from pydantic import BaseModel, ConfigDict

# Cut positions per level, in order of preference. ``cut`` says where the boundary is: before the match
# (a heading starts a new piece) or after it (blank lines, sentence ends and spaces stay with what precedes).
_HEADING = re.compile(r"^ {0,3}#{1,6}(?=[ \t]|$)", re.MULTILINE)
_PARAGRAPH = re.compile(r"\n[ \t]*\n\s*")
_SENTENCE = re.compile(r"(?<=[.!?…。！？])[\"'”’)\]]*\s+")
_LINE = re.compile(r"\n+")
_WORD = re.compile(r"\s+")
_LEVELS: tuple[tuple[re.Pattern[str], bool], ...] = (
    (_HEADING, False),  # cut at match start
    (_PARAGRAPH, True),  # cut at match end
    (_SENTENCE, True),
    (_LINE, True),
    (_WORD, True),
)


class Chunk(BaseModel):
    """A slice ``text[start:end]`` of the source text; ``index`` counts from 0 in text order."""

    model_config = ConfigDict(frozen=True)

    text: str
    start: int
    end: int
    index: int


def chunk_text(text: str, size: int = 8000, overlap: int = 500) -> list[Chunk]:
    """Chunks of at most ``size`` characters covering ``text``, consecutive ones sharing up to ``overlap``.

    An empty text has no chunks. Raises ``ValueError`` unless ``size >= 1`` and ``0 <= overlap < size``.
    """
    if not isinstance(text, str):
        raise TypeError(f"chunk_text() needs a str, got {type(text).__name__}")
    if size < 1:
        raise ValueError(f"chunk size must be at least 1, got {size}")
    if not 0 <= overlap < size:
        raise ValueError(f"overlap must be in 0..size-1 ({size - 1}), got {overlap}")
    if not text:
        return []
    if len(text) <= size:
        return [Chunk(text=text, start=0, end=len(text), index=0)]
    pieces = _split(text, 0, len(text), 0, size - overlap)
    chunks: list[Chunk] = []
    prev_start = 0
    for index, (start, end) in enumerate(pieces):
        begin = start if index == 0 else _overlap_start(text, max(start - overlap, prev_start + 1), start)
        chunks.append(Chunk(text=text[begin:end], start=begin, end=end, index=index))
        prev_start = start
    return chunks


def _split(text: str, start: int, end: int, level: int, limit: int) -> list[tuple[int, int]]:
    """Contiguous spans covering ``text[start:end]``, each at most ``limit`` long."""
    if end - start <= limit:
        return [(start, end)]
    if level >= len(_LEVELS):
        return [(s, min(s + limit, end)) for s in range(start, end, limit)]
    pattern, after = _LEVELS[level]
    cuts = [m.end() if after else m.start() for m in pattern.finditer(text, start, end)]
    bounds = [start, *sorted({c for c in cuts if start < c < end}), end]
    if len(bounds) == 2:
        return _split(text, start, end, level + 1, limit)
    out: list[tuple[int, int]] = []
    current: tuple[int, int] | None = None
    for seg_start, seg_end in itertools.pairwise(bounds):
        if seg_end - seg_start > limit:
            if current is not None:
                out.append(current)
                current = None
            out.extend(_split(text, seg_start, seg_end, level + 1, limit))
        elif current is not None and seg_end - current[0] <= limit:
            current = (current[0], seg_end)
        else:
            if current is not None:
                out.append(current)
            current = (seg_start, seg_end)
    if current is not None:
        out.append(current)
    return out


def _overlap_start(text: str, lo: int, start: int) -> int:
    """First word start in ``[lo, start)``, or ``lo`` when the window holds no word boundary."""
    for i in range(lo, start):
        if not text[i].isspace() and (i == 0 or text[i - 1].isspace()):
            return i
    return lo
