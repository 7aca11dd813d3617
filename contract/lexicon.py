"""The words a user might say for a database identifier: split, expand shorthand, inflect.

Pure and general-purpose: nothing here knows a particular data set. ``split_identifier`` turns
``CustomerID`` into ``["customer", "id"]``; ``expand`` reads shorthand (``acct bal`` -> ``account
balance``) and glued names (``tailnum`` -> ``tail number``); ``lemma``/``plural``/``inflections``
come from lemminflect's offline dictionary, guarded by simple suffix rules for words it does not
know; ``surface_forms`` and ``relationship_phrases`` score the phrases a question may use for a
column, a table or a foreign key. Word tables live in ``contract.lexicon_data``.
"""

from __future__ import annotations

from collections.abc import Iterable

from esc.contract.identifiers import expand, is_known_whole, readings, split_glued, split_identifier
from esc.contract.lexicon_data import ABBREVIATIONS as ABBREVIATIONS
from esc.contract.lexicon_data import KEY_WORDS, ROLE_PHRASES, SELF_ROLE_PHRASES, STOPWORDS
from esc.contract.morphology import dict_inflections, dict_lemmas, inflections, is_english_word, lemma, plural

__all__ = [
    "expand", "inflections", "is_english_word", "lemma", "plural", "relationship_phrases", "split_glued",
    "split_identifier", "surface_forms",
]

_GENERIC_REL_HEADS = frozenset({"has", "have", "belongs", "belong", "ref", "refs", "references", "rel", "fk"})


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
        primary = [p for w in split for p in readings(w)[0]]
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
    if "NOUN" in dict_lemmas(last) or not is_english_word(last):
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
    if head in initials or (joined.startswith(head) and head != joined and not is_known_whole(head)):
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
    if len(words) < 2 or words[-1] not in STOPWORDS or "VERB" not in dict_lemmas(words[0]):
        return []
    base = lemma(words[0])
    forms = dict_inflections(base)
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
