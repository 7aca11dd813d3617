"""The contract's vocabulary as a question reader sees it: names of types, attributes and relationships with their
word variants, which attribute names an entity, and dictionaries of the values the profiles and the graph hold.

Nothing here is specific to a data set: words come from the contract (``UnitsInStock`` -> "units in stock",
``film_actor`` -> "film actor", ``SUPPORT_REP`` -> "support rep"), variants from a small English stemmer, and a
short general lexicon (duration words, money words, "manager" for "reports to").
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from esc.agents.query.plan import Expr
from esc.agents.query.value_index import TOKEN_PATTERN, ValueHit, ValueIndex, fold, norm_value

__all__ = ["ValueHit", "ValueIndex", "fold", "norm_value"]
from esc.contract.er_fields import looks_like_names
from esc.contract.model import Attribute, Contract, EntityType, TimeMark
from esc.contract.time_marks import iso_text

_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
TOKEN = re.compile(TOKEN_PATTERN, re.UNICODE)  # "Ralston's" -> Ralston + s; "O'Reilly" stays one word

STOPWORDS = frozenset(
    ["a", "an", "the", "of", "in", "on", "at", "to", "by", "for", "from", "with", "as", "is", "are", "was", "were", "be", "been", "being", "has", "have", "had", "do", "does", "did", "which", "what", "who", "whom", "whose", "how", "many", "much", "there", "their", "they", "them", "it", "its", "this", "that", "these", "those", "give", "me", "list", "all", "any", "each", "and", "or", "per", "every", "across", "listed", "catalog", "directly", "credited", "appear", "appears", "included", "represented", "held", "kept", "total", "sum", "average", "avg", "mean", "most", "least", "highest", "lowest", "largest", "smallest", "top", "number", "count", "name", "names", "full", "s", "located", "based", "live", "lives", "living", "where", "when", "new"]
)
"""Words that never ground a value or a name on their own."""

FUNCTION_WORDS = STOPWORDS | frozenset(
    ["i", "me", "my", "mine", "we", "us", "our", "ours", "you", "your", "yours", "he", "him", "his", "she", "her", "hers", "one", "ones", "someone", "anyone", "anybody", "can", "could", "would", "should", "will", "shall", "may", "might", "must", "do", "does", "did", "done", "doing", "am", "show", "tell", "give", "find", "get", "gets", "got", "display", "return", "see", "know", "want", "need", "like", "please", "help", "look", "some", "both", "either", "neither", "only", "just", "also", "ever", "altogether", "exactly", "single", "different", "distinct", "various", "other", "another", "same", "such", "than", "then", "so", "not", "no", "yes", "up", "down", "out", "about", "into", "onto", "over", "under", "after", "before", "between", "through", "without", "within", "along", "among", "via", "here", "there", "now", "currently", "please", "kindly", "if", "whether", "while", "because", "since", "until", "again", "further", "once", "whole", "entire", "overall", "exact", "s", "t", "d", "ll", "ve", "re"]
)
"""General English function words and request verbs: a question may leave these unused without losing meaning.
Any other word that no mention consumes is a content word the answer did not take into account."""
FUTURE_WORDS = frozenset({"will", "next", "tomorrow", "forecast", "predict", "predicted", "projected", "expect"})
OPINION_WORDS = frozenset({"best", "worst", "favourite", "favorite", "should", "recommend", "nicest", "better"})

IRREGULAR = {"paid": "pay", "sold": "sell", "bought": "buy", "made": "make", "spent": "spend", "held": "hold"}

_IRREGULAR_STEMS = frozenset(IRREGULAR.values())
DURATION_WORDS = frozenset({"long", "longer", "longest", "length", "short", "shorter", "shortest", "duration"})
MONEY_WORDS = frozenset({"spent", "spend", "amount", "paid", "pay", "revenue", "sales", "invoiced", "money", "value"})
QUANTITY_WORDS = frozenset({"units", "unit", "quantity", "quantities"})
DERIVED_WORDS = frozenset({"value", "revenue", "sales", "worth"})
DERIVED_VALUE = "=value"
"""Pseudo-attribute: price x quantity (x (1 - discount)) on line-like entities that have those attributes."""
ID_WORDS = frozenset({"id", "key", "fk", "ref"})
_NOT_MEASURE_WORDS = frozenset({"id", "key", "code", "year", "phone", "fax", "zip", "postal", "serial", "no", "nbr",
                                "num", "month", "day", "hour", "minute", "tz", "sequence", "seq"})  # fmt: skip
_MONEY_NAME_WORDS = frozenset({"price", "cost", "amount", "total", "revenue", "salary", "fee", "freight", "charge",
                               "balance", "payment", "rate"})  # fmt: skip


def split_name(name: str) -> list[str]:
    """Words of an identifier: CamelCase, snake_case, spaces and dots ("UnitsInStock" -> units in stock)."""
    out: list[str] = []
    for part in re.split(r"[^A-Za-z0-9]+", name):
        out.extend(w.lower() for w in _CAMEL.findall(part))
    return out


def stem(word: str) -> str:
    """A light English stem: plural, -ed, -ing, and a few irregular verbs ("countries" -> "country")."""
    w = fold(word)
    w = IRREGULAR.get(w, w)
    if len(w) <= 3:
        return w
    if w.endswith("ies") and len(w) > 4:
        return w[:-3] + "y"
    if w.endswith(("sses", "xes", "ches", "shes")):
        return w[:-2]
    if w.endswith("s") and not w.endswith(("ss", "us", "is")):
        w = w[:-1]
    for suffix in ("ing", "ed"):
        if w.endswith(suffix) and len(w) - len(suffix) >= 3:
            w = w[: -len(suffix)]
            if len(w) > 3 and w[-1] == w[-2] and w[-1] not in "lsz":
                w = w[:-1]
            break
    return w


def _root(s: str) -> str:
    return s.rstrip("eyi") if len(s) > 4 else s


@dataclass(frozen=True)
class Token:
    text: str
    low: str
    start: int
    end: int
    index: int

    @property
    def capitalized(self) -> bool:
        return self.text[:1].isupper() or self.text[:1].isdigit()


def tokenize(text: str) -> list[Token]:
    return [
        Token(m.group(0), fold(m.group(0)), m.start(), m.end(), i) for i, m in enumerate(TOKEN.finditer(text))
    ]


# ----------------------------------------------------------------------------------------------- schema words


@dataclass
class AttrInfo:
    entity: str
    name: str
    type: str
    semantic: str | None
    words: list[str]  # split name
    short: list[str]  # split name without the entity's own words at the front ("invoice date" -> "date")
    numeric: bool
    boolean: bool  # an int/bool flag with values 0/1
    identifier: bool
    max_length: int | None
    reference: bool = False  # a foreign-key column (a reference, never a measure)
    distinct: int | None = None
    minimum: Any = None
    maximum: Any = None
    time: TimeMark | None = None  # the contract's time mark (granularity, written form, role)
    name_like: bool = False  # values look like names of people or organisations (contract/er_fields.py)

    @property
    def temporal(self) -> bool:
        """A date or datetime, or text the contract marks as ISO-like dates ("2021-03": compares as text)."""
        return self.type in ("date", "datetime") or self.semantic == "date" or (self.type == "string" and iso_text(self.time))

    @property
    def measure(self) -> bool:
        """A quantity that sums and averages: numeric, not a key, a reference, a code, a flag or a year."""
        if not self.numeric or self.identifier or self.reference or self.boolean or self.semantic == "year":
            return False
        return not (set(self.words) & _NOT_MEASURE_WORDS)

    @property
    def money(self) -> bool:
        return self.semantic == "money" or bool(set(self.words) & _MONEY_NAME_WORDS)

    @property
    def text_like(self) -> bool:
        return self.type in ("string", "text")


@dataclass
class TypeInfo:
    name: str
    source: str
    words: list[str]  # "media type"
    key: list[str]  # identity key attribute names
    display: list[str]  # attributes that name an entity of this type ([first, last] for people)
    attrs: dict[str, AttrInfo] = field(default_factory=dict)


@dataclass
class RelInfo:
    name: str
    from_entity: str
    to_entity: str
    kind: str
    words: list[str]  # content words of the name when they say more than the target type ("support rep")


def _is_first(words: list[str]) -> bool:
    return words[-2:] == ["first", "name"] or words == ["firstname"] or words == ["given", "name"]


def _is_last(words: list[str]) -> bool:
    return words[-2:] in (["last", "name"], ["family", "name"], ["sur", "name"]) or words in (
        ["lastname"],
        ["surname"],
    )


def _display(entity: EntityType, attrs: dict[str, AttrInfo], words: list[str]) -> list[str]:
    names = [a for a in attrs.values() if a.type in ("string", "text") and not a.identifier]
    first = next((a.name for a in names if _is_first(a.words)), None)
    last = next((a.name for a in names if _is_last(a.words)), None)
    if first and last:
        return [first, last]
    ent = {stem(w) for w in words}
    ranked: list[tuple[int, int, str]] = []
    for i, a in enumerate(names):
        ws = [stem(w) for w in a.words]
        if ws == [stem(w) for w in words] or (ws and ws[-1] in ent and len(ws) == 1):
            score = 0  # the attribute named like the type: City.city, Address.address
        elif ws[-1:] == ["name"] and ws[:-1] and set(ws[:-1]) <= ent:
            score = 1  # ProductName on Product
        elif ws == ["name"] or ws == ["title"]:
            score = 2
        elif ws[-1:] == ["name"]:
            score = 3  # CompanyName
        elif ws[-1:] == ["description"] and set(ws[:-1]) <= ent:
            score = 4  # TerritoryDescription
        elif a.semantic == "name" or a.name_like:
            score = 5
        else:
            continue
        ranked.append((score, i, a.name))
    if ranked:
        best = min(ranked)
        if best[0] == 0 and _codes(attrs[best[2]]):
            # "account" on VendorPortalAccount holding "acct-301": a code named like the type; a field whose
            # values are names says better which one it is
            named = [x for x in ranked if attrs[x[2]].name_like]
            best = min(named) if named else best
        return [best[2]]
    keys = [a.name for a in attrs.values() if a.identifier]
    return keys[:1]


_CODE = re.compile(r"[A-Za-z]*[-_.]?\d+[-_.A-Za-z0-9]*")


def _codes(a: AttrInfo) -> bool:
    """Values written as codes ("acct-301", "C-1001"), going by the profile's smallest and largest."""
    ends = [str(v) for v in (a.minimum, a.maximum) if v is not None]
    return bool(ends) and all(_CODE.fullmatch(v) for v in ends)


def derived_value(info: TypeInfo) -> Expr | None:
    """price x quantity (x (1 - discount)) for a line-like type: one money attribute, one quantity-named measure,
    and optionally one percent/discount attribute."""
    money = [a for a in info.attrs.values() if a.semantic == "money" and a.numeric]
    qty = [a for a in info.attrs.values() if a.numeric and ("quantity" in a.words or a.words == ["qty"])]
    if len(money) != 1 or len(qty) != 1:
        return None
    expr = Expr(op="mul", args=[Expr(prop=money[0].name), Expr(prop=qty[0].name)])
    disc = [a for a in info.attrs.values() if a.numeric and (a.semantic == "percent" or "discount" in a.words)]
    if len(disc) == 1:
        expr = Expr(op="mul", args=[expr, Expr(op="sub", args=[Expr(const=1.0), Expr(prop=disc[0].name)])])
    return expr


class Vocabulary:
    """Types, attributes and relationships of one contract version, with word variants."""

    def __init__(self, contract: Contract) -> None:
        self.contract = contract
        self.version = contract.version
        self.types: dict[str, TypeInfo] = {}
        self.rels: list[RelInfo] = []
        for e in contract.entities:
            words = split_name(e.name)
            attrs = {a.name: self._attr(e, a, words) for a in e.attributes}
            key = [n for fid in e.key if (hit := contract.field_by_id(fid)) for n in [hit[1].name]]
            info = TypeInfo(e.name, e.source, words, key, [], attrs)
            info.display = _display(e, attrs, words)
            self.types[e.name] = info
        self.derived: dict[str, Expr] = {}
        for info in self.types.values():
            expr = derived_value(info)
            if expr is not None:
                self.derived[info.name] = expr
        self.cache: dict[str, Any] = {}
        refs = {(r.from_entity, fid) for r in contract.relationships for fid in r.from_fields}
        for e in contract.entities:
            for a in e.attributes:
                if (e.name, a.field_id) in refs and a.name in self.types[e.name].attrs:
                    self.types[e.name].attrs[a.name].reference = True
        for r in contract.relationships:
            words = [w for w in split_name(r.name) if w not in ("has", "to", "of", "via", "by")]
            target = self.types.get(r.to_entity)
            target_words = {stem(w) for w in (target.words if target else [])}
            if r.kind == "nesting" or {stem(w) for w in words} <= target_words:
                words = []
            self.rels.append(RelInfo(r.name, r.from_entity, r.to_entity, r.kind, words))

    def _attr(self, e: EntityType, a: Attribute, entity_words: list[str]) -> AttrInfo:
        hit = self.contract.field_by_id(a.field_id)
        spec = hit[1] if hit else None
        words = split_name(a.name)
        short = words
        ent = [stem(w) for w in entity_words]
        k = 0
        while k < len(words) - 1 and k < len(ent) and stem(words[k]) == ent[k]:
            k += 1
        if k:
            short = words[k:]
        identifier = (a.semantic == "identifier") or (bool(words) and words[-1] in ID_WORDS)
        values = {str(v) for v, _ in (spec.top_values if spec else [])}
        boolean = a.type == "bool" or (a.type == "int" and bool(values) and values <= {"0", "1", "True", "False"})
        return AttrInfo(
            entity=e.name,
            name=a.name,
            type=a.type,
            semantic=a.semantic,
            words=words,
            short=short,
            numeric=a.type in ("int", "float", "decimal") and not identifier,
            boolean=boolean,
            identifier=identifier,
            max_length=spec.max_length if spec else None,
            distinct=spec.distinct if spec else None,
            minimum=spec.min if spec else None,
            maximum=spec.max if spec else None,
            time=a.time,
            name_like=spec is not None and looks_like_names(spec),
        )

    def neighbours(self, entity: str) -> list[tuple[RelInfo, str, str]]:
        """(relationship, direction from ``entity``, other entity) for every relationship touching ``entity``."""
        out = []
        for r in self.rels:
            if r.from_entity == entity:
                out.append((r, "out", r.to_entity))
            if r.to_entity == entity:
                out.append((r, "in", r.from_entity))
        return out


# ----------------------------------------------------------------------------------------------- value dictionary


MAX_INDEXED_FIELD_CHARS = 400
"""Fields whose longest value is longer are prose (vector territory); shorter ones are indexed value by value."""


def indexable(attr: AttrInfo) -> bool:
    """String attributes short enough to be named in a question (not long free text, not emails' siblings)."""
    if attr.type not in ("string", "text"):
        return False
    return attr.max_length is None or attr.max_length <= MAX_INDEXED_FIELD_CHARS


def role_of(info: TypeInfo, attr: AttrInfo, distinct: int | None) -> str:
    if attr.name in info.display:
        return "display"
    if attr.semantic == "category" or (distinct is not None and distinct <= 200):
        return "category"
    return "other"


def profile_values(vocab: Vocabulary) -> ValueIndex:
    """A value index from the contract's profiles only (top values and examples): a fallback without a graph."""
    index = ValueIndex()
    for info in vocab.types.values():
        for attr in info.attrs.values():
            if not indexable(attr):
                continue
            spec = next(
                (
                    f
                    for f in vocab.contract.sources.get(info.source, _EMPTY).fields
                    if f.name == attr.name
                ),
                None,
            )
            if spec is None:
                continue
            role = role_of(info, attr, spec.distinct)
            for v in [*(v for v, _ in spec.top_values), *spec.examples]:
                if isinstance(v, str) and v.strip():
                    index.add(v, ValueHit(info.name, ((attr.name, v),), role))
    return index


class _Empty:
    fields: tuple[Any, ...] = ()


_EMPTY: Any = _Empty()
