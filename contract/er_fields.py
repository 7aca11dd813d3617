"""Which sources denote people or organisations, and which of their fields compare (entity resolution, issue #16).

Decided from the contract alone, in general terms (no data set's words):

* **Roles** of a field, from its semantic type (detected from values while profiling: e-mail, phone), from general
  English name words (given / family name, city, country, postal code, address, birth) and from the shape of its
  values: a string field whose values look like personal or organisation names (two to four words of letters, a
  "Last, First" comma allowed) and that is nearly unique is a full name, whatever it is called.
* A source is **identifying** (its records may be linked to others) when it has an e-mail or a phone, or a name
  (a full name, or a given and a family name) and a second thing to compare (city, postal code, address, birth).
* Its **time field**: the date or datetime field the contract marks as an update time (``time.role: updated``,
  contract/time_marks.py); it decides which record's value is current.
* The **canonical attribute** of each field: the role's name for role fields; otherwise the field's name words
  without unit words ("balance_cents" -> balance); a measure whose words contain another's ("account balance" /
  "balance") shares that one's name. The **scale** to the canonical unit is the contract's unit mark
  (contract/units.py: a header word, a unit column, or value ranges across the sources linked here); a header word
  applies only when another source holds the same attribute without one, a unit column scales each record by its
  own unit.

Pure and deterministic: the same contract gives the same spec.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from esc.contract.model import Contract, FieldSpec, TimeMark, UnitMark
from esc.contract.semantic import tokens
from esc.contract.time_marks import BIRTH_WORDS, iso_text
from esc.contract.units import UNIT_WORDS

GIVEN_WORDS = frozenset({"first", "given", "fore", "forename", "firstname", "givenname", "fname"})
FAMILY_WORDS = frozenset({"last", "family", "sur", "surname", "lastname", "familyname", "lname"})
CITY_WORDS = frozenset({"city", "town", "locality", "municipality"})
COUNTRY_WORDS = frozenset({"country"})
POSTAL_WORDS = frozenset({"zip", "postal", "postcode", "zipcode", "plz"})
ADDRESS_WORDS = frozenset({"address", "street", "addr"})
FAX_WORDS = frozenset({"fax"})
STRONG_ROLES = ("email", "phone")
SECOND_ROLES = frozenset({"city", "postal_code", "address", "birth_date"})
NAME_ROLES = ("name", "given_name", "family_name")
MIN_NAME_UNIQUENESS = 0.5
"""A full-name field is nearly unique (cities and categories repeat)."""
_NAME_VALUE = re.compile(r"^[^\W\d_]+(?:[.'’-][^\W\d_]*)*\.?(?:,?\s+[^\W\d_]+(?:[.'’-][^\W\d_]*)*\.?){1,3}$")


@dataclass(frozen=True)
class TypeSpec:
    """How one entity type takes part in resolution."""

    label: str
    source: str
    roles: dict[str, str]  # role -> field name
    time_field: str | None
    canon: dict[str, str]  # attribute -> canonical attribute
    scale: dict[str, float] = field(default_factory=dict)  # attribute -> factor to the canonical unit
    types: dict[str, str] = field(default_factory=dict)  # attribute -> physical type
    quiet: frozenset[str] = frozenset()  # identifiers: consolidated, but different ids are no conflict
    columns: dict[str, tuple[str, dict[str, float]]] = field(default_factory=dict)  # attr -> (unit column, scales)

    @property
    def identifying(self) -> bool:
        """An e-mail or a phone, or a name with a second thing to compare (a name alone never links)."""
        r = self.roles
        named = "name" in r or ("given_name" in r and "family_name" in r)
        return "email" in r or "phone" in r or (named and bool(set(r) & SECOND_ROLES))


@dataclass(frozen=True)
class ResolutionSpec:
    types: dict[str, TypeSpec]  # label -> spec, identifying types only

    def get(self, label: str) -> TypeSpec | None:
        return self.types.get(label)

    def rules(self) -> list[str]:
        """Human-readable statement of what the spec decided (shown with the contract)."""
        out = []
        for t in self.types.values():
            roles = ", ".join(f"{r}={f}" for r, f in sorted(t.roles.items()))
            out.append(f"{t.label}: compares {roles}; current value by {t.time_field or 'no time field'}")
            for a, s in sorted(t.scale.items()):
                out.append(f"{t.label}.{a}: x {s:g} -> {t.canon.get(a, a)}")
            for a, (col, _scales) in sorted(t.columns.items()):
                out.append(f"{t.label}.{a}: unit from {col} -> {t.canon.get(a, a)}")
        return out


def looks_like_names(f: FieldSpec) -> bool:
    """A string field whose observed values are mostly short word sequences (personal or organisation names) and
    nearly unique."""
    if f.type not in ("string",) or f.semantic in ("email", "url", "phone", "identifier", "free_text"):
        return False
    values = [v for v in [*f.examples, *(t[0] for t in f.top_values)] if isinstance(v, str) and v.strip()]
    if len(values) < 2 or f.uniqueness < MIN_NAME_UNIQUENESS:
        return False
    return sum(bool(_NAME_VALUE.match(v.strip())) for v in values) >= 0.8 * len(values)


def role_of(f: FieldSpec) -> str | None:
    words = set(tokens(f.name))
    if f.semantic == "email":
        return "email"
    if f.semantic == "phone":
        return "fax" if words & FAX_WORDS else "phone"
    if f.type in ("date", "datetime"):
        if words & BIRTH_WORDS:
            return "birth_date"
        return None
    if f.type != "string":
        return None
    if words & GIVEN_WORDS and ("name" in words or f.semantic == "name"):
        return "given_name"
    if words & FAMILY_WORDS and ("name" in words or f.semantic == "name"):
        return "family_name"
    if words & CITY_WORDS:
        return "city"
    if words & COUNTRY_WORDS:
        return "country"
    if words & POSTAL_WORDS:
        return "postal_code"
    if words & ADDRESS_WORDS:
        return "address"
    if looks_like_names(f):
        return "name"
    return None


def _roles(fields: list[FieldSpec]) -> dict[str, str]:
    out: dict[str, str] = {}
    for f in fields:
        role = role_of(f)
        if role is not None and role not in out:
            out[role] = f.name
    if "name" in out and ("given_name" in out or "family_name" in out):
        del out["name"]  # separate name parts say more than a second name-like field
    return out


def _plain(name: str) -> tuple[str, ...]:
    return tuple(w for w in tokens(name) if w not in UNIT_WORDS) or tuple(tokens(name))


@dataclass(frozen=True)
class SourceCanon:
    """A resolvable source: its roles and the canonical attribute of each field."""

    source: str
    roles: dict[str, str]
    canon: dict[str, str]
    types: dict[str, str]
    quiet: frozenset[str]


def canonical_sources(contract: Contract) -> dict[str, SourceCanon]:
    """Every top-level source whose records may be linked (see :attr:`TypeSpec.identifying`), with the canonical
    attribute names: roles first, then plain words; a measure shares the shortest measure name its words contain."""
    found: dict[str, tuple[dict[str, str], list[FieldSpec]]] = {}
    for name in sorted(contract.sources):
        src = contract.sources[name]
        if src.parent is not None:
            continue
        roles = _roles(src.fields)
        if TypeSpec(name, name, roles, None, {}).identifying:
            found[name] = (roles, src.fields)
    plain: dict[tuple[str, str], tuple[str, ...]] = {}
    measures: set[tuple[str, ...]] = set()
    for name, (roles, fields) in found.items():
        by_field = {f: r for r, f in roles.items()}
        for f in fields:
            if f.name in by_field:
                continue
            plain[(name, f.name)] = _plain(f.name)
            if f.type in ("int", "float", "decimal") and f.semantic in ("money", "measure", "percent"):
                measures.add(_plain(f.name))
    out: dict[str, SourceCanon] = {}
    for name, (roles, fields) in found.items():
        by_field = {f: r for r, f in roles.items()}
        canon: dict[str, str] = {}
        for f in fields:
            if f.name in by_field:
                canon[f.name] = by_field[f.name]
                continue
            words = plain[(name, f.name)]
            if words in measures or f.type in ("int", "float", "decimal"):
                shorter = sorted((m for m in measures if m != words and set(m) < set(words)), key=lambda m: (len(m), m))
                if shorter and f.semantic in ("money", "measure", "percent"):
                    words = shorter[0]
            canon[f.name] = "_".join(words)
        src = contract.sources[name]
        quiet = frozenset(f.name for f in fields if f.semantic == "identifier" or f.name in src.identity_key)
        out[name] = SourceCanon(name, roles, canon, {f.name: f.type for f in fields}, quiet)
    return out


def _marks(contract: Contract) -> dict[str, tuple[TimeMark | None, UnitMark | None]]:
    """Field id -> its marks, as the contract carries them on its attributes; a contract that carries none (written
    before marks existed, or built by hand) gets them computed the same way (contract/annotations.py)."""
    out = {a.field_id: (a.time, a.unit) for e in contract.entities for a in e.attributes if a.time or a.unit}
    if out or not contract.entities:
        return out
    from esc.contract.annotations import annotate

    return annotate(contract)


def build_spec(contract: Contract) -> ResolutionSpec:
    """The resolution spec of a contract (identifying entity types only). Time fields and units are read from the
    contract's marks (contract/annotations.py)."""
    canons = canonical_sources(contract)
    marks = _marks(contract)
    out: dict[str, TypeSpec] = {}
    for e in sorted(contract.entities, key=lambda e: e.name):
        c = canons.get(e.source)
        if c is None or e.name in out:
            continue
        fields = contract.sources[e.source].fields
        tf = None
        scale: dict[str, float] = {}
        columns: dict[str, tuple[str, dict[str, float]]] = {}
        for f in fields:
            time, unit = marks.get(f.id, (None, None))
            if tf is None and time is not None and time.role == "updated" and (f.type in ("date", "datetime") or iso_text(time)):
                tf = f.name
            if unit is None:
                continue
            if unit.column is not None:
                columns[f.name] = (unit.column, dict(unit.scales))
            elif unit.scale != 1.0:
                scale[f.name] = unit.scale
        out[e.name] = TypeSpec(e.name, e.source, dict(c.roles), tf, dict(c.canon), scale, dict(c.types), c.quiet,
                               columns)  # fmt: skip
    # a header word scales only when another type holds the same attribute without one (value ranges only ever
    # mark a field against another source, and a unit column always applies)
    for label, t in out.items():
        for a in list(t.scale):
            target = t.canon[a]
            if not any(o.canon.get(b) == target and b not in o.scale for o in out.values() for b in o.canon if o.label != label or b != a):
                del t.scale[a]
    return ResolutionSpec(out)
