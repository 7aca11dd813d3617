"""Read a question with the contract's vocabulary: which values, keys, types, attributes and relationships it
mentions, where, and which operation words (count, sum, superlative, comparison, year) it uses.

Pure and deterministic; ``planner.py`` turns the mentions into a plan.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

from agents.query.vocabulary import (
    DERIVED_VALUE,
    DERIVED_WORDS,
    DURATION_ATTR_WORDS,
    DURATION_WORDS,
    MANAGER_WORDS,
    MONEY_WORDS,
    PERSON_WORDS,
    QUANTITY_WORDS,
    STOPWORDS,
    Token,
    ValueHit,
    ValueIndex,
    Vocabulary,
    duration_score,
    norm_value,
    stem,
    tokenize,
    word_match,
)

MAX_TYPE_WORDS = 3
_ARTICLES = {"the", "a", "an", "of", "named", "called"}

CueKind = Literal["count", "sum", "avg", "min", "max", "most", "least"]
_CUES: list[tuple[tuple[str, ...], CueKind]] = [
    (("how", "many"), "count"),
    (("number", "of"), "count"),
    (("how", "much"), "sum"),
    (("in", "total"), "sum"),
    (("total",), "sum"),
    (("sum",), "sum"),
    (("average",), "avg"),
    (("avg",), "avg"),
    (("mean",), "avg"),
    (("minimum",), "min"),
    (("maximum",), "max"),
    *(((w,), "most") for w in ("most", "highest", "largest", "longest", "biggest", "greatest", "top", "maximum")),
    *(((w,), "least") for w in ("least", "lowest", "smallest", "shortest", "fewest", "cheapest", "minimum")),
]
_COMPARE = {
    "more": "gt", "greater": "gt", "longer": "gt", "higher": "gt", "larger": "gt", "over": "gt", "above": "gt",
    "exceeding": "gt", "less": "lt", "fewer": "lt", "shorter": "lt", "lower": "lt", "smaller": "lt", "under": "lt",
    "below": "lt", "cheaper": "lt",
}  # fmt: skip
_NUMBER = re.compile(r"[-+]?\d+(?:\.\d+)?")


@dataclass
class ValueMention:
    start: int
    end: int  # token span [start, end)
    text: str
    hits: set[ValueHit]
    quoted: bool


@dataclass
class KeyMention:
    start: int
    end: int
    entity: str
    attr: str
    value: int | str


@dataclass
class TypeMention:
    start: int
    end: int
    entity: str


@dataclass
class AttrMention:
    start: int
    end: int
    candidates: dict[tuple[str, str], float]  # (entity, attribute) -> score in (0, 1]
    implicit: str | None = None  # "duration" / "money" / "quantity" / "person" when matched through the lexicon


@dataclass
class RelMention:
    start: int
    end: int
    rel: str
    manager: bool = False  # "manager of X": X is the referencing side, the answer the referenced one


@dataclass
class Cue:
    start: int
    end: int
    kind: CueKind


@dataclass
class Compare:
    start: int
    end: int
    op: str
    value: float
    word: str


@dataclass
class Mentions:
    tokens: list[Token]
    values: list[ValueMention] = field(default_factory=list)
    keys: list[KeyMention] = field(default_factory=list)
    types: list[TypeMention] = field(default_factory=list)
    attrs: list[AttrMention] = field(default_factory=list)
    rels: list[RelMention] = field(default_factory=list)
    cues: list[Cue] = field(default_factory=list)
    compares: list[Compare] = field(default_factory=list)
    years: list[tuple[int, int]] = field(default_factory=list)  # (token index, year)
    unresolved_quotes: list[str] = field(default_factory=list)

    def cue(self, *kinds: str) -> Cue | None:
        return next((c for c in self.cues if c.kind in kinds), None)


# ------------------------------------------------------------------------------------------------ quoted values


def _quote_spans(text: str) -> list[list[tuple[int, int]]]:
    """Per opening quote, the candidate (start, end) character spans of the quoted text, longest first."""
    out = []
    for m in re.finditer(r"(?:(?<=\s)|^)(['\"‘“])", text):
        q = m.group(1)
        close = {"‘": "’", "“": "”"}.get(q, q)
        begin = m.end()
        cands = []
        for c in re.finditer(re.escape(close), text[begin:]):
            end = begin + c.start()
            after = text[end + 1 : end + 2]
            if end > begin and (after == "" or not after.isalnum()):
                cands.append((begin, end))
        if cands:
            out.append(sorted(cands, key=lambda s: s[0] - s[1]))
    return out


def _tokens_in(tokens: list[Token], start: int, end: int) -> tuple[int, int]:
    inside = [t.index for t in tokens if t.start >= start and t.end <= end]
    return (inside[0], inside[-1] + 1) if inside else (0, 0)


def read_values(text: str, tokens: list[Token], index: ValueIndex, m: Mentions) -> set[int]:
    """Quoted and unquoted value mentions; returns the token indexes they cover."""
    covered: set[int] = set()
    for cands in _quote_spans(text):
        chosen = next(((s, e) for s, e in cands if index.lookup(text[s:e])), None)
        if chosen is None:
            # a quoted string nothing holds: remember it (the planner abstains or searches text)
            s, e = cands[-1]
            a, b = _tokens_in(tokens, s, e)
            if b > a and not any(a < v.end and v.start < b for v in m.values):
                m.unresolved_quotes.append(text[s:e])
                covered |= set(range(a, b))
            continue
        s, e = chosen
        a, b = _tokens_in(tokens, s, e)
        if b > a:
            m.values.append(ValueMention(a, b, text[s:e], set(index.lookup(text[s:e])), True))
            covered |= set(range(a, b))
    found: list[ValueMention] = []
    n = len(tokens)
    for i in range(n):
        if i in covered or not tokens[i].capitalized:
            continue
        for j in range(min(n, i + index.max_words), i, -1):
            if any(k in covered for k in range(i, j)):
                continue
            span = tokens[i:j]
            if all(t.low in STOPWORDS for t in span):
                continue
            hits = index.hits.get(" ".join(t.low for t in span))
            if hits:
                found.append(ValueMention(i, j, text[span[0].start : span[-1].end], set(hits), False))
    # keep maximal spans only
    for v in found:
        if not any((o.start <= v.start and v.end <= o.end) and (o.end - o.start) > (v.end - v.start) for o in found):
            m.values.append(v)
            covered |= set(range(v.start, v.end))
    return covered


# ------------------------------------------------------------------------------------------------ schema words


def _match_seq(tokens: list[Token], i: int, words: list[str]) -> bool:
    if i + len(words) > len(tokens):
        return False
    return all(word_match(tokens[i + k].low, w) for k, w in enumerate(words))


_IGNORABLE = STOPWORDS - {"total", "name", "count", "names"}


def _attr_match(
    tokens: list[Token], i: int, free: list[bool], words: list[str], short: list[str]
) -> tuple[int, float, int] | None:
    """Longest run of an attribute's words (or its short form) starting at token ``i``: (content words matched,
    score, tokens spanned). Stopwords inside the name ("title of courtesy") do not count as matched content."""
    best: tuple[int, float, int] | None = None
    for phrase, weight in ((words, 1.0), (short, 0.9)):
        content_total = sum(1 for w in phrase if w not in _IGNORABLE) or 1
        for size in range(len(phrase), 0, -1):
            for off in range(0, len(phrase) - size + 1):
                part = phrase[off : off + size]
                if all(w in _IGNORABLE for w in part) or part[-1] in _IGNORABLE:
                    continue
                if _match_seq(tokens, i, part) and all(free[i + k] for k in range(size)):
                    content = sum(1 for w in part if w not in _IGNORABLE)
                    cand = (content, weight * content / content_total, size)
                    if best is None or cand[:2] > best[:2]:
                        best = cand
                    break
    return best


def read_schema_words(tokens: list[Token], vocab: Vocabulary, covered: set[int], m: Mentions) -> None:
    n = len(tokens)
    free = [i not in covered for i in range(n)]
    # types (longest phrase first)
    for i in range(n):
        if not free[i]:
            continue
        found: tuple[int, str] | None = None
        for info in vocab.types.values():
            words = info.words
            if (
                words and len(words) <= MAX_TYPE_WORDS and _match_seq(tokens, i, words)
                and all(free[i + k] for k in range(len(words)))
                and (found is None or len(words) > found[0])
            ):
                found = (len(words), info.name)
        if found is not None:
            m.types.append(TypeMention(i, i + found[0], found[1]))
    # keys: "<type> <number or code>"
    for t in m.types:
        info = vocab.types[t.entity]
        if t.end < n and len(info.key) == 1 and free[t.end]:
            tok = tokens[t.end]
            attr = info.attrs.get(info.key[0])
            if attr is not None and tok.text.isdigit() and attr.type == "int":
                m.keys.append(KeyMention(t.start, t.end + 1, t.entity, attr.name, int(tok.text)))
    key_tokens = {k.end - 1 for k in m.keys}
    # attributes
    for i in range(n):
        if not free[i] or i in key_tokens:
            continue
        cands: dict[tuple[str, str], float] = {}
        longest = 0
        span = 1
        implicit = None
        low = tokens[i].low
        wants_id = any(tokens[k].low in ("id", "code") for k in range(i, min(n, i + 4)))
        for info in vocab.types.values():
            for a in info.attrs.values():
                if a.identifier and not wants_id:
                    continue
                best = _attr_match(tokens, i, free, a.words, a.short)
                if best is None:
                    continue
                content, score, size = best
                if content > longest:
                    cands, longest, span = {}, content, size
                if content == longest:
                    cands[(info.name, a.name)] = score
                    span = max(span, size)
        if not cands or max(cands.values()) < 0.6:
            lex: list[tuple[frozenset[str], str]] = [
                (DURATION_WORDS, "duration"),
                (MONEY_WORDS, "money"),
                (QUANTITY_WORDS, "quantity"),
                (PERSON_WORDS, "person"),
            ]
            for words_set, kind in lex:
                if low in words_set:
                    implicit = kind
                    for info in vocab.types.values():
                        for a in info.attrs.values():
                            if kind == "duration" and set(a.words) & DURATION_ATTR_WORDS and a.numeric:
                                cands[(info.name, a.name)] = duration_score(a.words)
                            elif kind == "money" and a.semantic == "money":
                                cands[(info.name, a.name)] = 0.6
                            elif kind == "quantity" and "quantity" in a.words and a.numeric:
                                cands[(info.name, a.name)] = 0.8
                            elif kind == "person" and a.name in info.display and a.type in ("string", "text"):
                                cands[(info.name, a.name)] = 0.3
                    if kind == "money" and low in DERIVED_WORDS and vocab.derived:
                        implicit = "value"
                        for info in vocab.types.values():
                            if info.name in vocab.derived:
                                cands[(info.name, DERIVED_VALUE)] = 0.7
                    span = 1
                    break
        if cands:
            m.attrs.append(AttrMention(i, i + span, cands, implicit))
    # relationships whose name says more than their target type ("support rep", "reports to", "manager staff")
    for i in range(n):
        if not free[i]:
            continue
        for r in vocab.rels:
            if not r.words:
                continue
            for size in range(len(r.words), 0, -1):
                if any(_match_seq(tokens, i, r.words[off : off + size]) for off in range(len(r.words) - size + 1)):
                    m.rels.append(RelMention(i, i + size, r.name))
                    break
        if tokens[i].low in MANAGER_WORDS:
            for r in vocab.rels:
                if r.from_entity == r.to_entity and any(stem(w) == "report" for w in r.words):
                    m.rels.append(RelMention(i, i + 1, r.name, manager=True))


def read_operations(tokens: list[Token], m: Mentions) -> None:
    lows = [t.low for t in tokens]
    n = len(lows)
    for i in range(n):
        for words, kind in _CUES:
            if tuple(lows[i : i + len(words)]) == words:
                m.cues.append(Cue(i, i + len(words), kind))
                break
        word = lows[i]
        if m.cues and m.cues[-1].start == i and words == ("number", "of") and i > 0 and lows[i - 1] not in (
            "the", "a", "total", "what", "is"
        ):
            m.cues.pop()  # "phone number of": an attribute, not a count
        if word in _COMPARE and i + 1 < n:
            j = i + 1
            if j < n and lows[j] in ("than", "to"):
                j += 1
            if j < n and _NUMBER.fullmatch(lows[j]):
                m.compares.append(Compare(i, j + 1, _COMPARE[word], float(lows[j]), word))
        if word in ("in", "during", "of") and i + 1 < n and re.fullmatch(r"(19|20)\d\d", lows[i + 1]):
            m.years.append((i + 1, int(lows[i + 1])))


def read(question: str, vocab: Vocabulary, index: ValueIndex) -> Mentions:
    tokens = tokenize(question)
    m = Mentions(tokens)
    covered = read_values(question, tokens, index, m)
    read_operations(tokens, m)
    compare_tokens = {k for c in m.compares for k in range(c.start + 1, c.end)} | {i for i, _ in m.years}
    read_schema_words(tokens, vocab, covered | compare_tokens, m)
    # a partial attribute reading of a word that fully names a type ("orders") gives way to the type
    m.attrs = [
        a for a in m.attrs
        if max(a.candidates.values()) >= 0.9 or not any(t.start == a.start and t.end == a.end for t in m.types)
    ]  # fmt: skip
    # a value that is only a schema word ("Total", "Country") is not a value mention
    m.values = [
        v for v in m.values
        if v.quoted or not any(t.start <= v.start and v.end <= t.end for t in m.types)
    ]  # fmt: skip
    return m


def span_text(m: Mentions, start: int, end: int) -> str:
    return " ".join(t.text for t in m.tokens[start:end])


__all__ = ["Mentions", "norm_value", "read"]
