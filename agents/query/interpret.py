"""Deterministic question -> ``QueryPlan``: reads the question (``reading.py``), pins its anchors
(``anchors.py``), decides what is asked and how (focus, operation, measure), finds the join path (``paths.py``)
and assembles a plan (``assemble.py``) with a confidence built from the scores of every reading it used.

It declines (``Abstain`` with the reason) rather than guess: a name the data does not hold, a content word no
part of the schema matches, a question about the future or an opinion, or nothing to answer with.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from esc.agents.query.anchors import (
    Anchor,
    date_filters,
    flag_filters,
    key_anchors,
    literal_anchors,
    value_anchors,
)
from esc.agents.query.phrases import Element, PhraseIndex
from esc.agents.query.plan import Filter, QueryPlan
from esc.agents.query.reading import Reading, read
from esc.agents.query.semantic import SemanticMatcher
from esc.agents.query.value_index import ValueIndex
from esc.agents.query.vocabulary import Vocabulary
from esc.agents.query.wordnet import is_word
from esc.agents.query.words import PERSON_QUESTION

DESCRIPTIVE_OPENERS = frozenset({"why", "explain", "describe", "summarize", "summarise", "discuss"})


@dataclass
class Planned:
    plan: QueryPlan
    answer: list[str]  # aliases that form the answer, joined by a space (["first", "last"] for people)
    route: str  # lookup | traverse | aggregate
    confidence: float
    scalar: bool  # a single value is expected
    notes: list[str] = field(default_factory=list)
    ties: str | None = None  # superlatives: the alias whose value ties are kept on
    top: int | None = None  # superlatives: how many the question asked for
    unmatched: list[str] = field(default_factory=list)


@dataclass
class Abstain:
    reason: str
    descriptive: bool = False  # nothing structured grounds it, but text may (the vector route's evidence rules)
    unmatched: list[str] = field(default_factory=list)
    names: list[str] = field(default_factory=list)  # names the data does not hold: a passage must mention them


class Decline(Exception):
    """The structured reading gives up. ``descriptive``: text may still answer it (the vector route tries,
    under the evidence rules of ``agents.query.vector``); False for questions no data answers (the future,
    opinions)."""

    def __init__(self, reason: str, descriptive: bool = True) -> None:
        super().__init__(reason)
        self.reason = reason
        self.descriptive = descriptive


@dataclass
class Focus:
    entity: str
    attr: str | None  # None: the entity's display name
    score: float
    start: int
    element: Element | None = None
    via: Element | None = None  # the relationship the focus was reached by ("support rep" -> Employee)
    inverse: bool = False


class Interpreter:
    def __init__(
        self, vocab: Vocabulary, values: ValueIndex, phrases: PhraseIndex, semantic: SemanticMatcher | None = None
    ) -> None:
        self.vocab = vocab
        self.values = values
        self.phrases = phrases
        self.semantic = semantic

    def key_of(self, entity: str) -> tuple[str, str] | None:
        info = self.vocab.types.get(entity)
        if info is None or len(info.key) != 1 or info.key[0] not in info.attrs:
            return None
        a = info.attrs[info.key[0]]
        return a.name, ("int" if a.type == "int" else "string")

    def read(self, question: str) -> Reading:
        return read(question, self.phrases, self.values, self.key_of, _is_word)

    def plan(self, question: str) -> Planned | Abstain:
        first = question.strip().split(" ", 1)[0].casefold().strip("?,.!:")
        if first in DESCRIPTIVE_OPENERS:
            return Abstain(f"a descriptive question ('{first} ...'): text evidence, not a structured lookup", True)
        r = self.read(question)
        from esc.agents.query.assemble import Job

        job = Job(self, r)
        try:
            planned = job.build()
            factor = job.unused_mentions(planned.plan)
            if factor < 1.0:
                planned.confidence = round(planned.confidence * factor, 3)
                planned.notes = job.notes
            return planned
        except Decline as d:
            names = [r.text(a, b) for a, b, _ in r.unknown]
            return Abstain(d.reason, d.descriptive, job.unmatched(), names)


def _is_word(word: str) -> bool:
    from esc.agents.query.reading import is_english_word

    return is_english_word(word) or is_word(word)


__all__ = [
    "PERSON_QUESTION",
    "Abstain",
    "Anchor",
    "Any",
    "Decline",
    "Filter",
    "Focus",
    "Interpreter",
    "Planned",
    "date_filters",
    "flag_filters",
    "key_anchors",
    "literal_anchors",
    "value_anchors",
]
