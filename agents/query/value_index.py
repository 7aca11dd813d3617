"""The value dictionary a question reader looks names up in: folded value -> where it occurs, with three looser
ways in, each with a score so the plan's confidence can say how sure the match was:

* exact after case/width folding and punctuation-insensitive tokenization (1.0);
* accent-insensitive (``anyascii``: "luis goncalves" -> "Luís Gonçalves", 0.97);
* well-known aliases of country names and codes (``pycountry``: "USA" / "United States" / "U.S.", "UK" /
  "United Kingdom", "Russia" / "Russian Federation", 0.95);
* fuzzy (``rapidfuzz`` ratio over values of similar length: "aerosmtih", "led zepelin", score x 0.9).

Built once per grounding (contract version + values), never per question.
"""

from __future__ import annotations

import functools
import unicodedata
from dataclasses import dataclass
from typing import Any, NamedTuple

from anyascii import anyascii
from rapidfuzz import fuzz, process

TOKEN_PATTERN = r"\w+(?:'(?!s\b)\w+)*"
MAX_VALUE_CHARS = 120
MAX_NGRAM = 12
FUZZY_CUTOFF = 86.0
"""rapidfuzz ratio (0-100) a near miss must reach; below it a name is "not in the data"."""
FUZZY_MIN_CHARS = 5
ASCII_SCORE = 0.97
ALIAS_SCORE = 0.95
PARTIAL_SCORE = 0.9
MAX_PARTIAL_WORDS = 8
MAX_PARTIAL_HITS = 2
MAX_PARTIAL_FIELDS = 3
PARTIAL_SKIP = frozenset({"the", "of", "and", "&", "de", "la", "inc", "ltd", "co"})


def _readings(word: str) -> tuple[str, ...]:
    """A word and the full words its common shorthand stands for ("intl" -> international)."""
    from esc.contract.lexicon_data import ABBREVIATIONS

    full = ABBREVIATIONS.get(word)
    if not full:
        return (word,)
    return (word, *(f for f in full if " " not in f))


def fold(text: str) -> str:
    """Case- and width-folded text (accents kept: the exact key)."""
    return unicodedata.normalize("NFKC", text).casefold()


def _words(text: str) -> list[str]:
    import re

    return re.findall(TOKEN_PATTERN, text)


def norm_value(value: Any) -> str:
    """Dictionary key of a value: folded word tokens joined by one space ("Grains/Cereals" -> "grains cereals")."""
    return " ".join(_words(fold(str(value))))


def ascii_key(value: Any) -> str:
    """Accent- and apostrophe-insensitive key ("Holý" -> "holy", "Pâté chinois" -> "pate chinois", "O'Hare" ->
    "ohare")."""
    return " ".join(_words(fold(anyascii(str(value))).replace("'", "").replace("’", "")))


def without_legal_form(key: str) -> str | None:
    """A company's name key without its trailing legal form ("ashford plastics llc" -> "ashford plastics", "lefevre
    paper s a" -> "lefevre paper"), when two words or more are left."""
    from esc.contract.er_match import LEGAL_FORMS

    words = key.split()
    if len(words) >= 4 and len(words[-1]) == len(words[-2]) == 1 and words[-2] + words[-1] in LEGAL_FORMS:
        words = words[:-2]
    while len(words) > 2 and words[-1] in LEGAL_FORMS:
        words.pop()
    short = " ".join(words)
    return short if short != key and len(words) >= 2 else None


class ValueHit(NamedTuple):
    """Where a value occurs (a tuple, so that a cached value index of tens of thousands loads fast)."""

    entity: str
    values: tuple[tuple[str, Any], ...]  # (attribute, stored value), one pair or first+last name
    role: str  # "display" (names an entity), "category", "other"

    @property
    def attrs(self) -> tuple[str, ...]:
        return tuple(a for a, _ in self.values)


@dataclass(frozen=True)
class ValueMatch:
    key: str  # the dictionary key that matched
    hits: frozenset[ValueHit]
    score: float  # 1.0 exact, lower for accent-insensitive / alias / fuzzy
    how: str  # exact | ascii | alias | fuzzy


class ValueIndex:
    """Folded value -> where it occurs. Built from the graph (all values) or, without one, the profiles."""

    def __init__(self) -> None:
        self.hits: dict[str, set[ValueHit]] = {}
        self.max_words = 1
        self._ascii: dict[str, set[str]] | None = None
        self._by_len: dict[int, list[str]] | None = None
        self._aliases: dict[str, set[str]] | None = None
        self._squeezed: dict[str, set[str]] | None = None
        self._words: dict[str, set[str]] | None = None

    def add(self, text: str, hit: ValueHit) -> None:
        key = norm_value(text)
        if not key or len(key) > MAX_VALUE_CHARS:
            return
        self.hits.setdefault(key, set()).add(hit)
        if hit.role == "display" and (short := without_legal_form(key)) is not None:
            self.hits.setdefault(short, set()).add(hit)  # "Ashford Plastics LLC" is asked as "Ashford Plastics"
        self.max_words = min(MAX_NGRAM, max(self.max_words, key.count(" ") + 1))
        self._ascii = self._by_len = self._aliases = self._squeezed = self._words = None

    def lookup(self, text: str) -> set[ValueHit]:
        return self.hits.get(norm_value(text), set())

    # -- derived indexes, built lazily once ------------------------------------------------------------------
    def _ascii_index(self) -> dict[str, set[str]]:
        if self._ascii is None:
            idx: dict[str, set[str]] = {}
            for key in self.hits:
                idx.setdefault(" ".join(_words(fold(anyascii(key)))), set()).add(key)
            self._ascii = idx
        return self._ascii

    def _length_buckets(self) -> dict[int, list[str]]:
        if self._by_len is None:
            buckets: dict[int, list[str]] = {}
            for key in self._ascii_index():
                buckets.setdefault(len(key), []).append(key)
            self._by_len = buckets
        return self._by_len

    def _squeezed_index(self) -> dict[str, set[str]]:
        if self._squeezed is None:
            idx: dict[str, set[str]] = {}
            for akey, keys in self._ascii_index().items():
                if " " in akey:
                    idx.setdefault(akey.replace(" ", ""), set()).update(keys)
            self._squeezed = idx
        return self._squeezed

    def _alias_index(self) -> dict[str, set[str]]:
        if self._aliases is None:
            from esc.agents.query.aliases import country_aliases

            self._aliases = country_aliases(self.hits.keys(), norm_value)
        return self._aliases

    def _word_index(self) -> dict[str, set[str]]:
        """word -> ascii keys of the values it appears in (short values only; shorthand read out: "Intl")."""
        if self._words is None:
            idx: dict[str, set[str]] = {}
            for akey in self._ascii_index():
                words = akey.split()
                if len(words) > MAX_PARTIAL_WORDS:
                    continue
                for w in words:
                    for form in _readings(w):
                        idx.setdefault(form, set()).add(akey)
            self._words = idx
        return self._words

    def partial(self, text: str) -> ValueMatch | None:
        """A shortened name: every word of ``text`` is a word of one stored value ("United" -> "United Air Lines
        Inc.", "Denver International" -> "Denver Intl", "Kennedy" -> "John F Kennedy Intl"). Only when the words
        pick out at most ``MAX_PARTIAL_HITS`` values, all of one field; the score falls with the share of the
        stored name the question left out."""
        words = [w for w in ascii_key(text).replace("-", " ").split() if w not in PARTIAL_SKIP]
        if not words or not any(len(w) >= 4 for w in words):
            return None
        idx = self._word_index()
        keys: set[str] | None = None
        for w in words:
            found: set[str] = set()
            for form in _readings(w):
                found |= idx.get(form, set())
            keys = found if keys is None else keys & found
            if not keys:
                return None
        assert keys is not None
        # per field: the words must pick out one or two values there (a field where they fit many is no reading)
        by_field: dict[tuple[str, tuple[str, ...]], set[str]] = {}
        for a in keys:
            for k in self._ascii_index()[a]:
                for h in self.hits.get(k, ()):
                    by_field.setdefault((h.entity, h.attrs), set()).add(a)
        keep = {f: ks for f, ks in by_field.items() if len(ks) <= MAX_PARTIAL_HITS}
        if not keep or len(keep) > MAX_PARTIAL_FIELDS:
            return None
        keys = {a for ks in keep.values() for a in ks}
        hits = frozenset(h for h in self._gather({k for a in keys for k in self._ascii_index()[a]})
                         if (h.entity, h.attrs) in keep)  # fmt: skip
        longest = max(len(k.split()) for k in keys)
        coverage = len(words) / max(longest, len(words))
        score = round(PARTIAL_SCORE * (0.85 + 0.15 * coverage) / (1.0 if len(keys) == 1 else 1.15), 3)
        if len(keep) > 1:
            score = round(score * 0.9, 3)
        return ValueMatch(sorted(keys)[0], hits, score, "partial")

    def warm(self) -> ValueIndex:
        """Build every derived index now (before a cache is written, or before the first question)."""
        self._ascii_index()
        self._length_buckets()
        self._squeezed_index()
        self._alias_index()
        self._word_index()
        return self

    def _gather(self, keys: set[str]) -> frozenset[ValueHit]:
        return frozenset(h for k in keys for h in self.hits.get(k, ()))

    def match(self, text: str, fuzzy: bool = True) -> ValueMatch | None:
        """The best way ``text`` names stored values, or None."""
        key = norm_value(text)
        if not key:
            return None
        if key in self.hits:
            return ValueMatch(key, frozenset(self.hits[key]), 1.0, "exact")
        akey = ascii_key(text)
        found = self._ascii_index().get(akey)
        if found:
            return ValueMatch(akey, self._gather(found), ASCII_SCORE, "ascii")
        alias = self._alias_index().get(akey)
        if alias:
            return ValueMatch(akey, self._gather(alias), ALIAS_SCORE, "alias")
        squeezed = self._squeezed_index().get(akey.replace(" ", ""))
        if squeezed and len(akey) >= 3:
            return ValueMatch(akey, self._gather(squeezed), ALIAS_SCORE, "squeezed")  # "acdc" for "AC/DC"
        if not fuzzy or len(akey.replace(" ", "")) < FUZZY_MIN_CHARS:
            return None
        return self._fuzzy(akey)

    def _fuzzy(self, akey: str) -> ValueMatch | None:
        buckets = self._length_buckets()
        span = max(1, len(akey) // 5)
        choices = [k for n in range(len(akey) - span, len(akey) + span + 1) for k in buckets.get(n, ())]
        if not choices:
            return None
        # spaces are noise to a user ("acdc" for "ac dc"): compare without them too
        best = process.extractOne(akey, choices, scorer=fuzz.ratio, score_cutoff=FUZZY_CUTOFF)
        squeezed = process.extractOne(
            akey.replace(" ", ""), choices, scorer=_squeezed_ratio, score_cutoff=FUZZY_CUTOFF
        )
        cands = [c for c in (best, squeezed) if c is not None]
        if not cands:
            return None
        choice, score, _ = max(cands, key=lambda c: c[1])
        return ValueMatch(choice, self._gather(self._ascii_index()[choice]), round(0.9 * score / 100, 3), "fuzzy")

    def __len__(self) -> int:
        return len(self.hits)


@functools.lru_cache(maxsize=65536)
def _squeeze(s: str) -> str:
    return s.replace(" ", "")


def _squeezed_ratio(a: str, b: str, **kwargs: Any) -> float:
    return float(fuzz.ratio(a, _squeeze(b), **kwargs))
