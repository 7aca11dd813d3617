"""What a question mentions, where, and how sure each reading is: the mention lattice the interpreter builds a
plan from.

Mentions, read in this order (a token belongs to at most one mention):

1. quoted values (``'So Cruel'``), looked up in the value index exactly, accent-insensitively, by alias or fuzzily;
   a quoted string nothing holds is kept as an unknown name;
2. closed-class readings: operation words (count, sum, average, min/max, superlatives, top N, most recent),
   comparisons with their number and unit ("longer than 5 minutes", "above $15", "more than 300"), dates ("in
   2021", "March 2022", "January 1, 2013", "before 2010"), clock times ("at 9 am"), negations;
3. capitalized runs that name stored values exactly ("Frank Ralston", "USA", "Rock");
4. schema phrases (types, attributes, relationships) from the contract's phrase index, longest first, with
   "<type> <number or code>" read as a key ("invoice 244", "store 1");
5. the remaining content words matched loosely against stored values (lower case, accents, typos:
   "luis goncalves", "aerosmtih", "led zepelin"); a capitalized or quoted run that still matches nothing is an
   unknown name ("Peter Parker"), and every other content word left over is reported as unconsumed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from agents.query.phrases import Element, Link, PhraseIndex
from agents.query.value_index import ValueHit, ValueIndex, ValueMatch
from agents.query.words import (
    AT_LEAST,
    AT_MOST,
    AVG_CUES,
    CLOCK,
    COMPARATIVES,
    COUNT_CUES,
    DURATION_UNITS,
    FUNCTION_WORDS,
    FUTURE_WORDS,
    LENGTH_UNITS,
    MONEY_SYMBOLS,
    MONTHS,
    NEGATIONS,
    NEXT_WORDS,
    NUMBER_WORDS,
    OPENERS,
    OPINION_WORDS,
    ORDINAL_SUFFIX,
    RECENT,
    SUM_CUES,
    SUPERLATIVES,
    TIME_UNITS,
    YEAR,
    Token,
    base,
    tokenize,
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


# ------------------------------------------------------------------------------------------------ quoted values


def _quote_spans(text: str) -> list[list[tuple[int, int]]]:
    """Per opening quote, the candidate (start, end) character spans of the quoted text, longest first."""
    out = []
    for m in re.finditer(r"(?:(?<=[\s(])|^)(['\"‘“])", text):
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


def _accept(vm: ValueMatch | None, span_text: str) -> ValueMatch | None:
    """Short aliases ("US", "CAN", "UK") are also ordinary words: only written in capitals do they name a value."""
    if vm is not None and vm.how == "alias" and len(vm.key) <= 3 and not span_text.isupper():
        return None
    return vm


def read_quoted(r: Reading, index: ValueIndex) -> None:
    for cands in _quote_spans(r.question):
        chosen = None
        for s, e in cands:
            a, b = _tokens_in(r.tokens, s, e)
            if b <= a or not r.free(a, b):
                continue
            vm = _accept(index.match(r.question[s:e]), r.question[s:e])
            if vm is not None:
                chosen = (a, b, s, e, vm)
                break
        if chosen is None:
            s, e = cands[-1]
            a, b = _tokens_in(r.tokens, s, e)
            if b > a and r.free(a, b):
                r.unknown.append((a, b, True))
                r.used.update(range(a, b))
            continue
        a, b, s, e, vm = chosen
        r.values.append(ValueMention(a, b, r.question[s:e], set(vm.hits), True, vm.score, vm.how))
        r.used.update(range(a, b))


# ------------------------------------------------------------------------------------------------ closed class


def _seq(r: Reading, i: int, words: tuple[str, ...]) -> bool:
    return all(r.free(i + k) and r.low(i + k) == w for k, w in enumerate(words)) and i + len(words) <= len(r.tokens)


def _number_at(r: Reading, i: int) -> NumberMention | None:
    """A number at token i ("15", "$15", "5,000", "two"), with the unit word after it, if any."""
    if i >= len(r.tokens) or not r.free(i):
        return None
    t = r.tokens[i]
    value = t.number
    if value is None and t.low in NUMBER_WORDS:
        value = float(NUMBER_WORDS[t.low])
    if value is None:
        return None
    money = t.start > 0 and r.question[t.start - 1] in MONEY_SYMBOLS
    end = i + 1
    unit: str | None = "money" if money else None
    seconds = None
    nxt = r.low(i + 1)
    if nxt in DURATION_UNITS and r.free(i + 1):
        unit, seconds, end = nxt, value * DURATION_UNITS[nxt], i + 2
    elif nxt in ("dollars", "dollar", "euros", "euro", "pounds", "usd", "eur") and r.free(i + 1):
        unit, end = "money", i + 2
    elif nxt in LENGTH_UNITS and r.free(i + 1):
        unit, end = nxt, i + 2
    return NumberMention(i, end, value, unit, seconds)


def _date_at(r: Reading, i: int) -> DateMention | None:
    """Month names with a day and/or year, ISO dates, and years (with the preposition before them)."""
    n = len(r.tokens)
    low = r.low(i)
    if not r.free(i):
        return None
    if low in MONTHS and not (low == "may" and not r.tokens[i].text[:1].isupper()):
        month = MONTHS[low]
        j = i + 1
        day = year = None
        if j < n and r.free(j) and (m := ORDINAL_SUFFIX.match(r.low(j)) or re.fullmatch(r"\d{1,2}", r.low(j))):
            day = int(m.group(1) if m.groups() else m.group(0))
            j += 1
        if j < n and r.free(j) and YEAR.match(r.low(j)):
            year = int(r.low(j))
            j += 1
        short = low in ("mar", "jan", "jun", "jul", "dec", "oct", "aug", "sep", "nov")
        if day is None and year is None and short and not r.tokens[i].text[:1].isupper():
            return None  # "mar" / "dec" alone are words, not months
        if day is not None and day > 31:
            return None
        return DateMention(i, j, year, month, day)
    if (m := ORDINAL_SUFFIX.match(low) or re.fullmatch(r"\d{1,2}", low)) and r.low(i + 1) in MONTHS:
        day = int(m.group(1) if m.groups() else m.group(0))
        j = i + 2
        year = int(r.low(j)) if j < n and YEAR.match(r.low(j)) else None
        return DateMention(i, j + (1 if year else 0), year, MONTHS[r.low(i + 1)], day)
    if YEAR.match(low) and r.tokens[i].hyphen_next and re.fullmatch(r"\d{2}", r.low(i + 1)):
        month = int(r.low(i + 1))  # an ISO date: 2013-01-02, 2022-03
        day = int(r.low(i + 2)) if r.tokens[i + 1].hyphen_next and re.fullmatch(r"\d{2}", r.low(i + 2)) else None
        if 1 <= month <= 12:
            return DateMention(i, i + (3 if day else 2), int(low), month, day)
    return None


def read_closed_class(r: Reading) -> None:
    toks = r.tokens
    n = len(toks)
    lows = [t.low for t in toks]
    free = [w if r.free(i) else "" for i, w in enumerate(lows)]
    r.future = any(w in FUTURE_WORDS for w in free) or any(
        free[i] in NEXT_WORDS and free[i + 1] in TIME_UNITS for i in range(n - 1)
    )
    r.opinion = any(w in OPINION_WORDS for w in free)
    # operations
    i = 0
    while i < n:
        hit = False
        for cues, kind in ((COUNT_CUES, "count"), (SUM_CUES, "sum"), (AVG_CUES, "avg"), (RECENT, "recent")):
            for words in cues:
                if _seq(r, i, words):
                    if kind == "count" and words == ("number", "of") and i > 0 and lows[i - 1] not in (
                        "the", "a", "total", "what", "is", "what's", "s"
                    ):
                        continue  # "phone number of": an attribute
                    if kind == "recent" and words == ("last",) and not (i + 1 < n and r.free(i + 1)):
                        continue
                    if kind == "sum" and words == ("total",) and i + 1 < n and lows[i + 1] in ("number", "count"):
                        continue  # "the total number of": a count
                    op = OpMention(i, i + len(words), kind, hint="time" if kind == "recent" else None)
                    r.ops.append(op)
                    r.take(op)
                    i += len(words)
                    hit = True
                    break
            if hit:
                break
        if hit:
            continue
        w = lows[i]
        if w in SUPERLATIVES and r.free(i):
            direction, hint = SUPERLATIVES[w]
            kind = "most" if direction == "desc" else "least"
            end = i + 1
            top_n = None
            if (num := _number_at(r, i + 1)) is not None and num.value.is_integer() and 1 < num.value <= 100:
                top_n, end = int(num.value), i + 2  # "top 3", "most 5"
            elif w in ("maximum", "max", "minimum", "min") and not (i + 1 < n and lows[i + 1] in ("of",)):
                kind = "max" if direction == "desc" else "min"
            op = OpMention(i, end, kind, top_n, hint)
            r.ops.append(op)
            r.take(op)
            i = end
            continue
        if w in NEGATIONS:
            r.negated.add(i)  # not taken: "no" may be part of a name ("ord no", "flight no")
        i += 1
    # "how long" / "how old" / "how much"
    for i in range(n - 1):
        if lows[i] == "how" and lows[i + 1] in ("long", "old", "much", "far", "high", "big") and r.free(i + 1):
            r.used.update((i, i + 1))
    # dates, then comparisons and numbers
    i = 0
    while i < n:
        d = _date_at(r, i)
        if d is not None:
            prev = lows[i - 1] if i > 0 else ""
            if prev in ("before", "until", "after", "since") and r.free(i - 1):
                d.op = {"before": "lt", "until": "lte", "after": "gt", "since": "gte"}[prev]
                d.start = i - 1
            r.dates.append(d)
            r.take(d)
            i = d.end
            continue
        i += 1
    # "between 100 and 120 minutes": two comparisons, the unit read from the second number
    for i in range(n):
        if r.free(i) and lows[i] == "between" and i + 3 < n and lows[i + 2] == "and":
            lo, hi = _number_at(r, i + 1), _number_at(r, i + 3)
            if lo is None or hi is None:
                continue
            if lo.unit is None and hi.unit is not None:
                lo = NumberMention(lo.start, lo.end, lo.value, hi.unit,
                                   lo.value * (hi.seconds / hi.value) if hi.seconds is not None and hi.value else None)  # fmt: skip
            c1 = CompareMention(i, lo.end, "gte", lo, None, "between")
            c2 = CompareMention(i, hi.end, "lte", hi, None, "between")  # both read the field named before it
            r.compares.extend([c1, c2])
            r.used.update(range(i, hi.end))
    for i in range(n):
        if not r.free(i):
            continue
        w = lows[i]
        if w in COMPARATIVES or any(_seq(r, i, p) for p in AT_LEAST + AT_MOST):
            cmp_op, hint = COMPARATIVES.get(w, ("gte", None))
            j = i + 1
            for p in AT_LEAST:
                if _seq(r, i, p):
                    cmp_op, j = "gte", i + len(p)
            for p in AT_MOST:
                if _seq(r, i, p):
                    cmp_op, j = "lte", i + len(p)
            if j < n and lows[j] in ("than", "to") and r.free(j):
                j += 1
            if j < n and lows[j] in ("a", "an") and r.low(j + 1) in DURATION_UNITS:
                num = NumberMention(j, j + 2, 1.0, r.low(j + 1), DURATION_UNITS[r.low(j + 1)])
            else:
                num = _number_at(r, j)
            if num is None:
                continue
            if YEAR.match(r.low(num.start)) and num.unit is None and hint in (None, "time") and w in (
                "before", "after", "since", "until"
            ):
                continue  # a year: read as a date above
            c = CompareMention(i, num.end, cmp_op, num, hint, w)
            r.compares.append(c)
            r.take(c)
    # "in 2021", "during 2021", "before 2010" (a bare number is not a year: "rental 2169")
    for i in range(n):
        if r.free(i) and YEAR.match(lows[i]) and i > 0 and r.free(i - 1):
            prev = lows[i - 1]
            if prev not in ("in", "during", "of", "for", "before", "until", "after", "since", "year"):
                continue
            start = i - 1
            date_op = "eq"
            if prev in ("before", "until", "after", "since"):
                date_op = {"before": "lt", "until": "lte", "after": "gt", "since": "gte"}[prev]
            d = DateMention(start, i + 1, int(lows[i]), op=date_op)
            r.dates.append(d)
            r.take(d)
    # clock times: "at 9 am", "at noon", "9:30"
    for i in range(n):
        if not r.free(i):
            continue
        if lows[i] in ("noon", "midday", "midnight") and i > 0 and lows[i - 1] in ("at", "by", "before", "after"):
            hour = 0 if lows[i] == "midnight" else 12
            start = i - 1
            _attach_hour(r, hour, start, i + 1)
            continue
        m = CLOCK.match(lows[i])
        if m and r.low(i + 1) in ("am", "pm", "a", "p", "o'clock", "oclock"):
            hour = int(m.group(1)) % 12 + (12 if r.low(i + 1).startswith("p") else 0)
            if 0 <= hour < 24:
                start = i - 1 if i > 0 and lows[i - 1] == "at" else i
                _attach_hour(r, hour, start, i + 2)


def _attach_hour(r: Reading, hour: int, start: int, end: int) -> None:
    """A clock time joins the date read next to it, or stands alone."""
    near = next((d for d in r.dates if d.hour is None and (d.end == start or d.start == end)), None)
    if near is not None:
        near.hour = hour
        near.start, near.end = min(near.start, start), max(near.end, end)
    else:
        near = DateMention(start, end, hour=hour)
        r.dates.append(near)
    r.used.update(range(start, end))


def read_numbers(r: Reading) -> None:
    """Numbers no comparison, date or key took (an attribute's value: "flight 1545", "with 2 engines"); number
    words ("in one order") only count inside comparisons."""
    for i in range(len(r.tokens)):
        if r.tokens[i].number is None:
            continue
        num = _number_at(r, i)
        if num is not None:
            r.numbers.append(num)
            r.take(num)


# ------------------------------------------------------------------------------------------------ values


def read_capitalized(r: Reading, index: ValueIndex, phrases: PhraseIndex) -> None:
    """Runs starting with a capital (or digit) that name stored values exactly (maximal spans win). A run of
    two or more capitalized words is read whole first: with a typo ("Penelope Cronin"), or in part without the
    type word it ends with ("Seattle-Tacoma International Airport" -> "Seattle Tacoma Intl"), before any of
    its words alone ("International Airport" is also a name)."""
    for a, b in _runs(r, lambda t: t.capitalized and t.low not in FUNCTION_WORDS and not t.low.isdigit()):
        if b - a < 2 or (a == 0 and r.tokens[0].low in OPENERS):
            continue
        raw = r.text(a, b)
        vm = _accept(index.match(raw, fuzzy=True), raw)
        end = b
        if vm is None or (vm.how == "fuzzy" and vm.score < 0.8):
            while end - a > 1 and any(e.kind == "type" for e in phrases.lookup((r.tokens[end - 1].base,))):
                end -= 1  # the type word stays for the schema reading
            vm = index.partial(r.text(a, end)) if end - a >= 2 else None
        if vm is not None and (vm.how != "fuzzy" or vm.score >= 0.8):
            r.values.append(ValueMention(a, end, r.text(a, end), set(vm.hits), False, vm.score, vm.how))
            r.take(r.values[-1])
    n = len(r.tokens)
    found: list[ValueMention] = []
    for i in range(n):
        t = r.tokens[i]
        # a capitalized function word starts a name only inside the sentence ("the album Let There Be Rock")
        if not r.free(i) or not t.capitalized or (t.low in FUNCTION_WORDS and (i == 0 or not t.text[:1].isupper())):
            continue
        for j in range(min(n, i + index.max_words), i, -1):
            if not r.free(i, j):
                continue
            span = r.tokens[i:j]
            if span[-1].low in FUNCTION_WORDS and not span[-1].text[:1].isupper():
                continue
            if t.low in FUNCTION_WORDS and j - i < 2:
                continue
            raw = r.text(i, j)
            vm = _accept(index.match(raw, fuzzy=False), raw)
            if vm is not None and vm.how in ("exact", "ascii", "alias", "squeezed"):
                found.append(ValueMention(i, j, raw, set(vm.hits), False, vm.score, vm.how))
                break
    _keep_maximal(r, found)


def read_capitalized_loose(r: Reading, index: ValueIndex, phrases: PhraseIndex) -> None:
    """Capitalized runs no exact value took: the whole run fuzzily first ("Camembert Pierot", "Penelope
    Cronin"), else the longest sub-run whose words all belong to one stored value (a shortened name: "United",
    "Denver International"). A run that is itself a schema word ("Order date") is not a name."""
    for a, b in _runs(r, lambda t: t.capitalized and t.low not in FUNCTION_WORDS and not t.low.isdigit()):
        raw = r.text(a, b)
        letters = sum(len(t.low) for t in r.tokens[a:b])
        if b - a >= 2 and letters >= 6:
            vm = _accept(index.match(raw, fuzzy=True), raw)
            if vm is not None and vm.how == "fuzzy":
                r.values.append(ValueMention(a, b, raw, set(vm.hits), False, vm.score, vm.how))
                r.take(r.values[-1])
                continue
        done = False
        for size in range(b - a, 0, -1):
            for i in range(a, b - size + 1):
                if not r.free(i, i + size):
                    continue
                if phrases.lookup(tuple(t.base for t in r.tokens[i : i + size])):
                    continue
                if i == 0 and is_english_word(r.tokens[0].low):
                    continue  # the question's first word is capitalized anyway
                sub = r.text(i, i + size)
                vm = index.partial(sub)
                if vm is not None:
                    r.values.append(ValueMention(i, i + size, sub, set(vm.hits), False, vm.score, vm.how))
                    r.take(r.values[-1])
                    done = True
                    break
            if done:
                break


def _keep_maximal(r: Reading, found: list[ValueMention]) -> None:
    found.sort(key=lambda v: (v.start - v.end, v.start))
    for v in found:
        if r.free(v.start, v.end):
            r.values.append(v)
            r.take(v)


def read_lower_values(r: Reading, index: ValueIndex, min_words: int) -> None:
    """Exact (folded) stored values written in lower case, of at least ``min_words`` content words."""
    n = len(r.tokens)
    found: list[ValueMention] = []
    for i in range(n):
        if not r.free(i) or r.tokens[i].low in FUNCTION_WORDS:
            continue
        for j in range(min(n, i + index.max_words), i + min_words - 1, -1):
            if not r.free(i, j) or r.tokens[j - 1].low in FUNCTION_WORDS:
                continue
            raw = r.text(i, j)
            vm = _accept(index.match(raw, fuzzy=False), raw)
            if vm is not None and vm.how in ("exact", "ascii", "alias", "squeezed"):
                found.append(ValueMention(i, j, raw, set(vm.hits), False, vm.score * 0.97, vm.how))
                break
    _keep_maximal(r, found)


def _content(t: Token) -> bool:
    return t.low not in FUNCTION_WORDS and t.base not in FUNCTION_WORDS and not t.low.isdigit()


def _runs(r: Reading, ok: Any) -> list[tuple[int, int]]:
    """Maximal runs of free tokens passing ``ok``, allowing function words inside (not at the edges)."""
    out: list[tuple[int, int]] = []
    i, n = 0, len(r.tokens)
    while i < n:
        if not r.free(i) or not ok(r.tokens[i]):
            i += 1
            continue
        j, last = i + 1, i + 1
        while j < n and r.free(j) and (ok(r.tokens[j]) or r.tokens[j].low in ("of", "the", "de", "la", "le", "and", "&", "y", "di", "von", "van", "der", "du", "del")):
            if ok(r.tokens[j]):
                last = j + 1
            j += 1
        out.append((i, last))
        i = last
    return out


def is_english_word(word: str) -> bool:
    """A word of the English dictionary (WordNet, through its base form): "united" and "delta" are, "jetblue"
    and "aerosmtih" are not."""
    from agents.query.wordnet import common_word, wordnet

    if wordnet() is None:
        from contract.lexicon import is_english_word as lexicon_word

        return lexicon_word(word)
    low = word.lower()
    return low.isalpha() and (common_word(low) or common_word(base(low)))


def _single_word_value(t: Token, vm: ValueMatch, is_word: Any) -> bool:
    """A lone lower-case word names a stored value only when it is not an ordinary English word (a band written
    "acdc", a misspelt "aerosmtih"), or when it is exactly a category ("jazz", "drama"); an inflected word
    ("belong", "released") is a verb of the question, not a name."""
    if t.capitalized:
        return True
    if not is_word(t.low):
        return True
    if t.base != t.low or vm.how not in ("exact", "ascii"):
        return False
    return all(h.role == "category" for h in vm.hits)


def _loose_span(r: Reading, a: int, b: int, index: ValueIndex, is_word: Any) -> None:
    """The longest sub-span of tokens[a:b] that names a value loosely (accent, alias, fuzzy), then the rest."""
    for size in range(min(b - a, index.max_words + 1), 0, -1):
        for i in range(a, b - size + 1):
            span = r.tokens[i : i + size]
            if span[0].low in FUNCTION_WORDS or span[-1].low in FUNCTION_WORDS:
                continue
            raw = r.text(i, i + size)
            letters = sum(len(t.low) for t in span)
            loose = letters >= (7 if size == 1 else 6) or (size == 1 and letters >= 5 and span[0].capitalized)
            vm = _accept(index.match(raw, fuzzy=loose), raw)
            if vm is not None and size == 1 and letters < 7 and vm.how == "fuzzy" and vm.score < 0.8:
                vm = None  # a short word only matches a very close spelling
            if vm is None:
                continue
            if size == 1 and not _single_word_value(span[0], vm, is_word):
                continue
            r.values.append(ValueMention(i, i + size, raw, set(vm.hits), False, vm.score * 0.97, vm.how))
            r.used.update(range(i, i + size))
            if i > a:
                _loose_span(r, a, i, index, is_word)
            if i + size < b:
                _loose_span(r, i + size, b, index, is_word)
            return


def read_loose(r: Reading, index: ValueIndex, is_word: Any) -> None:
    for a, b in _runs(r, _content):
        _loose_span(r, a, b, index, is_word)
    # a shortened name in lower case ("kennedy airport", "jetblue"): words no dictionary knows
    for a, b in _runs(r, lambda t: _content(t) and not is_english_word(t.low)):
        for size in range(b - a, 0, -1):
            hit = None
            for i in range(a, b - size + 1):
                if not r.free(i, i + size):
                    continue
                raw = r.text(i, i + size)
                vm = index.partial(raw)
                if vm is not None:
                    known = all(is_english_word(t.low) for t in r.tokens[i : i + size])
                    hit = ValueMention(i, i + size, raw, set(vm.hits), False, vm.score * (0.85 if known else 0.95),
                                       vm.how)  # fmt: skip
                    break
            if hit is not None:
                r.values.append(hit)
                r.take(hit)
                break


def read_unknown(r: Reading) -> None:
    """Capitalized runs (not the question's first word) nothing consumed: names the data does not hold."""
    for a, b in _runs(r, lambda t: _content(t) and t.capitalized and not t.low.isdigit()):
        if a == 0 and r.tokens[0].low in OPENERS:
            a += 1
        if b > a:
            r.unknown.append((a, b, False))
            r.used.update(range(a, b))
    r.generic = [t.index for t in r.tokens if r.free(t.index) and t.low in GENERIC_NOUNS]
    r.used.update(r.generic)
    r.unconsumed = [t.index for t in r.tokens if r.free(t.index) and _content(t)]


# ------------------------------------------------------------------------------------------------ schema words


def _keys_at(r: Reading, i: int, size: int) -> list[tuple[str, ...]]:
    """Base-form keys for tokens[i:i+size], with hyphenated words also read joined ("e-mail" -> email)."""
    toks = r.tokens[i : i + size]
    words = [r.typos.get(t.index, t.base) for t in toks]
    keys = [tuple(words)]
    joined: list[str] = []
    k = 0
    while k < len(toks):
        w = words[k]
        while toks[k].hyphen_next and k + 1 < len(toks):
            k += 1
            w = base(w + toks[k].low)
        joined.append(w)
        k += 1
    if len(joined) != len(words):
        keys.append(tuple(joined))
    return keys


def read_schema(r: Reading, phrases: PhraseIndex) -> None:
    n = len(r.tokens)
    i = 0
    while i < n:
        if not r.free(i):
            i += 1
            continue
        best: tuple[int, dict[Element, Link]] | None = None
        for size in range(min(phrases.max_len, n - i), 0, -1):
            if not r.free(i, i + size):
                continue
            for key in _keys_at(r, i, size):
                links = phrases.lookup(key)
                if links:
                    best = (size, links)
                    break
            if best is not None:
                break
        if best is None:
            i += 1
            continue
        size, links = best
        top = max(lk.score for lk in links.values())
        links = {e: lk for e, lk in links.items() if lk.score >= 0.6 * top}  # a weak reading beside a strong one
        m = SchemaMention(i, i + size, dict(links))
        r.schema.append(m)
        r.take(m)
        i += size


def read_truncations(r: Reading, phrases: PhraseIndex) -> None:
    """Words nothing else matched that a field's short name cuts short ("temperature" for ``temp``, "dew
    point" for ``dewp``): two words first, then one."""
    n = len(r.tokens)
    for size in (2, 1):
        for i in range(n - size + 1):
            if not r.free(i, i + size) or not all(_content(t) and t.low not in GENERIC_NOUNS for t in r.tokens[i : i + size]):
                continue
            links = phrases.truncations([t.low for t in r.tokens[i : i + size]])
            if links:
                m = SchemaMention(i, i + size, links)
                r.schema.append(m)
                r.take(m)
    r.schema.sort(key=lambda m: m.start)


def read_keys(r: Reading, key_of: Any) -> None:
    """"<type> <number|code>": a type mention followed by a literal its single-column key can hold."""
    for m in list(r.schema):
        if m.end >= len(r.tokens):
            continue
        if any(lk.score >= 0.95 for e, lk in m.of("attr").items()):
            continue  # "flight 1545": the field named "flight", not the record with key 1545
        for el in m.of("type"):
            key = key_of(el.entity)
            if key is None:
                continue
            attr, kind = key
            num = next((x for x in r.numbers if x.start == m.end), None)
            tok = r.tokens[m.end]
            if kind == "int" and num is not None and num.value.is_integer():
                r.keys.append(KeyMention(m.start, num.end, el.entity, attr, int(num.value), m.links[el].score))
                r.numbers.remove(num)
                break
            if kind == "string" and r.free(m.end) and re.fullmatch(r"[A-Z0-9][A-Z0-9-]{1,15}", tok.text):
                r.keys.append(KeyMention(m.start, m.end + 1, el.entity, attr, tok.text, m.links[el].score))
                r.used.add(m.end)
                break


def repair_typos(r: Reading, known: set[str], is_word: Any) -> None:
    """Words that are neither English nor the data's get read as the closest schema or operation word
    ("averge" -> average, "arival" -> arrival)."""
    from rapidfuzz import fuzz, process

    for t in r.tokens:
        if len(t.low) < 5 or not t.low.isalpha() or t.low in known or t.base in known or is_word(t.low):
            continue
        best = process.extractOne(t.low, known, scorer=fuzz.ratio, score_cutoff=TYPO_CUTOFF)
        if best is not None:
            r.typos[t.index] = best[0]


def read(question: str, phrases: PhraseIndex, index: ValueIndex, key_of: Any, is_word: Any) -> Reading:
    tokens = tokenize(question)
    r = Reading(question, tokens)
    read_quoted(r, index)
    repair_typos(r, phrases.words | _OPERATION_WORDS, is_word)
    if r.typos:
        # the repaired words take part in the closed-class reading ("averge" -> average)
        r.tokens = [_retyped(t, r.typos.get(t.index)) for t in r.tokens]
    read_closed_class(r)
    read_capitalized(r, index, phrases)
    read_lower_values(r, index, 2)
    read_schema(r, phrases)
    read_capitalized_loose(r, index, phrases)
    read_numbers(r)
    read_keys(r, key_of)
    read_loose(r, index, is_word)
    read_truncations(r, phrases)
    read_unknown(r)
    return r


def _retyped(t: Token, word: str | None) -> Token:
    if word is None:
        return t
    return Token(t.text, word, t.start, t.end, t.index, base(word), frozenset({word, base(word)}), t.hyphen_next)


_OPERATION_WORDS = frozenset(
    {"average", "total", "maximum", "minimum", "highest", "lowest", "largest", "smallest", "longest", "shortest",
     "number", "count", "latest", "earliest", "recent", "fewest", "cheapest", "before", "after", "between"}
    | set(COMPARATIVES)
)  # fmt: skip
