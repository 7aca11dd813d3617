"""Split text into overlapping chunks with character offsets, preferring structural boundaries.

``chunk_text`` first cuts the text into *pieces* of at most ``size - overlap`` characters, trying boundaries in
this order: markdown headings, paragraphs (blank lines), sentences, lines, words, and finally a hard cut.
Neighbouring pieces are merged greedily while they fit, but a merge never crosses a boundary of a higher
level than the one being split (a section that needs splitting is split on its own). Each chunk is then one
piece plus up to ``overlap`` characters taken from the end of the previous piece (never all of it, so chunk
starts strictly increase), starting at a word boundary when there is one in that window. So every chunk is at most ``size`` characters, chunks cover the whole text
in order, ``text[chunk.start:chunk.end] == chunk.text``, and the result depends only on the arguments.

Embedding models truncate long inputs (MiniLM at 256 word pieces, roughly 1,000 characters of English), so text
for vectors is cut by :func:`chunk_tokens` instead: the same boundaries and overlap, measured in the model's own
word pieces (``TokenCounter``: the MiniLM tokenizer when installed, else a conservative estimate), and each chunk
gets a short *context* (the markdown headings above it, the header row of a pipe table it starts inside, or the
field it comes from) that is embedded in front of it. ``chunk_for_embedding`` is what the extractor calls.
"""

from __future__ import annotations

import bisect
import itertools
import re
from collections.abc import Callable

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
    """A slice ``text[start:end]`` of the source text; ``index`` counts from 0 in text order. ``context`` (token
    chunks only) is what a reader of the slice alone would miss: headings, a table's header row, the field."""

    model_config = ConfigDict(frozen=True)

    text: str
    start: int
    end: int
    index: int
    context: str = ""

Measure = Callable[[int, int], int]  # (start, end) -> size of text[start:end]


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
    pieces = _split(text, 0, len(text), 0, size - overlap, lambda a, b: b - a)
    chunks: list[Chunk] = []
    prev_start = 0
    for index, (start, end) in enumerate(pieces):
        begin = start if index == 0 else _overlap_start(text, max(start - overlap, prev_start + 1), start)
        chunks.append(Chunk(text=text[begin:end], start=begin, end=end, index=index))
        prev_start = start
    return chunks


def _split(
    text: str, start: int, end: int, level: int, limit: int, size: Measure, hard: Measure | None = None
) -> list[tuple[int, int]]:
    """Contiguous spans covering ``text[start:end]``, each at most ``limit`` by ``size``. ``hard(start, limit)`` is
    where a span that has no boundary left ends (default: ``limit`` characters on)."""
    if size(start, end) <= limit:
        return [(start, end)]
    if level >= len(_LEVELS):
        out_hard = []
        s = start
        while s < end:
            e = min(end, max(s + 1, hard(s, limit) if hard is not None else s + limit))
            out_hard.append((s, e))
            s = e
        return out_hard
    pattern, after = _LEVELS[level]
    cuts = [m.end() if after else m.start() for m in pattern.finditer(text, start, end)]
    bounds = [start, *sorted({c for c in cuts if start < c < end}), end]
    if len(bounds) == 2:
        return _split(text, start, end, level + 1, limit, size, hard)
    out: list[tuple[int, int]] = []
    current: tuple[int, int] | None = None
    for seg_start, seg_end in itertools.pairwise(bounds):
        if size(seg_start, seg_end) > limit:
            if current is not None:
                out.append(current)
                current = None
            out.extend(_split(text, seg_start, seg_end, level + 1, limit, size, hard))
        elif current is not None and size(current[0], seg_end) <= limit:
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


# ------------------------------------------------------------------------------------------------ token windows

WINDOW_TOKENS = 256
"""MiniLM's window in word pieces, [CLS] and [SEP] included."""
CHUNK_TOKENS = 224
"""Word pieces of one chunk's own text; with its context (at most ``CONTEXT_TOKENS``) and the two special tokens
it fits the window, so the embedder reads all of it."""
CONTEXT_TOKENS = 30
OVERLAP_TOKENS = 32
_APPROX = re.compile(r"[^\W_]{1,4}|[^\w\s]|_", re.UNICODE)
_TABLE_LINE = re.compile(r"^[ \t]*\|.*\|[ \t]*$", re.MULTILINE)
_HEADING_LINE = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.+?)[ \t#]*$", re.MULTILINE)


class TokenCounter:
    """Word-piece start offsets of a text: from the MiniLM tokenizer when it is installed, else an estimate that
    never counts fewer pieces than WordPiece would for English (every run of up to four letters or digits, and
    every punctuation mark, is one piece). ``name`` says which, since chunk boundaries follow it."""

    def __init__(self, tokenizer: object | None = None) -> None:
        self._tok = tokenizer
        self.name = "minilm-wordpiece" if tokenizer is not None else "estimate"

    @classmethod
    def default(cls) -> TokenCounter:
        from esc.agents.embedding_minilm import minilm_tokenizer

        return cls(minilm_tokenizer())

    def starts(self, text: str) -> list[int]:
        if self._tok is not None:
            enc = self._tok.encode(text, add_special_tokens=False)  # type: ignore[attr-defined]
            return sorted({int(a) for a, b in enc.offsets if b > a})
        return [m.start() for m in _APPROX.finditer(text)]

    def count(self, text: str) -> int:
        return len(self.starts(text))


_default_counter: TokenCounter | None = None


def default_counter() -> TokenCounter:
    global _default_counter
    if _default_counter is None:
        _default_counter = TokenCounter.default()
    return _default_counter


def chunk_tokens(
    text: str,
    max_tokens: int = CHUNK_TOKENS,
    overlap_tokens: int = OVERLAP_TOKENS,
    counter: TokenCounter | None = None,
) -> list[Chunk]:
    """Like :func:`chunk_text`, measured in word pieces: every chunk holds at most ``max_tokens`` of them, the
    next one repeats up to ``overlap_tokens`` from the end of the previous one (from a word start), and each chunk
    carries its ``context`` (see :func:`context_at`). Depends only on the arguments and the counter."""
    if not isinstance(text, str):
        raise TypeError(f"chunk_tokens() needs a str, got {type(text).__name__}")
    if max_tokens < 1 or not 0 <= overlap_tokens < max_tokens:
        raise ValueError(f"need max_tokens >= 1 and 0 <= overlap_tokens < max_tokens, got {max_tokens}/{overlap_tokens}")
    if not text.strip():
        return []
    if len(text) <= max_tokens:  # every word piece starts at its own character: one chunk, no context before it
        return [Chunk(text=text, start=0, end=len(text), index=0)]
    counter = counter or default_counter()
    starts = counter.starts(text)

    def size(a: int, b: int) -> int:
        return bisect.bisect_left(starts, b) - bisect.bisect_left(starts, a)

    def hard(a: int, limit: int) -> int:
        i = bisect.bisect_left(starts, a) + limit
        return starts[i] if i < len(starts) else len(text)

    if size(0, len(text)) <= max_tokens:
        pieces = [(0, len(text))]
    else:
        pieces = _merge_headings(text, _split(text, 0, len(text), 0, max_tokens - overlap_tokens, size, hard),
                                 size, max_tokens)  # fmt: skip
    chunks: list[Chunk] = []
    prev_start = 0
    outline: _Outline | None = None  # found when a chunk starts after the text's start (the first needs none)
    for index, (start, end) in enumerate(pieces):
        begin = start
        if index and overlap_tokens and not _HEADING.match(text, start):  # a new section needs no overlap
            i = max(bisect.bisect_left(starts, start) - overlap_tokens, 0)
            lo = max(starts[i] if i < len(starts) else start, prev_start + 1)
            begin = _unit_start(text, lo, start) if lo < start else start
        if begin > 0 and outline is None:
            outline = _Outline(text)
        chunks.append(Chunk(text=text[begin:end], start=begin, end=end, index=index,
                            context=context_at(text, begin, counter, outline=outline)))  # fmt: skip
        prev_start = start
    return chunks


def _merge_headings(text: str, pieces: list[tuple[int, int]], size: Measure, limit: int) -> list[tuple[int, int]]:
    """A piece that is only a heading joins the piece after it (when both fit): a heading is read with its text."""
    out: list[tuple[int, int]] = []
    i = 0
    while i < len(pieces):
        start, end = pieces[i]
        if i + 1 < len(pieces) and _HEADING_LINE.fullmatch(text[start:end].strip()) and size(start, pieces[i + 1][1]) <= limit:
            out.append((start, pieces[i + 1][1]))
            i += 2
            continue
        out.append((start, end))
        i += 1
    return out


def _unit_start(text: str, lo: int, start: int) -> int:
    """Where an overlap taken from ``[lo, start)`` begins: at the first line start in it, else the first sentence
    start, else the first word start (so a table row or a sentence is repeated whole, not from its middle)."""
    nl = text.find("\n", lo - 1 if lo > 0 else 0, start)
    if nl >= 0 and nl + 1 < start and text[nl + 1 : start].strip():
        return nl + 1 + (len(text[nl + 1 : start]) - len(text[nl + 1 : start].lstrip()))
    m = _SENTENCE.search(text, lo, start)
    if m and m.end() < start:
        return m.end()
    return _overlap_start(text, lo, start)


class _Outline:
    """Where a text's headings and pipe tables are, found once per text (a chunk's context is looked up in it)."""

    def __init__(self, text: str) -> None:
        self.headings = [(m.start(), len(m.group(1)), m.group(2).strip()) for m in _HEADING_LINE.finditer(text)]
        self.heading_starts = [h[0] for h in self.headings]
        self.tables: list[tuple[int, int, str]] = []  # (start, end, header) of each run of table lines
        for m in _TABLE_BLOCK.finditer(text):
            lines = m.group(0).splitlines()
            header = lines[0].strip()
            if len(lines) > 1 and re.fullmatch(r"\|[\s:|-]+\|", lines[1].strip()):
                header = f"{header}\n{lines[1].strip()}"
            self.tables.append((m.start(), m.end(), header))
        self.table_starts = [t[0] for t in self.tables]

    def path(self, start: int) -> str:
        path: list[tuple[int, str]] = []
        for _, level, title in self.headings[: bisect.bisect_left(self.heading_starts, start)]:
            path = [p for p in path if p[0] < level]
            path.append((level, title))
        return " > ".join(t for _, t in path)

    def table_header(self, start: int) -> str:
        i = bisect.bisect_right(self.table_starts, start) - 1
        if i < 0:
            return ""
        t_start, t_end, header = self.tables[i]
        first_end = t_start + len(header.split("\n", 1)[0])
        return header if first_end < start < t_end else ""


_TABLE_BLOCK = re.compile(r"(?:^[ \t]*\|.*\|[ \t]*(?:\n|$))+", re.MULTILINE)


def context_at(text: str, start: int, counter: TokenCounter | None = None, limit: int = CONTEXT_TOKENS,
               outline: _Outline | None = None) -> str:  # fmt: skip
    """What a chunk starting at ``start`` needs from before it: the markdown headings it sits under (outermost
    first, joined by " > ") and, when it starts inside a pipe table (after its header row), the table's header row;
    at most ``limit`` word pieces (outer headings go first)."""
    if start <= 0:
        return ""
    outline = outline or _Outline(text)
    parts = [outline.path(start), outline.table_header(start)]
    context = "\n".join(p for p in parts if p)
    counter = counter or default_counter()
    while context and counter.count(context) > limit:
        context = context[context.find(" > ") + 3 :] if " > " in context else context[: len(context) * 3 // 4]
    return context


def chunk_for_embedding(text: str, field: str | None = None, counter: TokenCounter | None = None) -> list[Chunk]:
    """The chunks the extractor writes for vectors: :func:`chunk_tokens` with the defaults; ``field`` (a text field
    of a table record) is added to every chunk's context, so a cell's text keeps its column header."""
    if field and len(text) <= CHUNK_TOKENS and text.strip():  # chunk_tokens' one chunk, with the field as context
        return [Chunk(text=text, start=0, end=len(text), index=0, context=f"{field}:")]
    chunks = chunk_tokens(text, counter=counter)
    if not field:
        return chunks
    return [c.model_copy(update={"context": f"{field}: {c.context}" if c.context else f"{field}:"}) for c in chunks]
