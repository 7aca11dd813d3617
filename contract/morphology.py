"""English word forms: ``lemma``, ``plural`` and ``inflections`` from lemminflect's offline dictionary, guarded
by simple suffix rules for words it does not know; ``is_english_word``. Pure (lemminflect reads its bundled data)."""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from types import ModuleType
from typing import Any

from esc.contract.lexicon_data import ABBREVIATIONS as ABBREVIATIONS
from esc.contract.lexicon_data import KEY_WORDS

_POS_ORDER = ("NOUN", "VERB", "AUX", "ADJ", "ADV", "PROPN")


@lru_cache(maxsize=1)
def _lib() -> ModuleType | None:
    try:
        import lemminflect
    except Exception:  # the rules below still give singular and plural forms
        return None
    return lemminflect


def _lookup(fn: str, word: str) -> Mapping[str, tuple[str, ...]]:
    """lemminflect's ``getAllLemmas``/``getAllInflections`` (POS or tag -> forms); {} when it fails."""
    lib = _lib()
    try:
        got: Any = getattr(lib, fn)(word) if lib is not None else {}
    except Exception:  # lemminflect's tables can fail on odd words in many ways; the rules still apply
        return {}
    return got if isinstance(got, dict) else {}


def dict_lemmas(word: str) -> Mapping[str, tuple[str, ...]]:
    return _lookup("getAllLemmas", word)


def dict_inflections(base: str) -> Mapping[str, tuple[str, ...]]:
    return _lookup("getAllInflections", base)


def is_english_word(word: str) -> bool:
    """Does the lemma dictionary know this (lower-case) word in any part of speech?"""
    return bool(word) and word.isalpha() and bool(dict_lemmas(word.lower()))


def _rule_singular(w: str) -> str:
    if len(w) <= 3 or not w.endswith("s") or w.endswith(("ss", "us", "is", "os")):
        return w
    if w.endswith("ies") and len(w) > 4:
        return w[:-3] + "y"
    if w.endswith(("sses", "xes", "ches", "shes", "zzes")):
        return w[:-2]
    return w[:-1]


def _rule_plural(w: str) -> str:
    if w.endswith(("s", "x", "z", "ch", "sh")):
        return w + "es"
    if w.endswith("y") and len(w) > 1 and w[-2] not in "aeiou":
        return w[:-1] + "ies"
    return w + "s"


@lru_cache(maxsize=65536)
def lemma(word: str) -> str:
    """English lemma, lower case: plural -> singular, inflected verb -> base (``bought`` -> ``buy``).
    Numbers, words of 1-2 letters and acronyms (``IDS``) come back unchanged (lower-cased); a word the
    dictionary does not know is only de-pluralised by suffix rules, and only when it is lower case
    (``Texas``, ``Paris`` stay as they are)."""
    low = word.strip().lower()
    if len(low) <= 2 or not low.isalpha() or (word.isupper() and len(word) <= 5):
        return low
    found = dict_lemmas(low)
    for pos in _POS_ORDER:
        forms = found.get(pos)
        if forms:
            return low if low in forms else forms[0]
    for forms in found.values():
        if forms:
            return low if low in forms else forms[0]
    return _rule_singular(low) if word.strip().islower() else low


def _fixed(word: str) -> bool:
    """A word inflection leaves alone: a number, a proper noun the dictionary does not know
    (``Texas``), or a 1-2 letter word that is not shorthand."""
    low = word.lower()
    if not low.isalpha() or len(low) < 2:
        return True
    if len(low) == 2:
        return low not in KEY_WORDS and low not in ABBREVIATIONS
    return word[0].isupper() and not word.isupper() and not is_english_word(low)


@lru_cache(maxsize=65536)
def plural(word: str) -> str:
    """Plural of a noun (of the last word of a phrase): ``country`` -> ``countries``, ``data`` -> ``data``."""
    head, _, last = word.strip().rpartition(" ")
    head = head.lower()
    if _fixed(last):
        return word.strip().lower()
    if last.isupper():  # an acronym: SKU -> skus
        return f"{head} {last.lower()}s".strip() if not last.endswith("S") else word.strip().lower()
    base = lemma(last)
    nns = [f for f in dict_inflections(base).get("NNS", ()) if f.isalpha()]
    if not nns and (base in KEY_WORDS or base in ABBREVIATIONS):
        form = base + "s"
    else:
        form = next((f for f in nns if f != base), nns[0] if nns else _rule_plural(base))
    return f"{head} {form}" if head else form


@lru_cache(maxsize=65536)
def _inflections(word: str) -> frozenset[str]:
    low = word.strip().lower()
    if _fixed(word.strip()):
        return frozenset({low})
    base = lemma(word.strip())
    forms = {low, base, plural(base)}
    for group in dict_inflections(base).values():
        forms.update(f for f in group if f.isalpha())
    return frozenset(forms)


def inflections(word: str) -> set[str]:
    """Every form of a word: singular, plural and, for verbs, -s, past, participle and -ing."""
    return set(_inflections(word))
