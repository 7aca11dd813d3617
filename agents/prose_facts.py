"""Facts from prose, deterministic: an entity mention, a field's surface form and a value of the field's type in
one sentence make a *candidate* attribute value, with provenance to the chunk and the character offsets.

``FieldForm`` is one way a field is written in text: the words of its name ("birth_year" -> "birth year"; a
query-scoped form may be any phrase, e.g. words of a question no field matched) and the type of its values.
``extract(text, mentions, forms)`` reads each sentence that holds a mention and a form, and takes the first value of
the form's type that follows the form in that sentence (outside any mention): ``int``/``float`` numbers (thousands
separators allowed), ``date``/``datetime`` ISO dates, ``year`` four digits, ``email``/``url`` by their shape, and for
strings a run of capitalised words (or a quoted text) right after the form and an optional copula ("is", "was",
":"). The entity is the mention nearest to the form. Candidates never overwrite stored values: callers show them as
candidates from prose (``agents/query/prose.py``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from esc.agents.mentions import EntityRef, Mention

_END = re.compile(r"[.!?…]+[\"'”’)\]]*(?=\s|$)|\n\s*\n|\n(?=\s*(?:[#>*|-]|\d+\.))")
_ABBREVIATION = re.compile(r"(?:^|[\s(])(?:[A-Z][a-z]{0,2}|[A-Z](?:\.[A-Z])*|[a-z](?:\.[a-z])+|[a-z]{1,3})\.$")
_NUMBER = re.compile(r"(?<![\w.])-?\d{1,3}(?:,\d{3})+(?:\.\d+)?(?![\w])|(?<![\w.])-?\d+(?:\.\d+)?(?![\w@])")
_YEAR = re.compile(r"(?<!\d)(1[5-9]\d\d|20\d\d)(?!\d)")
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2})?)?")
_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)*\.[A-Za-z]{2,}")
_URL = re.compile(r"(?:https?://|www\.)[^\s,;]+")
_COPULA = re.compile(r"\s*(?:(?:is|was|are|were|of|=|:|-)\s*)*(?:now\s+)?", re.IGNORECASE)
_NAME = re.compile(r"(?:[\"“']([^\"”']{1,80})[\"”'])|([A-ZÀ-Þ][\w'’-]*(?:\s+(?:[A-ZÀ-Þ][\w'’-]*|de|da|van|von|del|la|le))*)")
MAX_GAP = 60
"""Characters between the end of the field's form and its value, at most (the value belongs to the form)."""


@dataclass(frozen=True)
class FieldForm:
    field: str  # the attribute (or, query-scoped, the phrase) the value is for
    words: tuple[str, ...]  # how text writes it, lower case ("birth", "year")
    type: str  # int | float | decimal | date | datetime | string | text | bool
    semantic: str | None = None  # email | url | year | money | ...
    label: str = ""  # the entity type it belongs to ("" : any)


@dataclass(frozen=True)
class CandidateFact:
    entity: EntityRef
    field: str
    value: Any
    text: str  # the value as written
    start: int  # offsets of the value in the text
    end: int
    sentence: str
    form: str  # the field form as written
    score: float  # the mention's score


def sentences(text: str) -> Iterable[tuple[int, int]]:
    """Sentence spans: a sentence ends at . ! ? (or a blank line, or a line that starts a heading or a list item),
    not after an initial or a short abbreviation ("B. Achebe", "Dr. Okafor", "e.g.")."""
    start = 0
    for m in _END.finditer(text):
        if m.group(0).startswith(".") and _ABBREVIATION.search(text[max(0, m.start() - 5) : m.start() + 1]):
            continue
        if text[start : m.end()].strip():
            yield start, m.end()
        start = m.end()
    if text[start:].strip():
        yield start, len(text)


def _form_spans(sentence: str, offset: int, form: FieldForm) -> list[tuple[int, int]]:
    words = [re.escape(w) for w in form.words if w]
    if not words:
        return []
    pattern = re.compile(r"(?<!\w)" + r"[\s_-]+".join(words) + r"(?:s|es)?(?!\w)", re.IGNORECASE)
    return [(offset + m.start(), offset + m.end()) for m in pattern.finditer(sentence)]


def _value(text: str, start: int, stop: int, form: FieldForm, blocked: Sequence[tuple[int, int]]) -> tuple[Any, int, int] | None:
    window = text[start : min(stop, start + MAX_GAP + 80)]
    sem, typ = form.semantic, form.type
    if sem == "email":
        pattern = _EMAIL
    elif sem == "url":
        pattern = _URL
    elif sem == "year" or (typ == "int" and "year" in form.words):
        pattern = _YEAR
    elif typ in ("date", "datetime"):
        pattern = _DATE
    elif typ in ("int", "float", "decimal") or sem in ("money", "percent", "measure"):
        pattern = _NUMBER
    else:
        pos = start  # "the city of <Name> is Lyon": a name (a mention) between the form and its value is passed
        limit = min(stop, start + MAX_GAP + 80)
        for _ in range(3):
            lead = _COPULA.match(text, pos, limit)
            pos = lead.end() if lead else pos
            hit = next((y for x, y in blocked if x <= pos < y), None)
            if hit is None:
                break
            pos = hit
        if pos - start > MAX_GAP:
            return None
        m = _NAME.match(text, pos, limit)
        if not m or any(x < m.end() and m.start() < y for x, y in blocked):
            return None
        group = 1 if m.group(1) else 2
        a, b = m.start(group), m.end(group)
        return (text[a:b].strip(), a, b) if b > a else None
    for m in pattern.finditer(window):
        a, b = start + m.start(), start + m.end()
        if m.start() > MAX_GAP or any(x < b and a < y for x, y in blocked):
            continue
        raw = m.group(0)
        return _typed(raw, typ, sem), a, b
    return None


def _typed(raw: str, typ: str, sem: str | None) -> Any:
    if typ in ("int",) or sem == "year":
        try:
            return int(raw.replace(",", ""))
        except ValueError:
            return raw
    if typ in ("float", "decimal"):
        try:
            return float(raw.replace(",", ""))
        except ValueError:
            return raw
    if typ == "string" and re.fullmatch(r"-?\d+", raw):
        return int(raw)
    return raw


def extract(text: str, mentions: Sequence[Mention], forms: Sequence[FieldForm]) -> list[CandidateFact]:
    """Candidate facts in ``text`` (see the module docstring); ``mentions`` are offsets into the same text."""
    out: list[CandidateFact] = []
    blocked = [(m.start, m.end) for m in mentions]
    for s_start, s_end in sentences(text):
        here = [m for m in mentions if s_start <= m.start and m.end <= s_end]
        if not here:
            continue
        sentence = text[s_start:s_end]
        for form in forms:
            for f_start, f_end in _form_spans(sentence, s_start, form):
                if any(m.start <= f_start < m.end for m in here):
                    continue  # the form is part of a name
                found = _value(text, f_end, s_end, form, blocked)
                if found is None:
                    continue
                value, v_start, v_end = found
                fits = [m for m in here if not form.label or m.entity.label == form.label]
                if not fits:
                    continue
                nearest = min(fits, key=lambda m: (min(abs(m.start - f_end), abs(m.end - f_start)), -m.score))
                out.append(CandidateFact(nearest.entity, form.field, value, text[v_start:v_end], v_start, v_end,
                                         sentence.strip(), text[f_start:f_end], nearest.score))  # fmt: skip
    return out
