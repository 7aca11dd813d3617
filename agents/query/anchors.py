"""Anchors: the records a question pins down, as filters on entity types, with how sure each reading is.

* a stored value ("Frank Ralston", 'So Cruel', "Brazil"): one alternative per entity/attribute that holds it; a
  type or attribute word next to it ("the album 'X'", "the Jazz genre", "rated PG") says which one is meant;
* a key ("invoice 244", "store 1") and an attribute with a literal ("flight 1545", "tail number N14228");
* a date or a year on a date attribute (or on year/month/day columns), a comparison on a measure, a yes/no flag
  ("discontinued", "inactive").
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from esc.agents.query.phrases import Element
from esc.agents.query.plan import Filter
from esc.agents.query.reading import DateMention, Reading, SchemaMention, ValueMention
from esc.agents.query.value_index import ValueHit
from esc.agents.query.vocabulary import AttrInfo, Vocabulary
from esc.agents.query.words import base

DESIGNATOR_GAP = frozenset({"the", "a", "an", "of", "named", "called", "titled", "'s", "s"})
ROLE_RANK = {"display": 0, "key": 0, "category": 1, "other": 2}


@dataclass
class Anchor:
    entity: str
    filters: list[Filter]
    start: int
    end: int
    score: float
    role: str  # display | category | other | key | literal | date | compare | flag
    designated: bool = False
    text: str = ""
    alts: list[Anchor] = field(default_factory=list)  # the other readings of the same words

    def span(self) -> range:
        return range(self.start, self.end)


def _hit_anchor(v: ValueMention, h: ValueHit) -> Anchor:
    return Anchor(h.entity, [Filter(prop=a, value=val) for a, val in h.values], v.start, v.end, v.score, h.role,
                  text=v.text)  # fmt: skip


def designators(r: Reading, start: int, end: int) -> list[SchemaMention]:
    """Schema mentions right before a span (articles between allowed) or right after it."""
    out = []
    for m in r.schema:
        gap = [r.low(k) for k in range(m.end, start)]
        if (m.end <= start and all(w in DESIGNATOR_GAP for w in gap) and len(gap) <= 2) or m.start == end or (m.start == end + 1 and r.low(end) in ("category", "genre")):
            out.append(m)
    return out


def value_anchors(r: Reading, vocab: Vocabulary, used_schema: set[int]) -> list[Anchor]:
    """One anchor per value mention (its best reading first, the others as ``alts``); schema mentions that
    designate a value are added to ``used_schema`` (by start token)."""
    out: list[Anchor] = []
    for v in r.values:
        alts = [_hit_anchor(v, h) for h in sorted(v.hits, key=lambda h: (h.entity, repr(h.values), h.role))]
        if not alts:
            continue
        for m in designators(r, v.start, v.end):
            types = {e.entity for e in m.of("type")}
            attrs = {(e.entity, e.name) for e in m.of("attr")}
            rels = {e.target for e in m.of("rel")}
            match = [a for a in alts if a.entity in types or a.entity in rels
                     or any((a.entity, f.prop) in attrs for f in a.filters)]  # fmt: skip
            if match:
                for a in match:
                    a.designated = True
                    a.score *= max(lk.score for lk in m.links.values()) ** 0.25
                alts = match
                if not _modifies(v, m, match):
                    used_schema.add(m.start)
                break
        if _negated(r, v.start):
            # "customers not in Germany", "films other than PG": the value is excluded
            for a in alts:
                a.filters = [Filter(prop=f.prop, op="ne", value=f.value) for f in a.filters]
                a.role = "excluded"
        alts.sort(key=lambda a: (not a.designated, ROLE_RANK.get(a.role, 3), -len(a.filters), a.entity, repr(a.filters)))
        best = alts[0]
        best.alts = alts[1:]
        out.append(best)
    return _merge_alternatives(r, out)


def _modifies(v: ValueMention, m: SchemaMention, match: list[Anchor]) -> bool:
    """"open tickets", "cancelled orders": a category value right before a word of its own type qualifies that
    noun, which still says what the question is about (it is not consumed as the value's designator)."""
    types = {e.entity for e in m.of("type")}
    return m.start == v.end and bool(types) and all(a.role == "category" and a.entity in types for a in match)


def _merge_alternatives(r: Reading, anchors: list[Anchor]) -> list[Anchor]:
    """"customers in Brazil and Argentina", "rated PG or G": values of one field joined by and/or/commas are
    alternatives of one filter (a record holds one of them), not two filters no record meets."""
    out: list[Anchor] = []
    for a in sorted(anchors, key=lambda x: x.start):
        prev = out[-1] if out else None
        if (
            prev is not None
            and len(a.filters) == 1 and len(prev.filters) == 1
            and a.entity == prev.entity and a.filters[0].prop == prev.filters[0].prop
            and prev.filters[0].op in ("eq", "in") and a.filters[0].op == "eq"
            and all(r.low(k) in ("and", "or", ",", "nor") for k in range(prev.end, a.start))
            and prev.end < a.start
        ):
            f = prev.filters[0]
            values = f.value if f.op == "in" else [f.value]
            prev.filters = [Filter(prop=f.prop, op="in", value=[*values, a.filters[0].value])]
            prev.end, prev.score = a.end, min(prev.score, a.score)
            prev.text = f"{prev.text}, {a.text}"
            r.used.update(range(prev.start, a.end))
            continue
        out.append(a)
    return out


EXCLUDING = frozenset({"except", "excluding", "outside", "besides"})


def _negated(r: Reading, start: int) -> bool:
    """Is a value preceded by a negation of it ("not in", "not from", "except", "other than", "outside")? The
    negating words are taken."""
    k = start - 1
    while k >= 0 and r.low(k) in ("the", "a", "an", "in", "from", "of", "by", "at", "on", "rated", "based"):
        k -= 1
    if k < 0:
        return False
    if r.low(k) in EXCLUDING:
        r.used.add(k)
        return True
    if r.low(k) == "than" and r.low(k - 1) == "other":
        r.used.update((k - 1, k))
        return True
    if r.low(k) in ("not", "never") or (r.low(k) == "no" and k in r.negated):
        r.used.add(k)
        return True
    return False


def key_anchors(r: Reading, used_schema: set[int]) -> list[Anchor]:
    out = []
    for k in r.keys:
        out.append(Anchor(k.entity, [Filter(prop=k.attr, value=k.value)], k.start, k.end, k.score, "key", True,
                          text=r.text(k.start, k.end)))  # fmt: skip
        used_schema.add(k.start)
    return out


def literal_anchors(r: Reading, vocab: Vocabulary, used_schema: set[int]) -> list[Anchor]:
    """An attribute word followed by a literal it can hold: "flight 1545", "tail number N14228", "with 2 engines"."""
    out = []
    for m in r.schema:
        if m.start in used_schema:
            continue
        attrs = m.of("attr")
        if not attrs:
            continue
        num = next((x for x in r.numbers if x.start == m.end or x.end == m.start), None)
        if num is not None:
            fits = [(e, lk) for e, lk in attrs.items() if _holds_number(vocab.types[e.entity].attrs[e.name], num.value)]
            if fits:
                e, lk = max(fits, key=lambda x: x[1].score)
                value: Any = int(num.value) if num.value.is_integer() else num.value
                out.append(Anchor(e.entity, [Filter(prop=e.name, value=value)], min(m.start, num.start),
                                  max(m.end, num.end), lk.score, "literal", True, r.text(m.start, num.end)))  # fmt: skip
                used_schema.add(m.start)
                r.numbers.remove(num)
                continue
        if m.end < len(r.tokens) and r.free(m.end):
            tok = r.tokens[m.end]
            fits = [(e, lk) for e, lk in attrs.items()
                    if vocab.types[e.entity].attrs[e.name].text_like and _code_like(tok.text)]  # fmt: skip
            if fits:
                e, lk = max(fits, key=lambda x: x[1].score)
                out.append(Anchor(e.entity, [Filter(prop=e.name, op="ieq", value=tok.text)], m.start, m.end + 1,
                                  lk.score, "literal", True, tok.text))  # fmt: skip
                used_schema.add(m.start)
                r.used.add(m.end)
    return out


def _holds_number(a: AttrInfo, value: float) -> bool:
    if not a.numeric and a.type not in ("int", "float", "decimal"):
        return False
    lo, hi = a.minimum, a.maximum
    try:
        return (lo is None or float(lo) <= value) and (hi is None or value <= float(hi))
    except (TypeError, ValueError):
        return True


def _code_like(text: str) -> bool:
    return len(text) >= 2 and any(c.isdigit() for c in text) and text.replace("-", "").isalnum()


# -- dates --------------------------------------------------------------------------------------------------


def date_attrs(vocab: Vocabulary, entity: str) -> list[AttrInfo]:
    """The entity's date attributes, its own-named one first ("InvoiceDate" on Invoice, "rental_date" on Rental),
    audit columns ("last_update", "modified") last."""
    info = vocab.types[entity]
    own = {w for w in info.words}

    def rank(a: AttrInfo) -> tuple[int, int]:
        audit = (a.time is not None and a.time.role == "updated") or bool({"update", "updated", "modified",
                                                                             "created", "last"} & set(a.words))  # fmt: skip
        return (1 if audit else 0, 0 if own & set(a.words) else 1)

    return sorted((a for a in info.attrs.values() if a.temporal), key=rank)


def verb_names(verb: str, a: AttrInfo) -> bool:
    """Does a verb of the question ("delivered", "onboarded", "updated") name this date field (DeliveredAt,
    onboarded, updated_at)? Compared as base forms."""
    v = base(verb)
    return verb in a.words or any(base(w) == v for w in a.words)


def calendar_attrs(vocab: Vocabulary, entity: str) -> dict[str, str]:
    """year / month / day / hour integer columns of an entity, by role."""
    out: dict[str, str] = {}
    for a in vocab.types[entity].attrs.values():
        if a.type != "int" or a.identifier or a.reference:
            continue
        for role in ("year", "month", "day", "hour"):
            if a.words == [role] or (a.semantic == "year" and role == "year" and role not in out):
                out.setdefault(role, a.name)
    return out


def date_filters(vocab: Vocabulary, entity: str, d: DateMention, verb: str | None) -> tuple[list[Filter], float] | None:
    """Filters for a date mention on ``entity`` (None when it has nowhere to put it), and how sure."""
    cal = calendar_attrs(vocab, entity)
    dated = date_attrs(vocab, entity)
    if verb:
        named = [a for a in dated if verb_names(verb, a)]
        if named:
            dated = named + [a for a in dated if a not in named]
    if d.op == "eq" and cal and ("year" in cal or not dated) and (d.year is None or "year" in cal):
        fs = []
        for role, val in (("year", d.year), ("month", d.month), ("day", d.day), ("hour", d.hour)):
            if val is None:
                continue
            if role not in cal:
                return None
            fs.append(Filter(prop=cal[role], value=val))
        return (fs, 1.0) if fs else None
    if not dated or (d.year is None and d.month is None):
        return None
    attr = dated[0].name
    score = 1.0 if len(dated) == 1 or verb else 0.9
    d, coarser = to_granularity(d, dated[0])
    if coarser:
        score *= COARSER  # "on 15 March 2022" where the field records months: the month is asked
    prefix = _iso_prefix(d)
    if prefix is None:
        return None
    if d.op == "eq":
        return [Filter(prop=attr, op="startswith", value=prefix)], score
    if d.op in ("lt", "gte"):
        return [Filter(prop=attr, op=d.op, value=prefix)], score  # type: ignore[arg-type]
    # after / until a period: past its end
    nxt = _next_prefix(d)
    if nxt is None:
        return None
    return [Filter(prop=attr, op="gte" if d.op == "gt" else "lt", value=nxt)], score


COARSER = 0.7
"""Confidence kept when a date is asked more finely than the field records (the contract's time mark)."""


def to_granularity(d: DateMention, a: AttrInfo) -> tuple[DateMention, bool]:
    """The date mention cut to what the field records ("2022-03-15" on a field of months -> March 2022), and
    whether anything was cut."""
    grain = a.time.granularity if a.time is not None else None
    if grain == "year" and (d.month is not None or d.day is not None):
        return DateMention(d.start, d.end, d.year, None, None, None, d.op), True
    if grain == "month" and d.day is not None:
        return DateMention(d.start, d.end, d.year, d.month, None, None, d.op), True
    return d, False


def _iso_prefix(d: DateMention) -> str | None:
    if d.year is None:
        return None
    out = f"{d.year:04d}"
    if d.month is not None:
        out += f"-{d.month:02d}"
        if d.day is not None:
            out += f"-{d.day:02d}"
    return out


def _next_prefix(d: DateMention) -> str | None:
    if d.year is None:
        return None
    if d.month is None:
        return f"{d.year + 1:04d}"
    if d.day is None:
        y, m = (d.year + 1, 1) if d.month == 12 else (d.year, d.month + 1)
        return f"{y:04d}-{m:02d}"
    import datetime as _dt

    try:
        nxt = _dt.date(d.year, d.month, d.day) + _dt.timedelta(days=1)
    except ValueError:
        return None
    return nxt.isoformat()


# -- flags --------------------------------------------------------------------------------------------------


_ASKED_FOR = {"the", "its", "their", "his", "her", "many", "much"}


def flag_filters(r: Reading, vocab: Vocabulary, used_schema: set[int]) -> list[tuple[Element, Filter, int]]:
    """Yes/no attributes used as predicates: "are discontinued", "inactive customers", "not active"."""
    out = []
    for m in r.schema:
        if m.start in used_schema:
            continue
        for e, _lk in m.of("attr").items():
            a = vocab.types[e.entity].attrs[e.name]
            if not a.boolean:
                continue
            before = r.low(m.start - 1)
            if before in _ASKED_FOR or r.low(m.end) == "of":
                break  # "the moons of Earth", "how many moons": the field asked about, not a yes/no condition
            negated = (m.start - 1) in r.negated or before in ("not", "no", "non")
            if negated:
                r.used.add(m.start - 1)
            out.append((e, Filter(prop=e.name, value=0 if negated else 1), m.start))
            used_schema.add(m.start)
            break
    # "no departure time recorded", "without an email": a field that is missing
    for m in r.schema:
        if m.start in used_schema:
            continue
        negs = [k for k in range(max(0, m.start - 3), m.start) if k in r.negated and r.low(k) in ("no", "without")]
        if not negs:
            continue
        gap = range(negs[-1] + 1, m.start)
        if any(r.low(k) in ("than", "more", "less") for k in gap):
            continue
        attrs = m.of("attr")
        if attrs:
            e = max(attrs.items(), key=lambda kv: kv[1].score)[0]
            if not vocab.types[e.entity].attrs[e.name].boolean:
                out.append((e, Filter(prop=e.name, op="isnull", value=None), m.start))
                used_schema.add(m.start)
                r.used.add(negs[-1])
    # "inactive" / "unavailable": a negating prefix on a flag's name
    for t in r.tokens:
        if not r.free(t.index):
            continue
        for prefix in ("in", "un", "non"):
            if t.low.startswith(prefix) and len(t.low) > len(prefix) + 3:
                rest = t.low[len(prefix) :].lstrip("-")
                for info in vocab.types.values():
                    for a in info.attrs.values():
                        if a.boolean and a.words == [rest]:
                            out.append((Element("attr", info.name, a.name), Filter(prop=a.name, value=0), t.index))
                            r.used.add(t.index)
    return out
