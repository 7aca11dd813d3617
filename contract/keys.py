"""Identity keys from profiles: minimal, non-null, unique, id-like; single columns first, then composites.

Uniqueness is *proven* while the exact distinct set (or exact set of hashed tuples) covers the column, and
*estimated* from HyperLogLog after that: then a candidate counts as unique when the estimate is within three
standard errors of the row count, and its confidence says it was estimated, unless a reader of whole files saw
its values repeat on rows that differ (``SourceProfile.witnessed``, contract/key_witness.py): then it is proven
not to be unique. Exact duplicate rows do not break a key: a candidate with as many distinct values as the source
has distinct rows (the whole-row sketch) is unique *modulo duplicate rows*, and the evidence says how many
(``duplicate_rows``). A candidate whose values repeat
across rows that differ (``conflicts``, at most ``NEAR_SHARE`` of the rows) is *near-unique*: it is taken only
when nothing is unique, and its evidence says so.

Among unique candidates, id-likeness decides: an id word in the name (``id``, ``*_id``, ``*Id``, ``key``,
``code``, ``number``...), a name that names the source (``AlbumId`` in ``Album``), first position, integer type;
prose (several words per value) counts against. Composites are searched among every tracked combination of
key-candidate columns (``esc.contract.combos``: ids first, then the other int, string and date columns, pairs
and triples): the fewest columns first, then combinations another source references (its columns of the same
names hold tuples found here), then proven before estimated, then id-likeness.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from esc.contract.combos import ROW, ComboProfile, keyable_type
from esc.contract.names import names_source, norm
from esc.contract.profile import SourceProfile
from esc.contract.semantic import id_word
from esc.contract.sketches import containment

_ID_WORD_SCORE = {"id": 3.0, "key": 3.0, "uuid": 3.0, "guid": 3.0, "pk": 3.0, "code": 2.0}
MIN_SINGLE_SCORE = 1.5
"""A single column needs at least this much id evidence from its name or position (an id word, the source's
name, the first column) to be a key before composites are searched: a unique measure (attendance) is not."""
NEAR_SHARE = 0.01
"""A near-unique key repeats on at most this share of the rows (beyond exact duplicate rows)."""
DUP_ROWS_SHARE = 0.1
"""Exact duplicate rows a key is taken modulo: at most this share of the rows (or one)."""
PROSE_WORDS = 1.5
"""Values with more words than this on average are prose, not identifiers."""
REFERENCED_MIN = 0.8


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
    duplicate_rows: int = 0  # exact duplicate rows the uniqueness holds modulo
    conflicts: int = 0  # repeated values across rows that differ (near-unique when unique is False)


def _uniqueness(
    exact: int | None, estimate: float, rows: int, err: float, p: SourceProfile, witnessed: int = 0
) -> Uniqueness:
    """Uniqueness of a candidate with ``exact`` (or estimated) distinct values over ``rows`` non-null rows;
    ``witnessed``: its tuples a reader of whole files saw repeat on rows that differ (contract/key_witness.py)."""
    r = p.row_sketch()
    if exact is None and witnessed > 0:  # proven to repeat where the estimate could not tell
        conflicts = max(witnessed, round(rows - min(estimate, rows)))
        return Uniqueness(False, True, float(rows - conflicts), rows, conflicts=conflicts)
    if exact is not None:
        if exact == rows:
            return Uniqueness(True, True, float(exact), rows)
        if r is not None and r.exact.hashes is not None and rows == p.records:
            distinct_rows = len(r.exact.hashes)
            if exact == distinct_rows and rows - distinct_rows <= max(1, DUP_ROWS_SHARE * rows):
                return Uniqueness(True, True, float(exact), rows, duplicate_rows=rows - distinct_rows)
            return Uniqueness(False, True, float(exact), rows, rows - distinct_rows, distinct_rows - exact)
        return Uniqueness(False, True, float(exact), rows, conflicts=rows - exact)
    if estimate >= rows * (1 - 3 * err):
        return Uniqueness(True, False, min(estimate, rows), rows)
    if r is not None and rows == p.records:
        est_rows = r.distinct
        if estimate >= est_rows * (1 - 3 * err) and rows - est_rows <= DUP_ROWS_SHARE * rows:
            return Uniqueness(True, False, min(estimate, rows), rows, duplicate_rows=round(rows - est_rows))
    return Uniqueness(False, False, min(estimate, rows), rows, conflicts=round(rows - estimate))


def column_uniqueness(p: SourceProfile, name: str) -> Uniqueness:
    f = p.fields[name]
    exact = len(f.exact.hashes) if f.exact.hashes is not None else None
    return _uniqueness(exact, f.hll.estimate(), f.nonnull, f.hll.relative_error, p, p.witnessed.get((name,), 0))


def combo_uniqueness(c: ComboProfile, p: SourceProfile | None = None) -> Uniqueness:
    if p is None:
        p = SourceProfile(c.columns[0], c.rows, {})
    exact = len(c.exact.hashes) if c.exact.hashes is not None else None
    return _uniqueness(exact, c.hll.estimate(), c.rows, c.hll.relative_error, p, p.witnessed.get(c.columns, 0))


def near_unique(u: Uniqueness) -> bool:
    return not u.unique and u.proven and 0 < u.conflicts <= max(1, NEAR_SHARE * u.rows)


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
    if (f.mean_words or 0) > PROSE_WORDS:
        score -= 3.0
        ev["prose"] = True
    return score, ev


def _keyable(p: SourceProfile, name: str) -> bool:
    f = p.fields.get(name)
    return f is not None and p.records > 0 and f.nonnull == p.records and keyable_type(f.physical)


def _uniq_evidence(u: Uniqueness) -> dict[str, Any]:
    ev: dict[str, Any] = {}
    if u.duplicate_rows:
        ev["duplicate_rows"] = u.duplicate_rows
    if not u.unique:
        ev["near_unique"] = {"conflicts": u.conflicts, "share": round(u.conflicts / max(u.rows, 1), 4)}
    return ev


def infer_key(p: SourceProfile, others: Mapping[str, SourceProfile] | None = None) -> KeyResult | None:
    """The identity key of one source, or None when no candidate is non-null and (near-)unique. ``others``
    (the other sources) let a composite that they reference win over one they do not."""
    if p.records == 0:
        return None
    prefix = p.column_prefix()
    singles: list[tuple[float, int, str, Uniqueness, dict[str, Any]]] = []
    near: list[tuple[float, list[str], Uniqueness, dict[str, Any]]] = []
    for c in p.columns():
        if not _keyable(p, c):
            continue
        u = column_uniqueness(p, c)
        score, ev = name_score(p, c, prefix)
        if near_unique(u):
            near.append((score - 1.0, [c], u, ev))
        if not u.unique:
            continue
        singles.append((score + (1.0 if u.proven else 0.0), p.fields[c].position, c, u, ev))
    singles.sort(key=lambda t: (-t[0], t[1]))
    if singles and singles[0][0] - (1.0 if singles[0][3].proven else 0.0) >= MIN_SINGLE_SCORE:
        s, _, c, u, ev = singles[0]
        return _result([c], u, s, ev, alternatives=[t[2] for t in singles[1:4]])
    near_singles = sorted((t for t in near if t[0] >= MIN_SINGLE_SCORE), key=lambda t: (-t[0], t[1]))
    comp = best_composite(p, prefix, {t[2] for t in singles}, others or {}, near)
    if (
        near_singles
        and (comp is None or _weak(p, comp))
        and (not singles or near_singles[0][0] > singles[0][0])
    ):
        s, cols, u, ev = near_singles[0]  # an id repeated on a few rows beats a pair made up around it
        return _result(cols, u, s, ev, alternatives=[comp.fields] if comp is not None else [])
    if comp is not None:
        return comp
    if singles:
        s, _, c, u, ev = singles[0]
        return _result([c], u, s, ev, alternatives=[t[2] for t in singles[1:4]])
    if near:
        near.sort(key=lambda t: (len(t[1]), -t[0], t[1]))
        s, cols, u, ev = near[0]
        return _result(cols, u, s, ev, alternatives=[t[1] for t in near[1:4]])
    return None


def _weak(p: SourceProfile, comp: KeyResult) -> bool:
    """A composite no other source references, with a column that has no id word."""
    return "referenced_by" not in comp.evidence and any(id_word(c) is None for c in comp.fields)


def referenced(
    p: SourceProfile, cols: tuple[str, ...], combo: ComboProfile, others: Mapping[str, SourceProfile]
) -> str | None:
    """The first other source whose columns of the same names hold tuples found in ``combo``."""
    want = sorted(norm(c) for c in cols)
    for name, q in sorted(others.items()):
        if name == p.name:
            continue
        by_norm = {norm(c): c for c in q.fields}
        if not all(w in by_norm for w in want):
            continue
        theirs = q.combo([by_norm[norm(c)] for c in cols])
        if theirs is None or theirs.rows == 0 or sorted(theirs.columns) != list(theirs.columns):
            continue
        if [norm(c) for c in theirs.columns] != [norm(c) for c in combo.columns]:
            continue  # the same names sort differently: tuples hashed in another order
        got = containment(theirs.exact, theirs.sample, combo.exact, combo.sample)
        if got.ratio >= REFERENCED_MIN and got.checked > 0:
            return name
    return None


def best_composite(
    p: SourceProfile,
    prefix: str,
    exclude_unique: set[str],
    others: Mapping[str, SourceProfile] | None = None,
    near: list[tuple[float, list[str], Uniqueness, dict[str, Any]]] | None = None,
) -> KeyResult | None:
    """The best minimal unique combination among the tracked combinations."""
    found: list[tuple[tuple[float, ...], tuple[str, ...], Uniqueness, dict[str, Any]]] = []
    unique_sets: list[set[str]] = [{c} for c in exclude_unique]
    order = {c: i for i, c in enumerate(p.columns())}
    for cols, combo in sorted(p.combos.items(), key=lambda kv: (len(kv[0]), kv[0])):
        if cols == ROW or combo.rows != p.records or not all(_keyable(p, c) for c in cols):
            continue
        u = combo_uniqueness(combo, p)
        if any(s <= set(cols) for s in unique_sets):
            continue  # not minimal
        scores = [name_score(p, c, prefix) for c in cols]
        total = sum(s for s, _ in scores) / len(cols)
        ev: dict[str, Any] = {"columns": {c: e for c, (_, e) in zip(cols, scores, strict=True)}}
        if near is not None and near_unique(u):
            near.append((total - 1.0, sorted(cols, key=order.__getitem__), u, ev))
        if not u.unique:
            continue
        unique_sets.append(set(cols))
        ref = referenced(p, cols, combo, others or {})
        if ref is not None:
            ev["referenced_by"] = ref
        rank = (
            -float(len(cols)),
            1.0 if ref is not None else 0.0,
            1.0 if u.proven else 0.0,
            total,
            -float(sum(p.fields[c].position for c in cols)),
        )
        found.append((rank, tuple(sorted(cols, key=order.__getitem__)), u, ev))
    if not found:
        return None
    found.sort(key=lambda t: t[0], reverse=True)
    best_rank, best_cols, best_u, best_ev = found[0]
    alternatives = [list(t[1]) for t in found[1:4]]
    return _result(list(best_cols), best_u, best_rank[3], best_ev, alternatives=alternatives)


def _result(
    cols: list[str], u: Uniqueness, score: float, ev: dict[str, Any], alternatives: list[Any]
) -> KeyResult:
    conf = min(0.99, 0.6 + 0.08 * score) if u.proven else min(0.9, 0.45 + 0.07 * score)
    if not u.unique:
        conf = min(conf, 0.6)
    unique = "proven" if u.proven else "estimated (HyperLogLog)"
    if not u.unique:
        unique = "near-unique"
    elif u.duplicate_rows:
        unique += " modulo duplicate rows"
    evidence: dict[str, Any] = {
        "unique": unique,
        "distinct": round(u.distinct),
        "rows": u.rows,
        "non_null": True,
        **_uniq_evidence(u),
        **ev,
    }
    if alternatives:
        evidence["alternatives"] = alternatives
    return KeyResult(cols, round(max(conf, 0.05), 3), evidence)


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
    combo = p.combo(cols)
    if combo is None or combo.rows != p.records:
        return None
    u = combo_uniqueness(combo, p)
    if not u.unique:
        return None
    if current is not None and current.fields == cols:
        return current
    res = _result(cols, u, 4.0, {"rule": "association table: all columns are foreign keys or timestamps"}, [])
    if current is not None:
        res.evidence["replaces"] = current.fields
    return res
