"""The phrases a question may use for each element of one contract version (entity types, attributes,
relationships), each with a score for how directly it names the element.

Sources of phrases, best first:

* the identifier itself, split and read (``contract.lexicon``): ``UnitsInStock`` -> "units in stock" (1.0),
  ``dep_delay`` -> "departure delay" (0.95), ``Email`` on Customer -> "email" (1.0), ``CustomerName`` -> "name"
  (0.9), ``c_acctbal`` -> "account balance";
* foreign-key relationships by name, column and role (``relationship_phrases``): ``ReportsTo`` -> "reports to",
  "works for", "manager", "direct report"; ``SupportRepId`` -> "support rep", "account manager";
* WordNet (``agents.query.wordnet``) for the head word of each phrase: synonyms of its first senses, derived
  forms and direct hypernyms/hyponyms ("client" -> Customer 0.9 x 0.85, "movie" -> Film, "maker" ->
  manufacturer, "compose" -> composer).

Keys are tuples of base forms (``words.base``), so "customers", "Customer's" and "customer" meet. The index is
built once per contract version (``Grounding``), never per question.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Literal

from esc.agents.query import wordnet
from esc.agents.query.words import FUNCTION_WORDS, base
from esc.contract.lexicon import relationship_phrases, split_identifier, surface_forms
from esc.contract.lexicon_data import STOPWORDS as SHORT_WORDS

ElementKind = Literal["type", "attr", "rel"]
MAX_PHRASE = 4
WORDNET_FACTOR = 0.9
"""A WordNet link scores below the name it comes from (a synonym of a name is weaker evidence than the name)."""
HEAD_ONLY = 0.6
"""The last word of a multi-word name alone ("delay" for ``arr_delay``): weak, it names several fields."""
INVERSE_ROLES = frozenset({"subordinate", "direct report", "report", "reports", "mentee", "child", "subcategory",
                           "team member", "staff member", "underling"})  # fmt: skip
"""Role nouns that name the *referencing* end of a self-relationship ("X's direct reports" report to X)."""


@dataclass(frozen=True)
class Element:
    kind: ElementKind
    entity: str  # the type; an attribute's owner; a relationship's referencing type
    name: str  # type name, attribute name or relationship name
    target: str = ""  # a relationship's referenced type


@dataclass
class Link:
    score: float
    how: str  # name | wordnet | head | role-inverse | role-forward
    inverse: bool = False  # role noun naming the referencing end ("direct reports")


def ordered(links: dict[Element, Link]) -> dict[Element, Link]:
    """Links best first, ties in a fixed order (kind, type, name): readings never depend on hash order."""
    return dict(sorted(links.items(), key=lambda kv: (-kv[1].score, kv[0].kind, kv[0].entity, kv[0].name)))


@dataclass
class PhraseIndex:
    phrases: dict[tuple[str, ...], dict[Element, Link]] = field(default_factory=dict)
    words: set[str] = field(default_factory=set)  # every word of every phrase (for typo repair)
    max_len: int = 1
    stems: dict[str, set[Element]] = field(default_factory=dict)  # short name parts ("temp", "dewp", "visib")

    def truncations(self, words: list[str]) -> dict[Element, Link]:
        """Fields whose short name is these words cut short: "temperature" -> temp, "visibility" -> visib,
        "dew point" -> dewp (the first word whole, the second's first letters)."""
        out: dict[Element, Link] = {}
        if not words or any(len(w) < 2 for w in words):
            return out
        for stem in sorted(self.stems):
            elements = sorted(self.stems[stem], key=lambda e: (e.entity, e.name))
            if len(words) == 1:
                w = words[0]
                ok = len(w) > len(stem) >= 3 and w.startswith(stem) and len(stem) >= 0.35 * len(w)
            else:
                w1, w2 = words[0], words[1]
                ok = stem.startswith(w1) and len(stem) > len(w1) and w2.startswith(stem[len(w1) :])
            if ok:
                for el in elements:
                    out[el] = Link(TRUNCATION, "truncation")
        return ordered(out)

    def add(self, words: Iterable[str], element: Element, score: float, how: str, inverse: bool = False) -> None:
        key = tuple(base(w) for w in words if w)
        if not key or len(key) > MAX_PHRASE or all(w in FUNCTION_WORDS or w.isdigit() for w in key):
            return
        if key[-1].isdigit() and len(key) == 1:
            return
        if key[-1] in SHORT_WORDS and element.kind != "rel":
            return  # "units in" is not a name
        slot = self.phrases.setdefault(key, {})
        old = slot.get(element)
        if old is None or score > old.score:
            slot[element] = Link(round(score, 4), how, inverse)
        self.words.update(key)
        self.max_len = max(self.max_len, len(key))

    def lookup(self, key: tuple[str, ...]) -> dict[Element, Link]:
        return ordered(self.phrases.get(key, {}))


def _wordnet_variants(words: list[str], score: float) -> list[tuple[list[str], float]]:
    """The phrase with its head (last) word replaced by each WordNet relative, and the whole phrase's relatives."""
    out: list[tuple[list[str], float]] = []
    if not words:
        return out
    whole = " ".join(words)
    for other, rel in wordnet.related(whole, ("n",)).items() if len(words) > 1 else ():
        out.append((other.split(), score * rel * WORDNET_FACTOR))
    head = words[-1]
    if head in FUNCTION_WORDS or len(head) < 3:
        return out
    for other, rel in wordnet.related(head, ("n",)).items():  # a field or a type is a noun: its noun senses
        if len(other.split()) > 2:
            continue
        out.append(([*words[:-1], *other.split()], score * rel * WORDNET_FACTOR))
    return out


def _add_forms(index: PhraseIndex, forms: list[tuple[str, float]], element: Element, expand: bool) -> None:
    for phrase, score in forms:
        words = phrase.split()
        index.add(words, element, score, "name")
        if expand and score >= 0.9:
            for variant, vscore in _wordnet_variants(words, score):
                index.add(variant, element, vscore, "wordnet")
        if len(words) > 1 and score >= 0.9 and words[-1] not in FUNCTION_WORDS:
            index.add(words[-1:], element, HEAD_ONLY * score, "head")
            if expand:
                for variant, vscore in _wordnet_variants(words[-1:], HEAD_ONLY * score):
                    index.add(variant, element, vscore, "wordnet")


GENERIC_HEADS = ("address", "number", "name", "code", "value", "amount", "date", "time")
"""Nouns people add after a field's name without changing what it is: "email address", "phone number"."""


TRUNCATION = 0.8
"""A field named by cutting a word short ("temp" for temperature): fair evidence, below a spelled-out name."""
MODIFIER_ONLY = 0.75
"""The first word of "<word> name/number/date" alone ("contact" for ContactName): fair evidence, when that word
starts no other field of the type."""


def _add_heads(index: PhraseIndex, forms: list[tuple[str, float]], element: Element, type_words: set[str],
               firsts: dict[str, int]) -> None:  # fmt: skip
    for phrase, score in forms:
        words = phrase.split()
        if (
            len(words) == 2 and words[-1] in GENERIC_HEADS and score >= 0.95
            and base(words[0]) not in type_words and firsts.get(base(words[0]), 0) == 1
        ):
            index.add(words[:1], element, MODIFIER_ONLY * score, "modifier")  # ContactName -> "contact"
        if score < 0.9 or len(words) > 2 or words[-1] in GENERIC_HEADS:
            continue
        for head in GENERIC_HEADS:
            index.add([*words, head], element, score * 0.95, "name")


def _word_prefix(word: str) -> str | None:
    """The longest English word of 4+ letters a glued name starts with, when what follows is no word
    ("albumqzkx" -> album); None for names that are words or split into words."""
    from esc.contract.lexicon import is_english_word, split_glued

    if len(word) < 7 or not word.isalpha() or is_english_word(word) or len(split_glued(word)) > 1:
        return None
    for k in range(len(word) - 3, 3, -1):
        if is_english_word(word[:k]) and not is_english_word(word[k:]):
            return word[:k]
    return None


KEY_HEADS = ("code", "id", "key", "number", "identifier")
"""'<type> code' names the type's own key ("airport code" -> faa, "airline codes" -> carrier)."""


def build(contract_entities: list[tuple[str, str, list[str]]], rels: list[tuple[str, str, str, list[str]]],
          expand: bool = True, keys: dict[str, str] | None = None) -> PhraseIndex:  # fmt: skip
    """``contract_entities``: (type name, source name, attribute names); ``rels``: (relationship name, from type,
    to type, FK column names); ``keys``: type -> its single-column identity key."""
    index = PhraseIndex()
    type_words = {base(w) for e, _s, _a in contract_entities for w in split_identifier(e)}
    for entity, source, attrs in contract_entities:
        el = Element("type", entity, entity)
        _add_forms(index, surface_forms(entity), el, expand)
        words = split_identifier(entity)
        cut = next((k for k, w in enumerate(words) if any(c.isdigit() for c in w)), len(words))
        if 0 < cut < len(words):  # "Orders01Ae9D23F7" (a tagged or versioned name) -> "orders"
            _add_forms(index, [(p, s * 0.95) for p, s in surface_forms("_".join(words[:cut]))], el, expand)
        head = _word_prefix(words[0]) if len(words) == 1 else None
        if head is not None:  # "Bandkfhjbdea" (a name with a tag glued on) -> "band"
            _add_forms(index, [(p, s * 0.9) for p, s in surface_forms(head)], el, expand)
        last = source.rsplit(".", 1)[-1]
        if split_identifier(last) != split_identifier(entity):
            _add_forms(index, [(p, s * 0.95) for p, s in surface_forms(last)], el, expand)
        firsts: dict[str, int] = {}
        for attr in attrs:
            words = split_identifier(attr)
            if len(words) == 2 and words[-1] in GENERIC_HEADS:
                firsts[base(words[0])] = firsts.get(base(words[0]), 0) + 1
        for attr in attrs:
            parts = split_identifier(attr)
            for part in {*parts, "".join(parts)}:
                if len(part) >= 3 and part.isalpha() and part not in FUNCTION_WORDS and part not in SHORT_WORDS:
                    index.stems.setdefault(part, set()).add(Element("attr", entity, attr))
            forms = surface_forms(attr, owner=entity)
            _add_forms(index, forms, Element("attr", entity, attr), expand)
            _add_heads(index, forms, Element("attr", entity, attr), type_words, firsts)
    for entity, key in (keys or {}).items():
        el = Element("attr", entity, key)
        for phrase, score in surface_forms(entity):
            if score < 0.9:
                continue
            for head in KEY_HEADS:
                index.add([*phrase.split(), head], el, 0.9 * score, "type-key")
    type_keys = {e: {tuple(base(w) for w in p.split()) for p, _ in surface_forms(e)} for e, _s, _a in contract_entities}
    for name, src, dst, columns in rels:
        el = Element("rel", src, name, dst)
        self_ref = src == dst
        for phrase, score in relationship_phrases(name, columns, src, dst):
            words = phrase.split()
            if not self_ref and tuple(base(w) for w in words) in type_keys.get(dst, set()) | type_keys.get(src, set()):
                continue  # "customer" for Invoice -> Customer names the type, not a role
            inverse = self_ref and (phrase in INVERSE_ROLES or " ".join(base(w) for w in words) in INVERSE_ROLES)
            index.add(words, el, score, "role-inverse" if inverse else "name", inverse)
            if expand and len(words) <= 2 and score >= 0.9 and not inverse:
                # the verb behind a role noun: manager -> manage, supplier -> supply
                for other, rel in wordnet.related(words[-1], ("n",)).items():
                    if rel == wordnet.DERIVED and " " not in other:
                        index.add([*words[:-1], other], el, score * rel * WORDNET_FACTOR, "wordnet")
    return index
