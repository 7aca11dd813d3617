"""Vector route: descriptive questions answered from the nearest text chunks in the vector index.

The answer is the best chunk's text (the evidence), cited by its source record. Retrieval whose best similarity is
below ``LOW_SIMILARITY`` (0.3, the ESC paper's default) abstains, as does a passage that does not mention what the
question is about (``answer_from_hits``).
A question that names an entity some text mentions searches only the chunks that mention it (``mentioning``).
Optionally a ``schema_filter`` keeps only chunks whose entity label or source the question's grounding names
(schema-conditioned routing), falling back to the unfiltered hits when the filter leaves nothing.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from esc.agents.embedding import Embedder
from esc.agents.mentions_vectors import entity_ref, near_vector_mentioning
from esc.agents.query.answer import Answer, Citation
from esc.agents.stores.base import VectorStore

log = logging.getLogger(__name__)

LOW_SIMILARITY = 0.3
MAX_CONFIDENCE = 0.75
MAX_EVIDENCE_CHARS = 1200


def search(
    vectors: VectorStore, embedder: Embedder, collection: str, question: str, limit: int = 5, fetch: int | None = None,
    mentioning: list[str] | None = None,
) -> list[dict[str, Any]]:
    """The nearest chunks; with ``mentioning`` (entity refs, ``agents.mentions_vectors``), the nearest among the
    chunks that mention those entities when the store can filter so and any does (else all chunks)."""
    vec = [float(x) for x in embedder.embed_one(question)]
    if mentioning:
        hits = near_vector_mentioning(vectors, collection, vec, mentioning, fetch or limit)
        if hits:
            return hits
    return vectors.near_vector(collection, vec, limit=fetch or limit)


def mention_refs(route: Any, question: str) -> list[str]:
    """The entity refs of what ``question`` names and text mentions (``route``: the prose route, or None)."""
    if route is None:
        return []
    try:
        return sorted({entity_ref(m.entity.label, m.entity.key) for m in route.entities(question)})
    except Exception as exc:  # the prose route is an extra: without it, search is not filtered
        log.warning("mention refs of the question failed: %s", exc)
        return []


def content_words(text: str) -> list[str]:
    """The question's content words (base forms, no function words)."""
    from esc.agents.query.words import FUNCTION_WORDS, tokenize

    return [t.base for t in tokenize(text) if t.low not in FUNCTION_WORDS and t.base not in FUNCTION_WORDS
            and t.low.isalpha() and len(t.low) > 2]  # fmt: skip


def _mentions(text: str, words: list[str]) -> tuple[bool, int]:
    from esc.agents.query.words import tokenize

    have = {t.base for t in tokenize(text)} | {t.low for t in tokenize(text)}
    hits = sum(1 for w in words if w in have)
    return hits > 0, hits


def answer_from_hits(
    hits: list[dict[str, Any]],
    contract_version: int,
    keep: Callable[[dict[str, Any]], bool] | None = None,
    names: list[str] | None = None,
    words: list[str] | None = None,
) -> Answer:
    """The best passage as the answer, or an abstention: when nothing is near enough (similarity below
    ``LOW_SIMILARITY``), or when no near passage mentions every one of ``names`` and some of ``words`` (the
    question's subject). Its confidence is the similarity, capped at ``MAX_CONFIDENCE``: a passage is evidence
    to read, not an extracted answer."""
    if keep is not None:
        kept = [h for h in hits if keep(h)]
        hits = kept or hits
    if not hits:
        return Answer.abstain("the vector index holds nothing near the question", contract_version)
    best = max(float(h.get("similarity") or 0.0) for h in hits)
    if best < LOW_SIMILARITY:
        return Answer.abstain(
            f"the nearest passage is too far from the question (similarity {best:.2f} < {LOW_SIMILARITY})",
            contract_version,
        )
    from esc.agents.query.words import base, tokenize

    need = [base(w) for n in (names or []) for w in [t.low for t in tokenize(n)]]
    want = [base(w) for w in (words or [])]
    good = []
    for h in sorted(hits, key=lambda x: -float(x.get("similarity") or 0.0)):
        text = str(h.get("text") or "")
        if float(h.get("similarity") or 0.0) < LOW_SIMILARITY:
            continue
        if need and not all(_mentions(text, [w])[0] for w in need):
            continue
        if want and not _mentions(text, want)[0]:
            continue
        good.append(h)
    if not good:
        what = ", ".join(repr(n) for n in names or []) or ", ".join(repr(w) for w in (words or [])[:3])
        return Answer.abstain(f"no passage near the question mentions {what}", contract_version)
    top = float(good[0].get("similarity") or 0.0)
    cites = [
        Citation(source=str(h["source"]), record_id=str(h["record_id"]), location=str(h.get("location") or ""))
        for h in good
        if h.get("source") is not None and h.get("record_id") is not None
    ]
    if not cites:
        return Answer.abstain("vector hits carry no source records", contract_version)
    text = str(good[0].get("text") or "")[:MAX_EVIDENCE_CHARS]
    return Answer(
        answer=text,
        citations=cites,
        route="vector",
        confidence=round(min(top, MAX_CONFIDENCE), 3),
        contract_version=contract_version,
    )
