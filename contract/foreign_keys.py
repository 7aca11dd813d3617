"""Foreign keys from profiles, tuned for precision.

Inclusion dependencies vastly outnumber real foreign keys (a column of small integers is contained in every
id column), so containment alone is never enough for numbers. A column ``S.c`` references ``T.k`` only when all
hold (a text column of codes may instead qualify by its values alone, see ``value_evidence``):

* ``T.k`` is the identity key of ``T`` (single column; composite targets are handled separately);
* there is *name evidence*, one of (strongest first): same name (``AlbumId`` -> ``AlbumId``); same name after
  the table prefix (``o_custkey`` -> ``c_custkey``); a role prefix ending in the key's name
  (``manager_staff_id`` -> ``staff_id``); a word of the column naming the target source (``ShipVia`` ->
  ``Shippers``); or a person-role word (``SupportRepId``, ``ReportsTo``) pointing at a person-like source
  (``Employee``, ``staff``, ``users``);
* the non-null values of ``S.c`` are contained in ``T.k`` (exactly, or estimated from bottom-k samples): nearly
  all of them (``EXACT_MIN``) for weaker names, ``DANGLING_MIN`` under a strong name (real parent tables miss
  rows: the share is in the evidence), ``VALUES_MIN`` for codes matched by their values alone; the contained
  values are no more than ``T.k`` has;
* ``S.c`` is not ``S``'s own single-column identity key named after ``S`` (an entity's own id);
* no other target has better evidence for the same column (one reference per column).

Composite foreign keys need a matching column for every column of a composite target key, each with name
evidence, and containment of the tuples (from the column-combination sketches). A nested child references its
parent through the columns that equal the parent's key in (nearly) every child record.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from esc.contract.field_profile import FieldProfile
from esc.contract.fk_names import NameIndex, name_evidence
from esc.contract.fk_values import (
    MIN_CHILD_DISTINCT,
    MIN_TARGET_DISTINCT,
    VALUES_MIN,
    field_containment,
    folded_evidence,
    spread_fit,
    value_evidence,
)
from esc.contract.keys import KeyResult
from esc.contract.model import Endpoint, ForeignKey
from esc.contract.names import names_source, strip_prefix
from esc.contract.profile import SourceProfile
from esc.contract.semantic import id_word, tokens
from esc.contract.sketches import Containment

EXACT_MIN = 0.99  # containment needed when both sides are exact
ESTIMATE_MIN = 0.97  # containment needed from samples
MIN_CHECKED = 8  # sampled values needed before a sampled containment counts
NESTING_MIN = 0.99  # share of child rows equal to the parent key
DANGLING_MIN = (
    0.8  # containment enough when the name says it strongly (same name, prefix, role): parents may be missing
)


@dataclass(frozen=True)
class Candidate:
    target: str
    key: str
    name_score: float
    name_rule: str
    key_names_target: bool
    ratio: float
    exact: bool
    checked: int
    folded: bool = False
    fit: float = 0.0  # values-only integers: how tightly the column covers the key's range


def _bare_id(col: str, prefix: str) -> bool:
    """``id``, ``ID``, ``Key``, ``no``: a name with nothing but an id word (it names no other source)."""
    words = tokens(strip_prefix(col, prefix))
    return bool(words) and all(w in ("id", "key", "fk", "ref", "code", "no", "pk") for w in words)


def _floors(score: float, rule: str) -> tuple[float, float]:
    """(exact, estimated) containment a candidate needs: strong names tolerate dangling references (a parent
    table missing some rows), values alone need most of them, weaker names nearly all."""
    if rule == "values_only":
        return VALUES_MIN, max(VALUES_MIN, ESTIMATE_MIN)
    if score >= 0.9:
        return DANGLING_MIN, max(DANGLING_MIN, 0.85)
    return EXACT_MIN, ESTIMATE_MIN


def _range_ok(child: SourceProfile, col: str, parent: SourceProfile, key: str) -> bool:
    a, b = child.fields[col], parent.fields[key]
    if a.num_min is None or b.num_min is None or a.num_max is None or b.num_max is None:
        return True
    return bool(a.num_min >= b.num_min and a.num_max <= b.num_max)


def _passes(c: Containment, exact_min: float, estimate_min: float, tolerant: bool) -> bool:
    """Whether containment ``c`` clears the floors; under a strong name one missing value of a few is tolerated
    (a parent table missing a row: 1 of 2 references dangling is no evidence against the name)."""
    if c.exact:
        missing = round(c.checked * (1 - c.ratio))
        return c.ratio >= exact_min or (tolerant and missing <= 1 and c.ratio > 0)
    return c.ratio >= estimate_min and c.checked >= MIN_CHECKED


@dataclass(frozen=True)
class _Target:
    source: str
    key: str
    profile: SourceProfile
    field: FieldProfile
    prefix: str


class Targets:
    """The single-column identity keys a column may reference, with their name index and the few keys its values
    alone could reference (``value_evidence`` needs ``MIN_TARGET_DISTINCT`` key values): built once per
    inference, so that a column is compared with the keys that could accept it, not with every key."""

    def __init__(self, profiles: Mapping[str, SourceProfile], keys: Mapping[str, KeyResult | None]) -> None:
        self.all: list[_Target] = []
        for t, key in keys.items():
            if key is None or len(key.fields) != 1:
                continue
            tp = profiles[t]
            self.all.append(_Target(t, key.fields[0], tp, tp.fields[key.fields[0]], tp.column_prefix()))
        self.names = NameIndex((x.source, x.key, x.prefix) for x in self.all)
        self.by_values = [i for i, x in enumerate(self.all) if x.field.distinct >= MIN_TARGET_DISTINCT]

    def for_column(self, col: str, prefix: str, f: FieldProfile) -> list[int]:
        """Positions of the keys ``col`` may reference by name or (when its values could qualify) by values."""
        found = self.names.candidates(col, prefix)
        if f.distinct >= MIN_CHILD_DISTINCT and f.nonnull >= 5:
            found.update(self.by_values)
        return sorted(found)


def single_candidates(
    profiles: Mapping[str, SourceProfile],
    keys: Mapping[str, KeyResult | None],
    source: str,
    col: str,
    targets: Targets | None = None,
) -> list[Candidate]:
    """All targets ``col`` of ``source`` could reference, best first (``targets``: built once for many calls)."""
    p = profiles[source]
    f = p.fields[col]
    if f.nonnull == 0 or f.physical not in ("int", "string"):
        return []
    targets = targets or Targets(profiles, keys)
    s_prefix = p.column_prefix()
    own = keys.get(source)
    is_own_key = own is not None and own.fields == [col]
    # the source's own id identifies its rows; without a name it refers nowhere
    own_id = is_own_key and bool(id_word(col) or names_source(col, source, s_prefix))
    # the source's own id (named after it, or a bare ``id``) identifies, it does not refer
    own_named = is_own_key and (names_source(col, source, s_prefix) or _bare_id(col, s_prefix))
    out: list[Candidate] = []
    for i in targets.for_column(col, s_prefix, f):
        x = targets.all[i]
        t, k, tp, kf, t_prefix = x.source, x.key, x.profile, x.field, x.prefix
        if t == source and k == col:
            continue
        ev = name_evidence(col, s_prefix, t, k, t_prefix)
        if ev is None:
            if own_id or t == source:
                continue  # a reference to its own rows needs a name (``ReportsTo``): values alone never say so
            ev = value_evidence(f, kf)
            if ev is None:
                continue
        if own_named and t != source:
            continue
        if kf.physical != f.physical and "string" not in (f.physical, kf.physical):
            continue
        c, folded = field_containment(f, kf)
        exact_min, estimate_min = _floors(ev[0], ev[1])
        if not _passes(c, exact_min, estimate_min, ev[0] >= 0.9):
            continue
        if not _range_ok(p, col, tp, k) and c.ratio >= EXACT_MIN:
            continue
        if f.distinct * c.ratio > kf.distinct * 1.05 + 1:
            continue  # more (contained) child values than the key has: not a reference to it
        fit = spread_fit(f, kf) if ev[1] == "values_only" and f.physical == "int" else 0.0
        out.append(
            Candidate(
                t, k, ev[0], ev[1], names_source(k, t, t_prefix), c.ratio, c.exact, c.checked, folded, fit
            )
        )
    out.sort(key=lambda c: (-c.name_score, not c.key_names_target, -c.ratio, -c.fit, c.target))
    return out


def _ambiguous(best: Candidate, second: Candidate | None) -> bool:
    """Two equally good targets: say nothing. Values alone never choose between two targets."""
    if second is None:
        return False
    if best.name_rule == "values_only" and second.name_rule == "values_only":
        # the smallest key holding all of the values is the likeliest parent (a sample of m values from N is
        # C(N2, m) / C(N1, m) times likelier from the smaller N1): only an equal fit leaves it open
        return second.ratio >= best.ratio and second.fit >= best.fit
    return (
        second.name_score == best.name_score
        and second.key_names_target == best.key_names_target
        and second.ratio >= best.ratio
    )


def infer_single(
    profiles: Mapping[str, SourceProfile], keys: Mapping[str, KeyResult | None]
) -> list[ForeignKey]:
    fks: list[ForeignKey] = []
    targets = Targets(profiles, keys)
    for source in sorted(profiles):
        for col in profiles[source].columns():
            cands = single_candidates(profiles, keys, source, col, targets)
            if not cands:
                continue
            best = cands[0]
            if _ambiguous(best, cands[1] if len(cands) > 1 else None):
                continue
            key = keys[best.target]
            assert key is not None
            conf = best.name_score * (0.55 + 0.45 * best.ratio) * (0.85 + 0.15 * key.confidence)
            if not best.exact:
                conf *= 0.95
            fks.append(
                ForeignKey.model_validate(
                    {
                        "from": {"source": source, "fields": [col]},
                        "to": {"source": best.target, "fields": [best.key]},
                        "confidence": round(min(conf, 0.99), 3),
                        "evidence": {
                            "name": best.name_rule,
                            "containment": round(best.ratio, 4),
                            "containment_exact": best.exact,
                            "checked_values": best.checked,
                            **folded_evidence(best.folded),
                            "target_is_identity_key": True,
                            "child_distinct": round(profiles[source].fields[col].distinct),
                            "parent_distinct": round(profiles[best.target].fields[best.key].distinct),
                            "other_candidates": [c.target for c in cands[1:4]],
                        },
                    }
                )
            )
    return _drop_values_only_beside_named(fks)


def _drop_values_only_beside_named(fks: list[ForeignKey]) -> list[ForeignKey]:
    """A reference by values alone to a target its source already references through a named column is a
    measure that happens to fall in the key's range (``ps_availqty`` 1..9999 beside ``ps_suppkey``): dropped."""
    named = {(fk.from_.source, fk.to.source) for fk in fks if fk.evidence.get("name") != "values_only"}
    return [
        fk
        for fk in fks
        if fk.evidence.get("name") != "values_only" or (fk.from_.source, fk.to.source) not in named
    ]


__all__ = [
    "Endpoint",
    "infer_single",
    "name_evidence",
    "single_candidates",
]
