"""The mentions a question reading finds (values, keys, schema words, operations, numbers, comparisons, dates)
and the reading that holds them with the tokens they cover."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from esc.agents.query.phrases import Element, Link
from esc.agents.query.value_index import ValueHit
from esc.agents.query.words import (
    Token,
)

GENERIC_NOUNS = frozenset({"item", "items", "thing", "things", "entry", "entries", "record", "records", "row",
                           "rows", "one", "ones", "entity", "entities", "object", "objects", "person", "people",
                           "times", "time"})  # fmt: skip
TYPO_CUTOFF = 85.0


@dataclass
class Span:
    start: int
    end: int

    def tokens(self) -> range:
        return range(self.start, self.end)


@dataclass
class ValueMention(Span):
    text: str
    hits: set[ValueHit]
    quoted: bool
    score: float = 1.0
    how: str = "exact"


@dataclass
class KeyMention(Span):
    entity: str
    attr: str
    value: Any
    score: float = 1.0


@dataclass
class SchemaMention(Span):
    links: dict[Element, Link]

    def of(self, kind: str) -> dict[Element, Link]:
        return {e: lk for e, lk in self.links.items() if e.kind == kind}

    @property
    def best(self) -> float:
        return max((lk.score for lk in self.links.values()), default=0.0)


@dataclass
class OpMention(Span):
    kind: str  # count | sum | avg | min | max | most | least | recent
    n: int | None = None  # "top 3"
    hint: str | None = None  # what the superlative implies about the measure: duration, time, money, size, ...


@dataclass
class NumberMention(Span):
    value: float
    unit: str | None = None  # "money", a duration unit word, or another unit noun ("feet", "seats")
    seconds: float | None = None  # a duration in seconds


@dataclass
class CompareMention(Span):
    op: str  # gt | gte | lt | lte | eq
    number: NumberMention
    hint: str | None = None  # duration / money / time / size / height ...
    word: str = ""


@dataclass
class DateMention(Span):
    year: int | None = None
    month: int | None = None
    day: int | None = None
    hour: int | None = None
    op: str = "eq"  # eq | lt | gt | gte | lte


@dataclass
class Reading:
    question: str
    tokens: list[Token]
    values: list[ValueMention] = field(default_factory=list)
    keys: list[KeyMention] = field(default_factory=list)
    schema: list[SchemaMention] = field(default_factory=list)
    ops: list[OpMention] = field(default_factory=list)
    compares: list[CompareMention] = field(default_factory=list)
    dates: list[DateMention] = field(default_factory=list)
    numbers: list[NumberMention] = field(default_factory=list)  # numbers no comparison took
    negated: set[int] = field(default_factory=set)  # token indexes of negation words
    unknown: list[tuple[int, int, bool]] = field(default_factory=list)  # names nothing holds: (start, end, quoted)
    unconsumed: list[int] = field(default_factory=list)
    generic: list[int] = field(default_factory=list)  # "items", "records": some type, to be inferred
    future: bool = False
    opinion: bool = False
    typos: dict[int, str] = field(default_factory=dict)  # token -> the word it was read as
    used: set[int] = field(default_factory=set)

    def take(self, span: Span) -> None:
        self.used.update(span.tokens())

    def free(self, i: int, j: int | None = None) -> bool:
        return all(k not in self.used for k in range(i, (j if j is not None else i + 1)))

    def op(self, *kinds: str) -> OpMention | None:
        return next((o for o in self.ops if o.kind in kinds), None)

    def text(self, start: int, end: int) -> str:
        if start >= end:
            return ""
        return self.question[self.tokens[start].start : self.tokens[end - 1].end]

    def low(self, i: int) -> str:
        return self.tokens[i].low if 0 <= i < len(self.tokens) else ""
