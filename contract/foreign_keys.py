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
from typing import Any

from esc.contract.keys import KeyResult
from esc.contract.model import Endpoint, ForeignKey
from esc.contract.names import base_name, names_source, norm, source_stem, strip_prefix
from esc.contract.profile import SourceProfile
from esc.contract.semantic import id_word, tokens
from esc.contract.sketches import BottomK, ExactSet, containment

EXACT_MIN = 0.99  # containment needed when both sides are exact
ESTIMATE_MIN = 0.97  # containment needed from samples
MIN_CHECKED = 8  # sampled values needed before a sampled containment counts
NESTING_MIN = 0.99  # share of child rows equal to the parent key
DANGLING_MIN = 0.8  # containment enough when the name says it strongly (same name, prefix, role): parents may be missing
VALUES_MIN = 0.9  # containment needed when only the values say so
VALUES_ONLY = 0.55  # name score of a values-only candidate: any name evidence wins over it
MIN_TARGET_DISTINCT = 20
MAX_CODE_CHARS = 24

PERSON_ROLES = {
    "rep",
    "representative",
    "manager",
    "supervisor",
    "reports",
    "boss",
    "agent",
    "assignee",
    "owner",
    "clerk",
    "salesperson",
    "salesman",
    "employee",
    "staff",
    "approver",
    "reviewer",
    "author",
    "creator",
}
RELATION_WORDS = {"via", "by", "to", "of", "from", "for", "at", "in", "on", "with"}
PERSON_SOURCES = {"employee", "staff", "user", "person", "people", "agent", "worker", "member", "personnel"}


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


def name_evidence(col: str, s_prefix: str, target: str, key: str, t_prefix: str) -> tuple[float, str] | None:
    """Strength and rule of the name evidence that ``col`` refers to ``target.key``; None when there is none."""
    c, k = norm(col), norm(key)
    if c == k:
        return 1.0, "same_name"
    cs, ks = norm(strip_prefix(col, s_prefix)), norm(strip_prefix(key, t_prefix))
    if (s_prefix or t_prefix) and cs == ks and len(cs) >= 3:
        return 0.95, "same_name_after_prefix"
    if len(ks) >= 4 and cs.endswith(ks) and cs != ks:
        return 0.9, "role_prefix"
    stem = source_stem(target)
    words = [
        t for t in tokens(strip_prefix(col, s_prefix)) if t not in ("id", "key", "fk", "ref", "code", "no")
    ]
    base = base_name(col, s_prefix)
    # without an id word, the other words may only be relation words: ShipVia, ReportsTo (not rental_duration)
    naming = [w for w in words if len(w) >= 4 and stem.startswith(w)]
    roles = [w for w in words if w in PERSON_ROLES]
    idlike = id_word(col) is not None
    if stem and (base == stem or naming):
        rest = set(words) - set(naming) - RELATION_WORDS
        if idlike or not rest:
            return 0.75, "names_target"
    if roles and stem in PERSON_SOURCES:
        rest = set(words) - set(roles) - RELATION_WORDS
        if idlike or not rest:
            return 0.6, "person_role"
    return None


def _bare_id(col: str, prefix: str) -> bool:
    """``id``, ``ID``, ``Key``, ``no``: a name with nothing but an id word (it names no other source)."""
    words = tokens(strip_prefix(col, prefix))
    return bool(words) and all(w in ("id", "key", "fk", "ref", "code", "no", "pk") for w in words)


def value_evidence(child: Any, key: Any) -> tuple[float, str] | None:
    """Evidence from the values alone, for a column named unlike its target (``origin`` -> ``airports.faa``):
    text codes of the key's shape (no longer than ``MAX_CODE_CHARS``, lengths within the key's), a target with at
    least ``MIN_TARGET_DISTINCT`` values, a child with at least two. Numbers never qualify: dense 1..N ids are
    contained in every other 1..N id (the classic false inclusion dependency)."""
    if child.physical != "string" or key.physical != "string":
        return None
    if key.distinct < MIN_TARGET_DISTINCT or child.distinct < 2 or child.nonnull < 5:
        return None
    if None in (child.len_min, child.len_max, key.len_min, key.len_max):
        return None
    if key.len_max > MAX_CODE_CHARS or child.len_min < key.len_min or child.len_max > key.len_max:
        return None
    return VALUES_ONLY, "values_only"


def _floors(score: float, rule: str) -> tuple[float, float]:
    """(exact, estimated) containment a candidate needs: strong names tolerate dangling references (a parent
    table missing some rows), values alone need most of them, weaker names nearly all."""
    if rule == "values_only":
        return VALUES_MIN, max(VALUES_MIN, ESTIMATE_MIN)
    if score >= 0.9:
        return DANGLING_MIN, max(DANGLING_MIN, 0.85)
    return EXACT_MIN, ESTIMATE_MIN


def _sets(p: SourceProfile, col: str) -> tuple[ExactSet, BottomK]:
    f = p.fields[col]
    return f.exact, f.sample


def _range_ok(child: SourceProfile, col: str, parent: SourceProfile, key: str) -> bool:
    a, b = child.fields[col], parent.fields[key]
    if a.num_min is None or b.num_min is None or a.num_max is None or b.num_max is None:
        return True
    return bool(a.num_min >= b.num_min and a.num_max <= b.num_max)


def single_candidates(
    profiles: Mapping[str, SourceProfile], keys: Mapping[str, KeyResult | None], source: str, col: str
) -> list[Candidate]:
    """All targets ``col`` of ``source`` could reference, best first."""
    p = profiles[source]
    f = p.fields[col]
    if f.nonnull == 0 or f.physical not in ("int", "string"):
        return []
    s_prefix = p.column_prefix()
    own = keys.get(source)
    out: list[Candidate] = []
    for t, key in keys.items():
        if key is None or len(key.fields) != 1:
            continue
        k = key.fields[0]
        if t == source and k == col:
            continue
        tp = profiles[t]
        t_prefix = tp.column_prefix()
        ev = name_evidence(col, s_prefix, t, k, t_prefix)
        if ev is None:
            if own is not None and col in own.fields:
                continue  # a column of the source's own key identifies its rows; without a name it refers nowhere
            ev = value_evidence(f, tp.fields[k])
            if ev is None:
                continue
        if own is not None and own.fields == [col] and t != source and (
            names_source(col, source, s_prefix) or _bare_id(col, s_prefix)
        ):
            continue  # the source's own id (named after it, or a bare ``id``) identifies, it does not refer
        if tp.fields[k].physical != f.physical and "string" not in (f.physical, tp.fields[k].physical):
            continue
        c = containment(*_sets(p, col), *_sets(tp, k))
        exact_min, estimate_min = _floors(ev[0], ev[1])
        if c.exact and c.ratio < exact_min:
            continue
        if not c.exact and (c.ratio < estimate_min or c.checked < MIN_CHECKED):
            continue
        if not _range_ok(p, col, tp, k) and c.ratio >= EXACT_MIN:
            continue
        if f.distinct * c.ratio > tp.fields[k].distinct * 1.05 + 1:
            continue  # more (contained) child values than the key has: not a reference to it
        out.append(Candidate(t, k, ev[0], ev[1], names_source(k, t, t_prefix), c.ratio, c.exact, c.checked))
    out.sort(key=lambda c: (-c.name_score, not c.key_names_target, -c.ratio, c.target))
    return out


def infer_single(
    profiles: Mapping[str, SourceProfile], keys: Mapping[str, KeyResult | None]
) -> list[ForeignKey]:
    fks: list[ForeignKey] = []
    for source in sorted(profiles):
        for col in profiles[source].columns():
            cands = single_candidates(profiles, keys, source, col)
            if not cands:
                continue
            best = cands[0]
            second = cands[1] if len(cands) > 1 else None
            if (
                second is not None
                and second.name_score == best.name_score
                and second.key_names_target == best.key_names_target
                and second.ratio >= best.ratio
            ):
                continue  # two equally good targets: ambiguous, say nothing
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
                            "target_is_identity_key": True,
                            "child_distinct": round(profiles[source].fields[col].distinct),
                            "parent_distinct": round(profiles[best.target].fields[best.key].distinct),
                            "other_candidates": [c.target for c in cands[1:4]],
                        },
                    }
                )
            )
    return fks


def infer_composite(
    profiles: Mapping[str, SourceProfile], keys: Mapping[str, KeyResult | None]
) -> list[ForeignKey]:
    """Composite references: every column of a composite target key matched by name, tuples contained."""
    out: list[ForeignKey] = []
    for t, key in sorted(keys.items()):
        if key is None or len(key.fields) < 2:
            continue
        tp = profiles[t]
        target_combo = tp.combos.get(tuple(key.fields))
        if target_combo is None:
            continue
        t_prefix = tp.column_prefix()
        for source, p in sorted(profiles.items()):
            if source == t:
                continue
            s_prefix = p.column_prefix()
            match: list[str] = []
            rules: list[str] = []
            for k in key.fields:
                best = None
                for c in p.columns():
                    ev = name_evidence(c, s_prefix, t, k, t_prefix)
                    if (
                        ev is not None
                        and ev[0] >= 0.9
                        and c not in match
                        and (best is None or ev[0] > best[0])
                    ):
                        best = (ev[0], c, ev[1])
                if best is None:
                    break
                match.append(best[1])
                rules.append(best[2])
            if len(match) != len(key.fields):
                continue
            combo = p.combos.get(tuple(match))
            if combo is None or combo.rows == 0:
                continue
            cont = containment(combo.exact, combo.sample, target_combo.exact, target_combo.sample)
            if (cont.exact and cont.ratio < EXACT_MIN) or (
                not cont.exact and (cont.ratio < ESTIMATE_MIN or cont.checked < MIN_CHECKED)
            ):
                continue
            ev_all: dict[str, Any] = {
                "name": rules,
                "containment": round(cont.ratio, 4),
                "containment_exact": cont.exact,
                "checked_values": cont.checked,
                "target_is_identity_key": True,
            }
            out.append(
                ForeignKey.model_validate(
                    {
                        "from": {"source": source, "fields": match},
                        "to": {"source": t, "fields": list(key.fields)},
                        "confidence": round(min(0.99, 0.9 * (0.55 + 0.45 * cont.ratio)), 3),
                        "evidence": ev_all,
                    }
                )
            )
    return out


def infer_nesting(
    profiles: Mapping[str, SourceProfile], keys: Mapping[str, KeyResult | None]
) -> list[tuple[str, str, list[str], list[str], float]]:
    """(child, parent, child_fields, parent_fields, share) for nested children whose rows carry the parent key."""
    out = []
    for child, p in sorted(profiles.items()):
        if p.parent is None or p.parent.rows == 0:
            continue
        parent = p.parent.parent
        key = keys.get(parent)
        pairs = p.parent.pairs()
        if key is None:
            continue
        child_fields: list[str] = []
        shares: list[float] = []
        for k in key.fields:
            hits = [
                (n / p.parent.rows, c) for c, pk, n in pairs if pk == k and n / p.parent.rows >= NESTING_MIN
            ]
            if not hits:
                break
            hits.sort(key=lambda h: (-h[0], norm(h[1]) != norm(k), h[1]))
            child_fields.append(hits[0][1])
            shares.append(hits[0][0])
        if len(child_fields) == len(key.fields):
            out.append((child, parent, child_fields, list(key.fields), min(shares)))
    return out


def nesting_fks(nest: list[tuple[str, str, list[str], list[str], float]]) -> list[ForeignKey]:
    return [
        ForeignKey.model_validate(
            {
                "from": {"source": child, "fields": cf},
                "to": {"source": parent, "fields": pf},
                "confidence": round(min(0.99, 0.9 + 0.09 * share), 3),
                "evidence": {"nesting": True, "equal_to_parent_key": round(share, 4)},
            }
        )
        for child, parent, cf, pf, share in nest
    ]


def dedupe(fks: list[ForeignKey]) -> list[ForeignKey]:
    """One foreign key per signature (the most confident), evidence of the others merged in."""
    best: dict[tuple[str, tuple[str, ...], str, tuple[str, ...]], ForeignKey] = {}
    for fk in fks:
        sig = fk.signature()
        old = best.get(sig)
        if old is None:
            best[sig] = fk
            continue
        hi, lo = (fk, old) if fk.confidence > old.confidence else (old, fk)
        merged = {**lo.evidence, **hi.evidence}
        best[sig] = hi.model_copy(
            update={"evidence": merged, "confidence": max(hi.confidence, lo.confidence)}
        )
    return [best[s] for s in sorted(best)]


__all__ = [
    "Endpoint",
    "dedupe",
    "infer_composite",
    "infer_nesting",
    "infer_single",
    "name_evidence",
    "nesting_fks",
]
