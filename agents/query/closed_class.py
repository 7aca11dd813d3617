"""Closed-class readings: operation words (count, sum, average, min/max, superlatives, top N, most recent),
comparisons with their numbers and units, dates and clock times, negations, and the numbers left over."""

from __future__ import annotations

import re

from esc.agents.query.mentions import CompareMention, DateMention, NumberMention, OpMention, Reading
from esc.agents.query.words import (
    AT_LEAST,
    AT_MOST,
    AVG_CUES,
    CLOCK,
    COMPARATIVES,
    COUNT_CUES,
    DURATION_UNITS,
    FUTURE_WORDS,
    LENGTH_UNITS,
    MONEY_SYMBOLS,
    MONTHS,
    NEGATIONS,
    NEXT_WORDS,
    NUMBER_WORDS,
    OPINION_WORDS,
    ORDINAL_SUFFIX,
    RECENT,
    SUM_CUES,
    SUPERLATIVES,
    TIME_UNITS,
    YEAR,
    Token,
)


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


def _participle(t: Token) -> bool:
    """A past participle ("registered", "updated", "seen"): an inflected word ending like one."""
    return t.base != t.low and t.low.endswith(("ed", "en", "wn"))


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
        if w in ("first", "last") and r.free(i) and i > 0 and _participle(toks[i - 1]):
            # "registered first", "was updated last": the earliest / latest by a date the verb names
            op = OpMention(i, i + 1, "least" if w == "first" else "recent", hint="time")
            r.ops.append(op)
            r.take(op)
            i += 1
            continue
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
