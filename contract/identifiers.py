"""Identifiers read as words: ``CustomerID`` -> ``["customer", "id"]``, glued names (``tailnum`` -> ``tail
number``) and database shorthand (``acct bal`` -> ``account balance``). Pure; the word tables are general
English and general database shorthand (``esc.contract.lexicon_data``)."""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from functools import lru_cache

from esc.contract.lexicon_data import ABBREVIATIONS as ABBREVIATIONS
from esc.contract.lexicon_data import COMMON_WORDS, STOPWORDS
from esc.contract.morphology import is_english_word, lemma, plural

MAX_VARIANTS = 8


def split_identifier(name: str) -> list[str]:
    """Lower-case words of an identifier: camelCase, PascalCase, snake/kebab case, dots, spaces;
    digits split off; ALLCAPS runs kept whole (``HTTPServer`` -> ``http server``, ``URLs`` -> ``urls``)."""
    words: list[str] = []
    for chunk in "".join(c if c.isalnum() else " " for c in name).split():
        start = 0
        for i in range(1, len(chunk)):
            a, b = chunk[i - 1], chunk[i]
            if a.isdigit() != b.isdigit() or (a.islower() and b.isupper()):
                words.append(chunk[start:i])
                start = i
            elif a.isupper() and b.isupper() and i + 1 < len(chunk) and chunk[i + 1].islower():
                tail = chunk[i + 1 :]
                if tail[:1] == "s" and not tail[1:2].islower():
                    continue  # an acronym's plural: IDs, URLs
                words.append(chunk[start:i])
                start = i
        words.append(chunk[start:])
    return [w.lower() for w in words if w]


def is_known_whole(token: str) -> bool:
    return token in COMMON_WORDS or token in ABBREVIATIONS or is_english_word(token)


def _known_part(part: str) -> bool:
    if len(part) < 3 or part in STOPWORDS:
        return False
    if part in COMMON_WORDS or part in ABBREVIATIONS or lemma(part) in COMMON_WORDS:
        return True
    return len(part) >= 4 and is_english_word(part)


def _segmentations(token: str, parts_left: int) -> Iterable[list[str]]:
    if _known_part(token):
        yield [token]
    if parts_left <= 1:
        return
    for i in range(3, len(token) - 2):
        head = token[:i]
        if _known_part(head):
            for rest in _segmentations(token[i:], parts_left - 1):
                yield [head, *rest]


@lru_cache(maxsize=65536)
def split_glued(token: str) -> tuple[str, ...]:
    """Split one all-lower-case glued token into known words (``unitprice`` -> ``unit price``);
    the token itself when it is a word, shorthand, or splits no way into parts of 3+ letters."""
    if len(token) < 6 or not token.isalpha() or not token.islower() or is_known_whole(token):
        return (token,)

    def rank(parts: list[str]) -> tuple[int, int, int, int]:
        listed = sum(1 for p in parts if p in COMMON_WORDS or p in ABBREVIATIONS or lemma(p) in COMMON_WORDS)
        plain = sum(1 for p in parts if p not in ABBREVIATIONS or p in COMMON_WORDS)
        return (len(parts), -listed, -plain, -len(parts[0]))

    best = min(_segmentations(token, 3), key=rank, default=None)
    return tuple(best) if best and len(best) > 1 else (token,)


def readings(word: str) -> list[tuple[str, ...]]:
    """The full-word readings of one word: its abbreviation expansions, or the word itself."""
    if word in STOPWORDS:
        return [(word,)]
    full = ABBREVIATIONS.get(word)
    if full:
        return [tuple(r.split()) for r in full]
    if len(word) > 2 and word.endswith("s") and word[:-1] in ABBREVIATIONS and not is_known_whole(word):
        return [(*r.split()[:-1], plural(r.split()[-1])) for r in ABBREVIATIONS[word[:-1]]]  # qtys
    return [(word,)]


def expand(words: list[str], limit: int = MAX_VARIANTS) -> list[list[str]]:
    """The word list with shorthand read out: the original first, then glued tokens split, then
    every combination of abbreviation readings (multi-word readings flattened), at most ``limit``."""
    original = [w.lower() for w in words if w]
    out: list[list[str]] = [original]
    split = [p for w in original for p in split_glued(w)]
    if split != original:
        out.append(split)
    for combo in itertools.product(*(readings(w) for w in split)):
        if len(out) >= limit:
            break
        flat = [p for part in combo for p in part]
        flat = [p for i, p in enumerate(flat) if i == 0 or p != flat[i - 1]]  # zip code + code
        if flat not in out:
            out.append(flat)
    return out[:limit]
