"""Time fields and their granularity, from a field's profile (issue #16 point 4: "the contract marks time fields and
their granularity").

A field is a **time field** when its type is ``date`` or ``datetime``, when it is a year (semantic ``year``), or when
it is text whose observed values (examples, top values, min and max) are at least 90 % dates in one written form:
``YYYY-MM`` and ``YYYY`` (ISO prefixes, which sort and compare like the dates they stand for), ``MM/DD/YYYY`` or
``DD/MM/YYYY`` (told apart by a first number above 12 on either side; neither seen: month first), ``DD.MM.YYYY``,
``Month YYYY``. Its **granularity** is the finest unit the values use: a datetime whose times are all midnight is a
day, one whose minutes are all zero an hour, one whose seconds are all zero a minute; a date whose days are all the first is a month (and all in January a
year) once at least :data:`MIN_VALUES` distinct values say so, else the type's own unit. Its **role** comes from
general English name words: ``updated`` for a time the record was last changed at (updated, modified, changed,
revised, "as of" ...; the resolver takes the newest such record's value as current), ``birth`` for a birth date.

Pure and deterministic: the same field statistics give the same mark.
"""

from __future__ import annotations

import re
from datetime import date, datetime
from typing import Any, Literal

from esc.contract.model import FieldSpec, TimeMark
from esc.contract.semantic import tokens

UPDATE_WORDS = frozenset({"updated", "update", "modified", "modification", "changed", "change", "recorded",
                          "timestamp", "ts", "mtime", "edited", "revised", "asof"})  # fmt: skip
BIRTH_WORDS = frozenset({"birth", "birthday", "dob", "born", "birthdate"})
MIN_VALUES = 5
"""Distinct values needed before a date field is called coarser than its type (a month, a year)."""
TEXT_SHARE = 0.9
MIN_TEXT_VALUES = 3
MONTHS = {m: i for i, m in enumerate(["january", "february", "march", "april", "may", "june", "july", "august",
                                      "september", "october", "november", "december"], 1)}  # fmt: skip
MONTHS.update({m[:3]: i for m, i in list(MONTHS.items())})
_YM = re.compile(r"(\d{4})-(\d{2})")
_Y = re.compile(r"(\d{4})")
_SLASH = re.compile(r"(\d{1,2})/(\d{1,2})/(\d{4})")
_DOT = re.compile(r"(\d{1,2})\.(\d{1,2})\.(\d{4})")
_MON_Y = re.compile(r"([A-Za-z]{3,9})\.?\s+(\d{4})")
_ISO_DAY = re.compile(r"(\d{4})-(\d{2})-(\d{2})")
_ISO_TIME = re.compile(r"(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?")


def role_of(name: str) -> Literal["updated", "birth"] | None:
    words = set(tokens(name.replace("as_of", "asof").replace("AsOf", "Asof")))
    if words & BIRTH_WORDS:
        return "birth"
    if words & UPDATE_WORDS:
        return "updated"
    return None


def observed(f: FieldSpec) -> list[Any]:
    """The values a profile keeps of a field: examples, top values, min and max (distinct, in a stable order)."""
    out: list[Any] = []
    for v in [*f.examples, *(t[0] for t in f.top_values), f.min, f.max]:
        if v is not None and v not in out:
            out.append(v)
    return out


def _month(text: str) -> int | None:
    return MONTHS.get(text.lower().rstrip("."))


def _text_format(values: list[str]) -> str | None:
    """The one written form that at least :data:`TEXT_SHARE` of the values take, if any."""
    forms: dict[str, int] = {}
    first_big = second_big = False
    for v in values:
        s = v.strip()
        if _YM.fullmatch(s) and 1 <= int(s[5:7]) <= 12:
            forms["YYYY-MM"] = forms.get("YYYY-MM", 0) + 1
        elif _Y.fullmatch(s) and 1000 <= int(s) <= 2999:
            forms["YYYY"] = forms.get("YYYY", 0) + 1
        elif (m := _SLASH.fullmatch(s)) is not None:
            a, b = int(m.group(1)), int(m.group(2))
            if 1 <= a <= 31 and 1 <= b <= 31 and min(a, b) <= 12:
                first_big, second_big = first_big or a > 12, second_big or b > 12
                forms["slash"] = forms.get("slash", 0) + 1
        elif (m := _DOT.fullmatch(s)) is not None and 1 <= int(m.group(1)) <= 31 and 1 <= int(m.group(2)) <= 12:
            forms["DD.MM.YYYY"] = forms.get("DD.MM.YYYY", 0) + 1
        elif (m := _MON_Y.fullmatch(s)) is not None and _month(m.group(1)) is not None:
            forms["Month YYYY"] = forms.get("Month YYYY", 0) + 1
    if not forms:
        return None
    best = max(sorted(forms), key=lambda k: forms[k])
    if forms[best] < TEXT_SHARE * len(values):
        return None
    if best == "slash":
        if first_big and second_big:
            return None
        return "DD/MM/YYYY" if first_big else "MM/DD/YYYY"
    return best


_TEXT_GRAIN = {"YYYY-MM": "month", "YYYY": "year", "MM/DD/YYYY": "day", "DD/MM/YYYY": "day", "DD.MM.YYYY": "day",
               "Month YYYY": "month"}  # fmt: skip


def _parts(v: Any) -> tuple[int, int, int, int, int, int] | None:
    """(year, month, day, hour, minute, second) of a date or datetime value (or its ISO text)."""
    if isinstance(v, datetime):
        return v.year, v.month, v.day, v.hour, v.minute, v.second
    if isinstance(v, date):
        return v.year, v.month, v.day, 0, 0, 0
    s = str(v).strip()
    m = _ISO_TIME.match(s)
    if m is not None:
        return int(m[1]), int(m[2]), int(m[3]), int(m[4]), int(m[5]), int(m[6] or 0)
    m = _ISO_DAY.match(s)
    if m is not None:
        return int(m[1]), int(m[2]), int(m[3]), 0, 0, 0
    return None


def _grain(parts: list[tuple[int, int, int, int, int, int]], typ: str) -> str:
    if typ == "datetime":
        if any(p[5] for p in parts):
            return "second"
        if any(p[4] for p in parts):
            return "minute"
        if any(p[3] for p in parts):
            return "hour"
    if len(set(parts)) >= MIN_VALUES and all(p[2] == 1 for p in parts):
        return "year" if all(p[1] == 1 for p in parts) else "month"
    return "day"


def time_mark(f: FieldSpec) -> TimeMark | None:
    """The time mark of one field, or None when it holds no dates."""
    role = role_of(f.name)
    if f.type in ("date", "datetime"):
        parts = [p for p in (_parts(v) for v in observed(f)) if p is not None]
        return TimeMark(granularity=_grain(parts, f.type) if parts else "day", role=role)  # type: ignore[arg-type]
    if f.semantic == "year" and f.type in ("int", "string"):
        return TimeMark(granularity="year", format="YYYY", role=role)
    if f.type != "string" or f.semantic in ("identifier", "email", "url", "phone"):
        return None
    values = [v for v in observed(f) if isinstance(v, str) and v.strip()]
    if len(values) < MIN_TEXT_VALUES:
        return None
    form = _text_format(values)
    if form is None:
        return None
    return TimeMark(granularity=_TEXT_GRAIN[form], format=form, role=role)  # type: ignore[arg-type]


def iso_text(mark: TimeMark | None) -> bool:
    """Values of a field with this mark compare and sort as ISO dates do (so date filters run on them as text)."""
    return mark is not None and mark.format in (None, "YYYY-MM", "YYYY")
