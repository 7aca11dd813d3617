"""WordNet's morphology and vocabulary, over the database ``wordnet.py`` reads: base forms (irregular forms and
suffix rules, as WordNet's own ``morphy``), whether a word is listed, and whether it is a common word rather than
only a name ("kennedy", "paris")."""

from __future__ import annotations

from functools import lru_cache

from esc.agents.query.wordnet import WordNet, wordnet

_EXC_FILES = {"n": "noun.exc", "v": "verb.exc", "a": "adj.exc"}
_RULES = {
    "n": (("s", ""), ("ses", "s"), ("xes", "x"), ("zes", "z"), ("ches", "ch"), ("shes", "sh"), ("men", "man"),
          ("ies", "y")),
    "v": (("s", ""), ("ies", "y"), ("es", "e"), ("es", ""), ("ed", "e"), ("ed", ""), ("ing", "e"), ("ing", "")),
    "a": (("er", ""), ("est", ""), ("er", "e"), ("est", "e")),
}  # fmt: skip
_EXC: dict[str, dict[str, str]] = {}


def _exceptions(wn: WordNet, pos: str) -> dict[str, str]:
    """Irregular forms -> base ("sold" -> sell, "children" -> child), read once per part of speech."""
    if pos not in _EXC:
        table: dict[str, str] = {}
        path = wn.root / _EXC_FILES[pos]
        if path.is_file():
            for line in path.read_text("utf-8", "replace").splitlines():
                parts = line.split()
                if len(parts) >= 2:
                    table.setdefault(parts[0].replace("_", " "), parts[1].replace("_", " "))
        _EXC[pos] = table
    return _EXC[pos]


@lru_cache(maxsize=65536)
def morphy(word: str, pos: str) -> str | None:
    """WordNet's base form of ``word`` as ``pos`` (n, v, a): the word itself when WordNet lists it, an irregular
    form's base, else the first suffix rule that gives a listed word; None when none does."""
    wn = wordnet()
    low = word.strip().lower()
    if wn is None or not low or pos not in _RULES:
        return None
    exc = _exceptions(wn, pos).get(low)
    if exc is not None:
        return exc
    if wn.senses(low, pos):
        return low
    for suffix, repl in _RULES[pos]:
        if low.endswith(suffix) and len(low) > len(suffix) + 1:
            cand = low[: len(low) - len(suffix)] + repl
            if wn.senses(cand, pos):
                return cand
    return None


def irregular(word: str) -> str | None:
    """The base of an irregular form in any part of speech (verbs first: "was" -> be, "sang" -> sing)."""
    wn = wordnet()
    if wn is None:
        return None
    low = word.strip().lower()
    for pos in ("v", "n", "a"):
        got = _exceptions(wn, pos).get(low)
        if got is not None:
            return got
    return None


def listed(word: str) -> bool:
    """Is the word itself an entry (a noun, verb or adjective) of WordNet?"""
    wn = wordnet()
    return wn is not None and any(wn.senses(word, p) for p in ("n", "v", "a"))


def exception(word: str, pos: str) -> str | None:
    """The base of an irregular form as ``pos`` ("sold" -> sell as a verb, "children" -> child as a noun)."""
    wn = wordnet()
    return _exceptions(wn, pos).get(word.strip().lower()) if wn is not None else None


@lru_cache(maxsize=65536)
def has_sense(word: str, pos: str) -> bool:
    wn = wordnet()
    return wn is not None and bool(wn.senses(word, pos))


@lru_cache(maxsize=65536)
def common_word(word: str) -> bool:
    """A word of the common vocabulary: WordNet lists it as a verb, adjective or adverb, or as a noun with a
    sense that is not only a named instance ("kennedy" and "paris" are names; "united", "delta" are words)."""
    wn = wordnet()
    if wn is None:
        return False
    low = word.strip().lower()
    if any(wn.senses(low, p) for p in ("v", "a", "r")):
        return True
    for off in wn.senses(low, "n"):
        ss = wn.synset("n", off)
        if ss is not None and not any(sym == "@i" for sym, *_ in ss.pointers):
            return True
    return False
