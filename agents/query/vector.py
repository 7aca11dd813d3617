"""Vector route: descriptive questions answered from the nearest text chunks in the vector index.

The answer is the best chunk's text (the evidence), cited by its source record. Retrieval whose best similarity is
below ``LOW_SIMILARITY`` (0.3, the ESC paper's default) is flagged ``low_confidence`` and its confidence discounted.
Optionally a ``schema_filter`` keeps only chunks whose entity label or source the question's grounding names
(schema-conditioned routing), falling back to the unfiltered hits when the filter leaves nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from agents.embedding import Embedder
from agents.query.answer import Answer, Citation
from agents.stores.base import VectorStore

LOW_SIMILARITY = 0.3
LOW_DISCOUNT = 0.5
MAX_EVIDENCE_CHARS = 1200


def search(
    vectors: VectorStore, embedder: Embedder, collection: str, question: str, limit: int = 5, fetch: int | None = None
) -> list[dict[str, Any]]:
    vec = embedder.embed_one(question)
    return vectors.near_vector(collection, [float(x) for x in vec], limit=fetch or limit)


def answer_from_hits(
    hits: list[dict[str, Any]], contract_version: int, keep: Callable[[dict[str, Any]], bool] | None = None
) -> Answer:
    if keep is not None:
        kept = [h for h in hits if keep(h)]
        hits = kept or hits
    if not hits:
        return Answer.abstain("the vector index holds nothing near the question", contract_version)
    best = max(float(h.get("similarity") or 0.0) for h in hits)
    cites = [
        Citation(source=str(h["source"]), record_id=str(h["record_id"]), location=str(h.get("location") or ""))
        for h in hits
        if h.get("source") is not None and h.get("record_id") is not None
    ]
    if not cites:
        return Answer.abstain("vector hits carry no source records", contract_version)
    low = best < LOW_SIMILARITY
    text = str(hits[0].get("text") or "")[:MAX_EVIDENCE_CHARS]
    return Answer(
        answer=text,
        citations=cites,
        route="vector",
        confidence=round(best * (LOW_DISCOUNT if low else 1.0), 3),
        contract_version=contract_version,
        low_confidence=low,
        reason="best similarity below 0.3: weak evidence" if low else None,
    )
