"""Identity keys from profiles: minimal, non-null, unique, id-like; single columns first, then composites.

Uniqueness is *proven* while the exact distinct set (or exact set of hashed tuples) covers the column, and
*estimated* from HyperLogLog after that: then a candidate counts as unique when the estimate is within three
standard errors of the row count and no duplicate was ever seen, and its confidence says it was estimated.
Among unique candidates, id-likeness decides: an id word in the name (``id``, ``*_id``, ``*Id``, ``key``,
``code``, ``number``...), a name that names the source (``AlbumId`` in ``Album``), first position, integer type.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from esc.contract.names import names_source
from esc.contract.profile import ComboProfile, SourceProfile
from esc.contract.semantic import id_word

KEY_TYPES = {"int", "string"}
_ID_WORD_SCORE = {"id": 3.0, "key": 3.0, "uuid": 3.0, "guid": 3.0, "pk": 3.0, "code": 2.0}
MIN_SINGLE_SCORE = 1.5
"""A single column needs at least this much id evidence (e.g. first position) to be a key on its own."""


@dataclass(frozen=True)
class KeyResult:
    fields: list[str]
    confidence: float
    evidence: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Uniqueness:
    unique: bool
    proven: bool  # from exact sets (else estimated)
    distinct: float
    rows: int


def column_uniqueness(p: SourceProfile, name: str) -> Uniqueness:
    f = p.fields[name]
    if f.exact.hashes is not None:
        d = len(f.exact.hashes)
        return Uniqueness(d == f.nonnull, True, float(d), f.nonnull)
    est = f.hll.estimate()
    return Uniqueness(
        est >= f.nonnull * (1 - 3 * f.hll.relative_error), False, min(est, f.nonnull), f.nonnull
    )


def combo_uniqueness(c: ComboProfile) -> Uniqueness:
    if c.exact.hashes is not None:
        d = len(c.exact.hashes)
        return Uniqueness(d == c.rows and not c.dup, True, float(d), c.rows)
    est = c.hll.estimate()
    ok = not c.dup and est >= c.rows * (1 - 3 * c.hll.relative_error)
    return Uniqueness(ok, False, min(est, c.rows), c.rows)


def name_score(p: SourceProfile, name: str, prefix: str) -> tuple[float, dict[str, Any]]:
    """Id-likeness of one column of ``p``, with the evidence that makes it up."""
    f = p.fields[name]
    ev: dict[str, Any] = {}
    score = 0.0
    w = id_word(name)
    if w is not None:
        score += _ID_WORD_SCORE.get(w, 1.5)
        ev["id_word"] = w
    if names_source(name, p.name, prefix):
        score += 2.0
        ev["names_source"] = True
    if f.position == 0:
        score += 1.5
        ev["first_column"] = True
    if f.physical == "int":
        score += 0.5
        lo, hi = f.num_min, f.num_max
        if f.distinct_exact and lo is not None and hi is not None and hi - lo + 1 == f.distinct:
            score += 0.5
            ev["dense_range"] = [lo, hi]
    return score, ev


def _keyable(p: SourceProfile, name: str) -> bool:
    f = p.fields[name]
    return p.records > 0 and f.nonnull == p.records and f.physical in KEY_TYPES


def infer_key(p: SourceProfile) -> KeyResult | None:
    """The identity key of one source, or None when no candidate is non-null and unique."""
    if p.records == 0:
        return None
    prefix = p.column_prefix()
    singles: list[tuple[float, int, str, Uniqueness, dict[str, Any]]] = []
    for c in p.columns():
        if not _keyable(p, c):
            continue
        u = column_uniqueness(p, c)
        if not u.unique:
            continue
        score, ev = name_score(p, c, prefix)
        singles.append((score + (1.0 if u.proven else 0.0), p.fields[c].position, c, u, ev))
    singles.sort(key=lambda t: (-t[0], t[1]))
    if singles and singles[0][0] >= MIN_SINGLE_SCORE:
        s, _, c, u, ev = singles[0]
        return _result([c], u, s, ev, alternatives=[t[2] for t in singles[1:4]])
    comp = best_composite(p, prefix, exclude_unique={t[2] for t in singles})
    if comp is not None:
        return comp
    if singles:
        s, _, c, u, ev = singles[0]
        return _result([c], u, s, ev, alternatives=[t[2] for t in singles[1:4]])
    return None


def best_composite(p: SourceProfile, prefix: str, exclude_unique: set[str]) -> KeyResult | None:
    """The best minimal unique combination among the tracked key candidates."""
    found: list[tuple[tuple[float, float, float, int], tuple[str, ...], Uniqueness, dict[str, Any]]] = []
    unique_sets: list[set[str]] = [{c} for c in exclude_unique]
    for cols, combo in sorted(p.combos.items(), key=lambda kv: (len(kv[0]), kv[0])):
        if combo.rows != p.records or not all(_keyable(p, c) for c in cols):
            continue
        u = combo_uniqueness(combo)
        if not u.unique:
            continue
        if any(s <= set(cols) for s in unique_sets):
            continue  # not minimal
        unique_sets.append(set(cols))
        scores = [name_score(p, c, prefix) for c in cols]
        total = sum(s for s, _ in scores) / len(cols)
        rank = (-float(len(cols)), 1.0 if u.proven else 0.0, total, -sum(p.fields[c].position for c in cols))
        found.append((rank, cols, u, {c: ev for c, (_, ev) in zip(cols, scores, strict=True)}))
    if not found:
        return None
    found.sort(key=lambda t: t[0], reverse=True)
    rank, cols, u, ev = found[0]
    return _result(list(cols), u, rank[2], {"columns": ev}, alternatives=[list(t[1]) for t in found[1:4]])


def _result(
    cols: list[str], u: Uniqueness, score: float, ev: dict[str, Any], alternatives: list[Any]
) -> KeyResult:
    conf = min(0.99, 0.6 + 0.08 * score) if u.proven else min(0.9, 0.45 + 0.07 * score)
    evidence: dict[str, Any] = {
        "unique": "proven" if u.proven else "estimated (HyperLogLog)",
        "distinct": round(u.distinct),
        "rows": u.rows,
        "non_null": True,
        **ev,
    }
    if alternatives:
        evidence["alternatives"] = alternatives
    return KeyResult(cols, round(conf, 3), evidence)


_META_WORDS = {
    "last",
    "update",
    "updated",
    "created",
    "modified",
    "timestamp",
    "ts",
    "version",
    "inserted",
    "etl",
}


def junction_key(p: SourceProfile, fk_columns: list[str], current: KeyResult | None) -> KeyResult | None:
    """The key of an association table: when every column is a foreign key or bookkeeping (timestamps), and
    the foreign-key columns together are unique, they are the key (``film_category``: film_id, category_id),
    even if one of them happens to be unique on its own in the data."""
    from esc.contract.semantic import tokens

    cols = [c for c in p.columns() if c in set(fk_columns)]
    if len(cols) < 2 or len(cols) > 3:
        return None
    for c in p.columns():
        if c in cols:
            continue
        f = p.fields[c]
        if f.physical not in ("date", "datetime", "null") and not set(tokens(c)) & _META_WORDS:
            return None
    combo = p.combos.get(tuple(cols))
    if combo is None or combo.rows != p.records:
        return None
    u = combo_uniqueness(combo)
    if not u.unique:
        return None
    if current is not None and current.fields == cols:
        return current
    res = _result(cols, u, 4.0, {"rule": "association table: all columns are foreign keys or timestamps"}, [])
    if current is not None:
        res.evidence["replaces"] = current.fields
    return res
