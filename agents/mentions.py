"""Entity mentions in text: an Aho–Corasick automaton over the value dictionary of name-like and key fields.

``MentionAutomaton(entries)`` indexes surfaces (the values that name an entity, and general variants of them, see
``agents.mention_dictionary``) case- and accent-folded; ``find(text)`` returns the mentions of one text with exact
character offsets into the original text:

* a hit counts only at word boundaries, leftmost-longest ("Maria Keller" wins over "Keller" inside it);
* a surface that is one word, or a variant rather than a stored value, must be written capitalised in the text
  (a name, not the common word that happens to be spelled like one); key codes must match their stored case;
* one surface naming several entities is *ambiguous*: resolved by context where the text itself settles it (a
  fuller mention of one of the candidates elsewhere in the same text: "Maria Keller ... Keller"), otherwise kept
  for every candidate with the score split among them (``score = weight / candidates``);
* a bare one-word variant (a surname alone) that nothing else in the text backs (no fuller mention of the same
  entity, no honorific such as "Dr." right before it) keeps half its weight: "Long meetings are tiring" is
  not about Ms. Long.

Pure: no I/O, deterministic (the result depends only on the entries and the text).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace

import ahocorasick


@dataclass(frozen=True)
class EntityRef:
    """An entity of the graph: its label and identity key (JSON, sorted keys, as the stores write it)."""

    label: str
    key: str


@dataclass(frozen=True)
class Surface:
    """One way of writing an entity's name in text. ``weight`` < 1 for variants (an initial, a surname alone);
    ``exact_case`` for codes; ``value`` is the stored value the surface comes from (``field``'s)."""

    text: str
    entity: EntityRef
    field: str
    value: str
    weight: float = 1.0
    exact_case: bool = False
    variant: bool = False


@dataclass(frozen=True)
class Mention:
    start: int
    end: int
    surface: str  # the text as written
    entity: EntityRef
    field: str
    value: str
    score: float
    candidates: int = 1  # how many entities the surface could name


def fold(text: str) -> tuple[str, Sequence[int]]:
    """Case- and accent-folded text and, per folded character, the index of the original character it came from.
    "Müller" -> "muller"; "ß" -> "ss" (two folded characters pointing at one original)."""
    if text.isascii():  # the common case, at C speed: one character each, in place
        return text.lower(), range(len(text))  # type: ignore[return-value]
    out: list[str] = []
    where: list[int] = []
    for i, ch in enumerate(text):
        if ch.isascii():
            low = ch.lower()
            out.append(low)
            where.append(i)
            continue
        for part in unicodedata.normalize("NFKD", ch):
            if unicodedata.combining(part):
                continue
            for low in part.casefold():
                out.append(low)
                where.append(i)
    return "".join(out), where


def folded(text: str) -> str:
    return fold(text)[0]


def _is_word(ch: str) -> bool:
    return ch.isalnum()


@dataclass
class _Entry:
    surfaces: list[Surface] = field(default_factory=list)


class MentionAutomaton:
    """The automaton of one dictionary (build once per contract version and value set)."""

    def __init__(self, surfaces: Iterable[Surface]) -> None:
        self._by_key: dict[str, dict[EntityRef, Surface]] = {}
        for s in surfaces:
            key = " ".join(folded(s.text).split())
            if len(key) < 2 or (not any(c.isalpha() for c in key) and not s.exact_case):
                continue
            per = self._by_key.setdefault(key, {})
            have = per.get(s.entity)
            if have is None or (s.weight, not s.variant) > (have.weight, not have.variant):
                per[s.entity] = s  # one surface per entity: the strongest reading
        self._automaton = ahocorasick.Automaton()
        for key in self._by_key:
            self._automaton.add_word(key, key)
        if self._by_key:
            self._automaton.make_automaton()

    def __len__(self) -> int:
        return len(self._by_key)

    def candidates(self, text: str) -> list[Surface]:
        return sorted(self._by_key.get(" ".join(folded(text).split()), {}).values(), key=_order)

    def find(self, text: str) -> list[Mention]:
        if not self._by_key or not text:
            return []
        norm, where = fold(text)
        spans: list[tuple[int, int, str]] = []
        for end_index, key in self._automaton.iter(norm):
            start = end_index - len(key) + 1
            end = end_index + 1
            if (start > 0 and _is_word(norm[start - 1])) or (end < len(norm) and _is_word(norm[end])):
                continue
            spans.append((start, end, key))
        spans.sort(key=lambda s: (s[0], -(s[1] - s[0])))
        chosen: list[tuple[int, int, str]] = []
        last_end = -1
        for start, end, key in spans:
            if start >= last_end:
                chosen.append((start, end, key))
                last_end = end
        raw: list[tuple[int, int, str, list[Surface]]] = []
        for start, end, key in chosen:
            o_start, o_end = where[start], where[end - 1] + 1
            written = text[o_start:o_end]
            fits = [s for s in self._by_key[key].values() if _written_ok(s, written)]
            if fits:
                raw.append((o_start, o_end, written, sorted(fits, key=_order)))
        return _resolve(text, raw)


def _order(s: Surface) -> tuple[str, str, str]:
    return (s.entity.label, s.entity.key, s.field)


def _written_ok(s: Surface, written: str) -> bool:
    if s.exact_case:
        return written == s.text or (folded(written) == folded(s.text) and written == written.upper())
    if s.variant or " " not in s.text.strip():
        return written[:1].isupper() or not written[:1].isalpha()
    return True


_TITLE = re.compile(r"\b[A-Z][a-z]{0,3}\.\s+$")


def _titled(text: str, start: int) -> bool:
    """A short capitalised abbreviation with a period right before (an honorific: "Dr. X", "Ms. X")."""
    return bool(_TITLE.search(text[max(0, start - 8) : start]))


def _resolve(text: str, raw: Sequence[tuple[int, int, str, list[Surface]]]) -> list[Mention]:
    """One mention per candidate; an ambiguous surface takes the candidate that an unambiguous mention elsewhere in
    the same text names, when exactly one does."""
    named = {fits[0].entity for _, _, _, fits in raw if len(fits) == 1}
    out: list[Mention] = []
    for start, end, written, fits in raw:
        if all(s.variant and " " not in s.text.strip() for s in fits) and not any(s.entity in named for s in fits) \
                and not _titled(text, start):
            fits = [replace(s, weight=s.weight / 2) for s in fits]  # one bare word, nothing in the text backs it
        if len(fits) > 1:
            settled = [s for s in fits if s.entity in named]
            if len(settled) == 1:
                s = settled[0]
                out.append(Mention(start, end, written, s.entity, s.field, s.value, round(0.9 * s.weight, 3), len(fits)))
                continue
        n = len(fits)
        for s in fits:
            out.append(Mention(start, end, written, s.entity, s.field, s.value, round(s.weight / n, 3), n))
    return out
