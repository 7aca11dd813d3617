"""Schema-routed evidence retrieval: structured rows first, the vector index second, fused.

``retrieve(question, grounding, vectors, embedder, collection, k)`` returns the ``k`` best pieces of evidence
(each cited by its source record) from three signals, all computed from the question text only:

1. **Row lookup** (structured): rows of the contract's tabular entity types whose cells hold the question's
   content words, scored by IDF over rows (``RowIndex``, built from the graph once per contract version);
2. **Schema routing**: sources whose vocabulary (attribute names and cell words, IDF over sources) best covers
   the question; vector hits from a routed source, or from a file with the same stem as a routed source's file
   (a document shipped beside its table), are boosted;
3. **Vector search**: ``near_vector`` over the collection (the plain baseline is this step alone).

4. **Words of prose**: BM25 over the same chunks the vectors hold (``ChunkIndex``, agents/query/chunk_index.py),
   boosted like vector hits when their source or file is routed.

The rankings (rows; prose words; boosted vector hits) are merged by reciprocal rank fusion. ``unit`` says what one
piece of evidence is: a ``record`` (several chunks of one document are one piece, the default) or a ``chunk`` (a
table row, or one chunk of prose). ``scope`` (a predicate on ``(source, file)``) restricts every signal the same
way, so a caller can compare with a baseline under one scope.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import Any, Literal

from esc.agents.embedding import Embedder
from esc.agents.query.chunk_index import ChunkEntry, ChunkIndex, text_attributes
from esc.agents.query.grounding import Grounding
from esc.agents.query.plan import NodePattern, QueryPlan, ReturnItem
from esc.agents.query.vocabulary import STOPWORDS, fold, split_name, stem
from esc.agents.stores.base import VectorStore

RRF_K = 60
ROW_WEIGHT = 0.5
"""A row's share in the fusion against one chunk's: a row is found by one signal (its cells' words), a chunk by two
(its words and its vector) that each add their share, so one signal's list counts half. Chosen on TAT-QA (paragraph
recall@5 0.68 with weight 1, 0.76 with 0.5, 0.77 without rows; bench/qa_tatqa.py), the only weight tuned there."""
ROUTED_SOURCES = 3
ROUTE_BOOST = 0.15
VECTOR_POOL = 50
VECTOR_SEATS = 2
MAX_ROW_CELLS = 40
_WORD = re.compile(r"[^\W_]+(?:[.,][0-9]+)*", re.UNICODE)
_EXTRA_STOP = frozenset({"what", "which", "how", "was", "were", "did", "does", "the", "for", "and", "from", "between",
                         "change", "average", "percentage", "total", "value", "amount", "year", "years"})  # fmt: skip

Scope = Callable[[str, str], bool]  # (source, file) -> allowed
Unit = Literal["record", "chunk"]


def terms(text: str) -> list[str]:
    """Content terms of a text: folded, stemmed words and numbers (``1,496.5`` -> ``1496.5``), no stopwords."""
    out = []
    for m in _WORD.finditer(fold(str(text))):
        w = m.group(0).replace(",", "")
        if w in STOPWORDS or w in _EXTRA_STOP or (len(w) < 2 and not w.isdigit()):
            continue
        out.append(w if w[0].isdigit() else stem(w))
    return out


@dataclass
class Evidence:
    source: str
    record_id: str
    location: str
    text: str
    score: float
    via: str  # "rows" | "vector" | "rows+vector"
    file: str = ""
    similarity: float | None = None
    chunk_id: str = ""  # unit "chunk": the chunk (vector object id) this evidence is

    def hit(self) -> dict[str, Any]:
        """As a vector-store hit (what ``answer_from_hits`` reads)."""
        return {"source": self.source, "record_id": self.record_id, "location": self.location, "text": self.text,
                "similarity": self.similarity if self.similarity is not None else 0.0, "file": self.file}  # fmt: skip


@dataclass
class _Row:
    source: str
    record_id: str
    location: str
    file: str
    text: str
    terms: frozenset[str]


@dataclass
class RowIndex:
    """Rows of tabular entity types as term sets, with IDF over rows and over sources."""

    rows: list[_Row] = field(default_factory=list)
    row_df: Counter[str] = field(default_factory=Counter)
    source_terms: dict[str, Counter[str]] = field(default_factory=dict)
    source_df: Counter[str] = field(default_factory=Counter)
    source_files: dict[str, set[str]] = field(default_factory=dict)
    chunks: ChunkIndex = field(default_factory=ChunkIndex)

    @classmethod
    def build(cls, grounding: Grounding) -> RowIndex:
        index = cls()
        graph = grounding.graph
        if graph is None:
            return index
        for info, names, document in text_attributes(grounding):
            plan = QueryPlan(kind="list", start=NodePattern(var="n0", label=info.name), cite=["n0"], distinct=False,
                             returns=[ReturnItem(var="n0", prop=n, alias=f"t{i}") for i, n in enumerate(names)])  # fmt: skip
            try:
                text_rows = graph.run_plan(plan)
            except Exception:  # any store error: that type's text is left out of the evidence
                continue
            for row in text_rows:
                if not row.citations:
                    continue
                cite = row.citations[0]
                for i, name in enumerate(names):
                    value = row.values.get(f"t{i}")
                    if isinstance(value, str) and value.strip():
                        index.chunks.add(str(cite.get("source")), str(cite.get("record_id")),
                                         str(cite.get("location") or ""), name, value, document, terms)  # fmt: skip
        for info in grounding.vocab.types.values():
            attrs = [a for a in info.attrs.values() if a.type != "text"][
                :MAX_ROW_CELLS
            ]  # long text is in vectors
            if not attrs:
                continue
            plan = QueryPlan(
                kind="list",
                start=NodePattern(var="n0", label=info.name),
                returns=[ReturnItem(var="n0", prop=a.name, alias=f"a{i}") for i, a in enumerate(attrs)],
                cite=["n0"],
                distinct=False,
            )
            try:
                rows = graph.run_plan(plan)
            except Exception:  # any store error: that table is left out of the evidence
                continue
            header = [w for a in attrs if not re.fullmatch(r"col_\d+", a.name) for w in split_name(a.name)]
            src_terms = index.source_terms.setdefault(info.source, Counter())
            src_terms.update(terms(" ".join(header)))
            for row in rows:
                cells = [row.values.get(f"a{i}") for i in range(len(attrs))]
                shown = [str(c) for c in cells if c not in (None, "")]
                if not shown or not row.citations:
                    continue
                cite = row.citations[0]
                text = " | ".join(shown)
                row_terms = frozenset(terms(text))
                location = str(cite.get("location") or "")
                file = location.split(":", 1)[0]
                source = str(cite.get("source"))
                index.rows.append(_Row(source, str(cite.get("record_id")), location, file, text, row_terms))
                index.row_df.update(row_terms)
                src_terms.update(row_terms)
                index.source_files.setdefault(source, set()).add(file)
        for counts in index.source_terms.values():
            index.source_df.update(counts.keys())
        return index

    def _idf(self, df: Counter[str], n: int, term: str) -> float:
        return math.log((n + 1) / (df.get(term, 0) + 0.5))

    def route(self, q_terms: list[str], scope: Scope | None = None, top: int = ROUTED_SOURCES) -> list[str]:
        """Sources whose vocabulary best covers the question terms (IDF over sources)."""
        n = len(self.source_terms)
        scored = []
        for source, counts in self.source_terms.items():
            if scope is not None and not any(scope(source, f) for f in self.source_files.get(source, {""})):
                continue
            s = sum(self._idf(self.source_df, n, t) for t in set(q_terms) if t in counts)
            if s > 0:
                scored.append((s, source))
        scored.sort(reverse=True)
        return [s for _, s in scored[:top]]

    def search(
        self, q_terms: list[str], routed: list[str], scope: Scope | None, limit: int
    ) -> list[tuple[float, _Row]]:
        n = len(self.rows)
        wanted = set(q_terms)
        bonus = {s: 1.0 - 0.2 * i for i, s in enumerate(routed)}
        scored = []
        for row in self.rows:
            if scope is not None and not scope(row.source, row.file):
                continue
            common = wanted & row.terms
            if not common:
                continue
            s = sum(self._idf(self.row_df, n, t) for t in common)
            s *= 1.0 + 0.5 * bonus.get(row.source, 0.0)
            scored.append((s, row))
        scored.sort(key=lambda x: -x[0])
        return scored[:limit]


def _stem_of(path: str) -> str:
    return PurePath(path.split(":", 1)[0]).stem if path else ""


def retrieve(
    question: str,
    rows: RowIndex | None,
    vectors: VectorStore | None,
    embedder: Embedder | None,
    collection: str | None,
    k: int = 5,
    scope: Scope | None = None,
    pool: int = VECTOR_POOL,
    unit: Unit = "record",
) -> list[Evidence]:
    """The ``k`` best pieces of evidence for a question (see the module docstring)."""
    q_terms = terms(question)
    routed = rows.route(q_terms, scope) if rows is not None else []
    routed_stems = {_stem_of(f) for s in routed for f in (rows.source_files.get(s, set()) if rows else set())}
    ranked_rows = rows.search(q_terms, routed, scope, pool) if rows is not None else []
    hits: list[dict[str, Any]] = []
    if vectors is not None and embedder is not None and collection:
        vec = [float(x) for x in embedder.embed_one(question)]
        hits = vectors.near_vector(collection, vec, limit=pool)
        if scope is not None:
            hits = [h for h in hits if scope(str(h.get("source")), str(h.get("file") or ""))]

    def boosted(h: dict[str, Any]) -> float:
        sim = float(h.get("similarity") or 0.0)
        if h.get("source") in routed or _stem_of(str(h.get("file") or "")) in routed_stems:
            sim += ROUTE_BOOST
        return sim

    hits.sort(key=boosted, reverse=True)
    chunk_ids = rows.chunks.by_id if rows is not None else {}

    def unit_key(source: str, record_id: str, chunk_id: str = "") -> tuple[str, str]:
        return ("\x1fchunk", chunk_id) if unit == "chunk" and chunk_id in chunk_ids else (source, record_id)

    fused: dict[tuple[str, str], Evidence] = {}
    for rank, (_score, row) in enumerate(ranked_rows):
        key = (row.source, row.record_id)
        fused[key] = Evidence(
            row.source, row.record_id, row.location, row.text, ROW_WEIGHT / (RRF_K + rank), "rows", row.file
        )
    if rows is not None and rows.chunks.chunks:
        def in_scope(c: ChunkEntry) -> bool:
            return scope is None or scope(c.source, c.file)

        lexical = rows.chunks.search(q_terms, in_scope, pool)
        routed_files = {s for s in routed}
        lexical.sort(key=lambda x: -(x[0] * (1.0 + ROUTE_BOOST * (x[1].source in routed_files
                                                                   or _stem_of(x[1].file) in routed_stems))))  # fmt: skip
        for rank, (_score, c) in enumerate(lexical):
            key = unit_key(c.source, c.record_id, c.id)
            add = 1.0 / (RRF_K + rank)
            ev = fused.get(key)
            if ev is None:
                fused[key] = Evidence(c.source, c.record_id, c.location, c.text, add, "words", c.file,
                                      chunk_id=c.id if unit == "chunk" else "")  # fmt: skip
            else:
                ev.score += add
                ev.via = ev.via if "words" in ev.via else f"{ev.via}+words"
                if c.text not in ev.text:
                    ev.text = c.text if ev.text in c.text else f"{ev.text}\n{c.text}"
    vector_keys: list[tuple[str, str]] = []
    # a record with several matching chunks collects each chunk's share (CombSUM)
    for rank, h in enumerate(hits):
        key = unit_key(str(h.get("source")), str(h.get("record_id")), str(h.get("id") or ""))
        add = 1.0 / (RRF_K + rank)
        sim = float(h.get("similarity") or 0.0)
        text = str(h.get("text") or "")
        ev = fused.get(key)
        if ev is None:
            fused[key] = Evidence(str(h.get("source")), str(h.get("record_id")), str(h.get("location") or ""), text,
                                  add, "vector", str(h.get("file") or ""), sim,
                                  key[1] if key[0] == "\x1fchunk" else "")  # fmt: skip
        else:
            ev.score += add
            if "vector" not in ev.via:
                ev.via = f"{ev.via}+vector"
            ev.similarity = max(ev.similarity or 0.0, sim)
            if text and text not in ev.text:
                ev.text = text if ev.text in text else f"{ev.text}\n{text}"
        if key not in vector_keys:
            vector_keys.append(key)
    ranked = sorted(fused.values(), key=lambda e: -e.score)
    # the best vector hits always get seats: a question about prose must not lose its passage to many weak rows
    seats = [fused[key] for key in vector_keys[: min(VECTOR_SEATS, k)]]
    seat_ids = {id(e) for e in seats}
    rest = [e for e in ranked if id(e) not in seat_ids][: k - len(seats)]
    keep = seat_ids | {id(e) for e in rest}
    return [e for e in ranked if id(e) in keep]


def vector_only(
    question: str,
    vectors: VectorStore,
    embedder: Embedder,
    collection: str,
    k: int = 5,
    scope: Scope | None = None,
    pool: int = VECTOR_POOL,
    unit: Unit = "record",
) -> list[Evidence]:
    """The baseline: plain ``near_vector``, scope applied to the pool, with the same evidence unit as ``retrieve``
    (``record``: several chunks of one record are one piece of evidence, ranked by its best chunk; ``chunk``: each
    vector object is one)."""
    vec = [float(x) for x in embedder.embed_one(question)]
    hits = vectors.near_vector(collection, vec, limit=max(pool, 4 * k))
    if scope is not None:
        hits = [h for h in hits if scope(str(h.get("source")), str(h.get("file") or ""))]
    out: dict[tuple[str, str], Evidence] = {}
    for h in hits:
        key = (str(h.get("source")), str(h.get("record_id")))
        if unit == "chunk":
            key = ("\x1fchunk", str(h.get("id")))
        text = str(h.get("text") or "")
        ev = out.get(key)
        if ev is None:
            if len(out) >= k:
                continue
            sim = float(h.get("similarity") or 0.0)
            out[key] = Evidence(str(h.get("source")), str(h.get("record_id")), str(h.get("location") or ""), text,
                                sim, "vector", str(h.get("file") or ""), sim,
                                str(h.get("id")) if unit == "chunk" else "")  # fmt: skip
        elif text and text not in ev.text:
            ev.text = text if ev.text in text else f"{ev.text}\n{text}"
    return list(out.values())
