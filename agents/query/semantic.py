"""The last resort for a noun nothing else matched: its meaning, compared with every type's and field's name.

Two independent signals must agree: the cosine similarity of all-MiniLM-L6-v2 sentence embeddings (the local
model the project already runs for vectors) and WordNet's Wu-Palmer similarity of the head nouns. Either one
alone is too loose to trust (MiniLM puts "song" nearer "album" than "track"; Wu-Palmer puts "salary" next to
"payment"), so a match needs their mean to reach ``ACCEPT`` and to beat the runner-up by ``MARGIN``; it enters the
plan with at most ``MAX_SCORE``, so an answer resting on it is never reported as confident.

The element embeddings are computed once per grounding (contract version), and only when a question has such a
noun; without the model (``ESC_EMBEDDER`` other than minilm, or the package missing) nothing matches here.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

from esc.agents.query.phrases import Element
from esc.agents.query.vocabulary import Vocabulary
from esc.agents.query.wordnet_relations import wup
from esc.agents.query.words import base

log = logging.getLogger(__name__)

ACCEPT = 0.74
MARGIN = 0.05
MAX_SCORE = 0.7


class SemanticMatcher:
    def __init__(self, vocab: Vocabulary) -> None:
        self.vocab = vocab
        self._lock = threading.Lock()
        self._state: tuple[Any, list[Element], list[str], Any] | None = None
        self._failed = False

    def _load(self) -> tuple[Any, list[Element], list[str], Any] | None:
        if self._state is not None or self._failed:
            return self._state
        with self._lock:
            if self._state is not None or self._failed:
                return self._state
            try:
                from esc.agents.embedding import get_embedder, minilm_available

                if not minilm_available():
                    self._failed = True
                    return None
                embedder = get_embedder("minilm")
                elements: list[Element] = []
                texts: list[str] = []
                for info in self.vocab.types.values():
                    elements.append(Element("type", info.name, info.name))
                    texts.append(" ".join(info.words))
                    for a in info.attrs.values():
                        if a.identifier or a.reference:
                            continue
                        elements.append(Element("attr", info.name, a.name))
                        texts.append(" ".join(a.words))
                matrix = embedder.embed(texts)
            except Exception as exc:  # the model is optional: without it this last resort is off
                log.info("semantic matching is off: %s", exc)
                self._failed = True
                return None
            self._state = (embedder, elements, texts, matrix)
            return self._state

    def match(self, phrase: str) -> tuple[Element, float] | None:
        """The one element ``phrase`` means, with a score of at most ``MAX_SCORE``, or None."""
        state = self._load()
        if state is None or not phrase.strip():
            return None
        embedder, elements, texts, matrix = state
        vec = embedder.embed([phrase])[0]
        sims = matrix @ vec
        head = base(phrase.split()[-1])
        scored = []
        for el, text, sim in zip(elements, texts, sims, strict=True):
            words = text.split()
            w = wup(head, base(words[-1])) if words else 0.0
            scored.append(((float(sim) + w) / 2.0, el))
        scored.sort(key=lambda x: -x[0])
        if not scored or scored[0][0] < ACCEPT:
            return None
        best, el = scored[0]
        rival = next((s for s, e in scored[1:] if e.entity != el.entity or e.kind != el.kind), 0.0)
        if best - rival < MARGIN:
            return None
        return el, min(MAX_SCORE, round(best - 0.1, 3))
