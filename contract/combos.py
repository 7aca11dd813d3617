"""Column combinations of a source: tuple sketches for composite keys and composite foreign keys, and the
whole-row sketch that tells exact duplicate rows from key conflicts.

Candidates are chosen per batch from names, positions and types only (never from counts, so every batch of a
source picks the same ones): columns whose name has an id word first, then the first column, then the other
columns that can be part of a key (int, string, date; not float, prose, booleans or nested values), in position
order, at most ``MAX_KEY_COLUMNS``; pairs over all of them, triples over the first ``MAX_TRIPLE_COLUMNS``.
A combination's columns are kept sorted by name, so two sources holding columns of the same names hash their
tuples in the same order.

A :class:`ComboProfile` keeps the exact set of its distinct tuples while it holds at most ``cap`` of them and
at most ``cap // 64`` repeated ones (``dups``, exact while the set is), then HyperLogLog and a bottom-k sample
only. Both limits only grow past under merges, so whether the exact set survived does not depend on the merge
order. The cap is ``caps.combo`` for the whole row and for a pair of id-named columns (duplicate rows and the
composite keys of large tables, proven rather than estimated) and ``caps.exact`` for every other combination, so
a source's tuple sketches stay within a fixed size however many rows it has. A batch with more tuples than any
exact set could hold skips the sort an exact set needs: its HyperLogLog and bottom-k sample are made from the raw
hashes (the same sketches, at a fraction of the cost). The row combination (``ROW``) hashes every non-null
(column, value) pair of a row, independent of column order and of columns other batches add: equal rows hash
alike, so ``rows - distinct`` counts exact duplicate rows.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from esc.contract.field_profile import Caps
from esc.contract.hashing import _hash_str, combine_hashes, merge_sorted_unique, sorted_unique, splitmix64
from esc.contract.semantic import id_word
from esc.contract.sketches import BottomK, ExactSet, HyperLogLog

MAX_KEY_COLUMNS = 8
"""Columns that take part in combinations (pairs)."""
MAX_TRIPLE_COLUMNS = 6
"""The first candidates that also form triples."""
KEY_TYPES = frozenset({"int", "string", "date", "datetime"})
ROW: tuple[str, ...] = ("\x00row",)
"""The key of the whole-row combination in ``SourceProfile.combos``."""
DUP_SHARE = 64
"""An exact tuple set is dropped once it has seen more than ``cap // DUP_SHARE`` repeated tuples."""


@dataclass(frozen=True, eq=False)
class ComboProfile:
    """Tuples of one combination of columns (sorted by name), over rows where all of them are non-null."""

    columns: tuple[str, ...]
    rows: int
    hll: HyperLogLog
    exact: ExactSet
    sample: BottomK
    dups: int | None = None  # repeated tuples (rows - distinct), exact while the exact set is kept

    @classmethod
    def of(
        cls, columns: tuple[str, ...], hashes: np.ndarray, caps: Caps, cap: int | None = None
    ) -> ComboProfile:
        cap = cap if cap is not None else combo_cap(columns, caps)
        hll = HyperLogLog.empty(caps.hll_p)
        if len(hashes) > cap + cap // DUP_SHARE:  # too many distinct or too many repeated tuples: no exact set
            return cls(
                columns, len(hashes), hll.add(hashes), ExactSet(cap, None), BottomK.of(hashes, caps.sample_k)
            )
        u = sorted_unique(hashes)
        dups = len(hashes) - len(u)
        keep = len(u) <= cap and dups <= cap // DUP_SHARE
        return cls(
            columns,
            len(hashes),
            hll.add(u),
            ExactSet(cap, u if keep else None),
            BottomK(caps.sample_k, u[: caps.sample_k]),
            dups if keep else None,
        )

    def merge(self, other: ComboProfile) -> ComboProfile:
        cap = min(self.exact.cap, other.exact.cap)
        exact: np.ndarray | None = None
        dups: int | None = None
        if self.exact.hashes is not None and other.exact.hashes is not None:
            u = merge_sorted_unique(self.exact.hashes, other.exact.hashes)
            n = self.rows + other.rows - len(u)
            if len(u) <= cap and n <= cap // DUP_SHARE:
                exact, dups = u, n
        return ComboProfile(
            self.columns,
            self.rows + other.rows,
            self.hll.merge(other.hll),
            ExactSet(cap, exact),
            self.sample.merge(other.sample),
            dups,
        )

    @property
    def distinct(self) -> float:
        if self.exact.hashes is not None:
            return float(len(self.exact.hashes))
        return min(self.hll.estimate(), float(self.rows))

    def to_dict(self) -> dict[str, Any]:
        return {
            "columns": list(self.columns),
            "rows": self.rows,
            "dups": self.dups,
            "hll": self.hll.to_dict(),
            "exact": self.exact.to_dict(),
            "sample": self.sample.to_dict(),
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> ComboProfile:
        exact = ExactSet.from_dict(d["exact"])
        dups = d.get("dups")
        if dups is None and exact.hashes is not None and "dups" not in d:
            dups = 0  # an older profile: its exact set was dropped at the first repeated tuple
        return cls(
            tuple(d["columns"]),
            int(d["rows"]),
            HyperLogLog.from_dict(d["hll"]),
            exact,
            BottomK.from_dict(d["sample"]),
            None if dups is None else int(dups),
        )


def combo_cap(columns: Sequence[str], caps: Caps) -> int:
    """The exact-set cap of a combination: ``caps.combo`` for a pair of id-named columns, else ``caps.exact``."""
    if len(columns) == 2 and all(id_word(c) is not None for c in columns):
        return caps.combo
    return caps.exact


def combo_key(columns: Sequence[str]) -> tuple[str, ...]:
    """The key of a combination in ``SourceProfile.combos``: its columns sorted by name."""
    return tuple(sorted(columns))


def keyable_type(physical: str) -> bool:
    return physical in KEY_TYPES


def key_candidates(columns: Sequence[str], physical: Mapping[str, str] | None = None) -> list[str]:
    """Columns (in position order given) that take part in combinations: id-named ones first, then the first
    column, then other columns of a key type (``physical``: the batch's physical type per column)."""

    def ok(c: str) -> bool:
        return physical is None or keyable_type(physical.get(c, "null"))

    out = [c for c in columns if id_word(c) is not None and ok(c)]
    if columns and columns[0] not in out and ok(columns[0]):
        out.append(columns[0])
    if physical is not None:
        out.extend(c for c in columns if c not in out and ok(c))
    return out[:MAX_KEY_COLUMNS]


def combos_of(cands: Sequence[str]) -> list[tuple[str, ...]]:
    pairs = [combo_key(c) for c in itertools.combinations(cands, 2)]
    triples = [combo_key(c) for c in itertools.combinations(cands[:MAX_TRIPLE_COLUMNS], 3)]
    return [*pairs, *triples]


def column_tag(name: str) -> np.uint64:
    """A per-column constant mixed into its cells' hashes for the row hash."""
    return np.uint64(splitmix64(_hash_str("\x00col:" + name)))


def add_cells(acc: np.ndarray, name: str, hashes: np.ndarray, valid: np.ndarray) -> None:
    """Add one column's cells (non-null ones, ``valid``) into the row accumulators ``acc`` (in place)."""
    if not valid.any():
        return
    cells = combine_hashes([np.full(int(valid.sum()), column_tag(name), dtype=np.uint64), hashes[valid]])
    with np.errstate(over="ignore"):
        acc[valid] += cells


def row_combo(acc: np.ndarray, caps: Caps) -> ComboProfile:
    """The whole-row combination from the row accumulators."""
    return ComboProfile.of(ROW, combine_hashes([acc]), caps, cap=caps.combo)
