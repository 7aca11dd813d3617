"""The words a user might say for a database identifier: split, expand shorthand, inflect.

Pure and general-purpose: nothing here knows a particular data set. ``split_identifier`` turns
``CustomerID`` into ``["customer", "id"]``; ``expand`` reads shorthand (``acct bal`` -> ``account
balance``) and glued names (``tailnum`` -> ``tail number``); ``lemma``/``plural``/``inflections``
come from lemminflect's offline dictionary, guarded by simple suffix rules for words it does not
know; ``surface_forms`` and ``relationship_phrases`` score the phrases a question may use for a
column, a table or a foreign key. Word tables live in ``contract.lexicon_data``.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping
from functools import lru_cache
from types import ModuleType
from typing import Any

from esc.contract.lexicon_data import ABBREVIATIONS as ABBREVIATIONS
from esc.contract.lexicon_data import COMMON_WORDS, KEY_WORDS, ROLE_PHRASES, SELF_ROLE_PHRASES, STOPWORDS

MAX_VARIANTS = 8
_POS_ORDER = ("NOUN", "VERB", "AUX", "ADJ", "ADV", "PROPN")
_GENERIC_REL_HEADS = frozenset({"has", "have", "belongs", "belong", "ref", "refs", "references", "rel", "fk"})


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


def _is_known_whole(token: str) -> bool:
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
    if len(token) < 6 or not token.isalpha() or not token.islower() or _is_known_whole(token):
        return (token,)

    def rank(parts: list[str]) -> tuple[int, int, int, int]:
        listed = sum(1 for p in parts if p in COMMON_WORDS or p in ABBREVIATIONS or lemma(p) in COMMON_WORDS)
        plain = sum(1 for p in parts if p not in ABBREVIATIONS or p in COMMON_WORDS)
        return (len(parts), -listed, -plain, -len(parts[0]))

    best = min(_segmentations(token, 3), key=rank, default=None)
    return tuple(best) if best and len(best) > 1 else (token,)


def _readings(word: str) -> list[tuple[str, ...]]:
    """The full-word readings of one word: its abbreviation expansions, or the word itself."""
    if word in STOPWORDS:
        return [(word,)]
    full = ABBREVIATIONS.get(word)
    if full:
        return [tuple(r.split()) for r in full]
    if len(word) > 2 and word.endswith("s") and word[:-1] in ABBREVIATIONS and not _is_known_whole(word):
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
    for combo in itertools.product(*(_readings(w) for w in split)):
        if len(out) >= limit:
            break
        flat = [p for part in combo for p in part]
        flat = [p for i, p in enumerate(flat) if i == 0 or p != flat[i - 1]]  # zip code + code
        if flat not in out:
            out.append(flat)
    return out[:limit]


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


def _dict_lemmas(word: str) -> Mapping[str, tuple[str, ...]]:
    return _lookup("getAllLemmas", word)


def _dict_inflections(base: str) -> Mapping[str, tuple[str, ...]]:
    return _lookup("getAllInflections", base)


def is_english_word(word: str) -> bool:
    """Does the lemma dictionary know this (lower-case) word in any part of speech?"""
    return bool(word) and word.isalpha() and bool(_dict_lemmas(word.lower()))


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
    found = _dict_lemmas(low)
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
    nns = [f for f in _dict_inflections(base).get("NNS", ()) if f.isalpha()]
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
    for group in _dict_inflections(base).values():
        forms.update(f for f in group if f.isalpha())
    return frozenset(forms)


def inflections(word: str) -> set[str]:
    """Every form of a word: singular, plural and, for verbs, -s, past, participle and -ing."""
    return set(_inflections(word))


class _Phrases:
    """Phrase -> best score so far."""

    def __init__(self) -> None:
        self.best: dict[str, float] = {}

    def add(self, words: Iterable[str] | str, score: float) -> None:
        phrase = words if isinstance(words, str) else " ".join(words)
        phrase = " ".join(phrase.lower().split())
        score = round(min(1.0, max(0.05, score)), 4)
        if phrase and score > self.best.get(phrase, 0.0):
            self.best[phrase] = score

    def add_forms(self, words: list[str], top: float) -> None:
        """The words, their expansions (0.05 lower; 0.08 for a second reading of an ambiguous
        abbreviation) and number variants of each (0.05 lower again)."""
        split = [p for w in words for p in split_glued(w.lower())]
        primary = [p for w in split for p in _readings(w)[0]]
        for i, variant in enumerate(expand(words)):
            score = top if i == 0 else top - (0.05 if variant in (split, primary) else 0.08)
            self.add(variant, score)
            for other in _number_variants(variant):
                self.add(other, score - 0.05)

    def result(self) -> list[tuple[str, float]]:
        return sorted(self.best.items(), key=lambda kv: (-kv[1], kv[0]))


def _number_variants(words: list[str]) -> list[list[str]]:
    if not words or not words[-1].isalpha() or words[-1] in STOPWORDS:
        return []
    last = words[-1]
    forms = {lemma(last)}
    if "NOUN" in _dict_lemmas(last) or not is_english_word(last):
        forms.add(plural(last))  # no plural of a verb or adjective: discontinued
    out = [[*words[:-1], f] for f in forms if f != last]
    lemmas = [lemma(w) if w.isalpha() else w for w in words]
    if lemmas != words:
        out.append(lemmas)
    return out


def _lemmas(words: Iterable[str]) -> list[str]:
    return [lemma(w) for w in words]


def _owner_variants(owner: str) -> list[list[str]]:
    return [_lemmas(v) for v in expand(split_identifier(owner))]


def _strip_owner_words(words: list[str], owner_variants: list[list[str]]) -> list[str] | None:
    """The words after a leading owner name (``customer name`` on Customer -> ``name``), also when
    the name is written as shorthand (``cust name``)."""
    for variant in expand(words):
        lv = _lemmas(variant)
        for ov in owner_variants:
            if ov and len(lv) > len(ov) and lv[: len(ov)] == ov:
                return variant[len(ov) :]
    return None


def _strip_owner_initials(words: list[str], owner: str, owner_variants: list[list[str]]) -> list[str] | None:
    """The words after a table-initials prefix (``c_name`` on customer, ``ps_supplycost`` on partsupp)."""
    if len(words) < 2 or not words[0].isalpha() or len(words[0]) > 4:
        return None
    head = words[0]
    initials = {"".join(w[0] for w in v if w) for v in owner_variants}
    joined = "".join(split_identifier(owner))
    if head in initials or (joined.startswith(head) and head != joined and not _is_known_whole(head)):
        return words[1:]
    return None


_UNITS = (
    # lengths, masses, volumes, areas, times, temperatures, speeds, energy, data, shares and currency codes that
    # end a column name as its unit: ``diameter_km``, ``mass_kg``, ``orbit_days``, ``avg_temp_c``, ``price_usd``
    # (not "min"/"max", statistics; not "year", "day": ``birth_year`` is a date part, ``age_years`` a quantity;
    # not one-letter words that are also words or grades: a, s, t, ...)
    "mm cm m km mi ft yd nm um kg g mg lb lbs oz ml cl dl gal m2 m3 km2 ha sqft sqm "
    "sec secs seconds ms ns mins minutes hr hrs hours days wk wks weeks months yr yrs years "
    "c degc degf mph kph kmh kmph knots hz khz mhz ghz kw mw kwh mwh kj cal kcal mv kpa hpa "
    "kb mb gb tb bytes bits pct percent perc ppm usd eur gbp jpy chf cad aud cny inr"
)
UNIT_SUFFIXES = frozenset(_UNITS.split())
"""Words read as a column's unit when they end a name of two or more words: the name without them is also a
form (0.95), since people ask for "the diameter", not "the diameter km"."""


def surface_forms(identifier: str, owner: str | None = None) -> list[tuple[str, float]]:
    forms = _surface_forms(identifier, owner)
    words = split_identifier(identifier)
    if len(words) > 1 and words[-1].lower() in UNIT_SUFFIXES and not words[-2].isdigit():
        acc = _Phrases()
        for phrase, score in forms:
            acc.add(phrase, score)
        for phrase, score in _surface_forms("_".join(words[:-1]), owner):
            acc.add(phrase, score - 0.05)
        return acc.result()
    return forms


def _surface_forms(identifier: str, owner: str | None = None) -> list[tuple[str, float]]:
    """Phrases a user may say for an identifier, best first, each scored in (0, 1].

    The split words score 1.0, their abbreviation-expanded readings 0.95 (0.92 for the second reading
    of an ambiguous one: ``st`` -> street 0.95, state 0.92) and singular/plural variants 0.05 less. Given the ``owner`` (the table a column belongs to), a leading owner name is also
    dropped at 0.9 (``CustomerName`` on Customer: ``customer name`` 1.0, ``name`` 0.9); a leading
    initials prefix (``c_name`` on customer) is dropped at 1.0 and the prefixed form falls to 0.8.
    """
    words = split_identifier(identifier)
    acc = _Phrases()
    if not words:
        return []
    if not owner:
        acc.add_forms(words, 1.0)
        return acc.result()
    ovs = _owner_variants(owner)
    body = _strip_owner_initials(words, owner, ovs)
    if body is not None:
        acc.add_forms(words, 0.8)
        acc.add_forms(body, 1.0)
    else:
        acc.add_forms(words, 1.0)
        body = words
    rest = _strip_owner_words(body, ovs)
    if rest is not None:
        acc.add_forms(rest, 0.9)
    return acc.result()


def _fk_stem(column: str, from_type: str) -> list[str]:
    """An FK column's words without a table-initials prefix and its trailing key word:
    ``SupportRepId`` -> ``support rep``, ``o_custkey`` on orders -> ``cust``."""
    words = split_identifier(column)
    words = _strip_owner_initials(words, from_type, _owner_variants(from_type)) or words
    if words and words[-1] not in KEY_WORDS:
        glued = list(split_glued(words[-1]))
        if len(glued) > 1 and glued[-1] in KEY_WORDS:
            words = [*words[:-1], *glued]  # custkey -> cust key
    while len(words) > 1 and (words[-1] in KEY_WORDS or words[-1].isdigit()):
        words = words[:-1]
    return words


def _role_phrases(words: list[str], self_ref: bool, acc: _Phrases, score: float) -> None:
    for variant in expand(words):
        key = " ".join(_lemmas(variant))
        for phrase in ROLE_PHRASES.get(key, ()):
            acc.add(phrase, score)
        if self_ref:
            for phrase in SELF_ROLE_PHRASES.get(key, ()):
                acc.add(phrase, score)


def _verb_forms(words: list[str]) -> list[list[str]]:
    """``reports to`` -> ``report to``, ``reported to``, ``reporting to``: a verb followed by a preposition."""
    if len(words) < 2 or words[-1] not in STOPWORDS or "VERB" not in _dict_lemmas(words[0]):
        return []
    base = lemma(words[0])
    forms = _dict_inflections(base)
    heads = {base, *(f for tag in ("VBD", "VBN", "VBG", "VBZ") for f in forms.get(tag, ()))}
    return [[h, *words[1:]] for h in sorted(heads) if h != words[0]]


def relationship_phrases(
    rel_name: str, fk_columns: list[str], from_type: str, to_type: str
) -> list[tuple[str, float]]:
    """Phrases for a foreign-key relationship, best first, each scored in (0, 1].

    From the relationship's name (``ReportsTo`` -> ``reports to`` 1.0, ``report to`` 0.9), from each
    FK column's stem (``SupportRepId`` -> ``support rep`` 0.95, ``support representative`` 0.9, its
    head word ``rep`` 0.8; ``manager_staff_id`` to staff -> ``manager`` 0.95; ``CustomerId`` to
    Customer -> ``customer`` 0.9), and from a general table of organisational roles (``manager``,
    ``created by``, ``assigned to`` ...; hierarchy words such as ``boss`` only when the relationship
    points back at its own type), 0.85.
    """
    acc = _Phrases()
    to_words = split_identifier(to_type)
    to_lem = _lemmas(to_words)
    self_ref = bool(to_lem) and _lemmas(split_identifier(from_type)) == to_lem

    rel_words = split_identifier(rel_name)
    if rel_words:
        acc.add_forms(rel_words, 1.0)
        for form in _verb_forms(rel_words):
            acc.add(form, 0.9)
        if rel_words[0] in _GENERIC_REL_HEADS and len(rel_words) > 1:
            acc.add_forms(rel_words[1:], 0.85)  # HAS_INVOICE -> invoice
        _role_phrases(rel_words, self_ref, acc, 0.85)

    for column in fk_columns:
        stem = _fk_stem(column, from_type)
        if not stem or stem[0] in KEY_WORDS:
            acc.add(to_words, 0.9)
            continue
        stem_lem = _lemmas(stem)
        if stem_lem == to_lem or any(_lemmas(v) == to_lem for v in expand(stem)):
            acc.add_forms(to_words, 0.9)  # CustomerId -> customer
            continue
        n = len(to_lem)
        if n and len(stem) > n and stem_lem[-n:] == to_lem:
            acc.add_forms(stem[:-n], 0.95)  # manager_staff_id to staff -> manager
            acc.add_forms(stem, 0.9)
            core = stem[:-n]
        else:
            acc.add_forms(stem, 0.95)
            core = stem
        _role_phrases(core, self_ref, acc, 0.85)
        if len(core) > 1 and core[-1] not in STOPWORDS:
            acc.add_forms(core[-1:], 0.8)  # support rep -> rep
            _role_phrases(core[-1:], self_ref, acc, 0.8)
    return acc.result()
