"""Exact evidence against key candidates, gathered over one whole file where the file is read anyway.

A profile's uniqueness is exact while its sets fit their caps (``Caps.exact`` values per column,
``Caps.combo`` tuples per pair of id-named columns) and estimated by HyperLogLog after that. An estimate cannot
tell a unique column pair from one that repeats on 49 of 300,000 rows (TPC-H ``lineitem`` at SF 0.05:
``(l_orderkey, l_partkey)`` repeats, ``(l_orderkey, l_linenumber)`` does not), and a repeated key merges two
records into one node. No bounded streaming sketch can prove such rare repeats (a sample sees each repeat with
the probability it keeps a tuple). A connector reading a whole file can, in memory that lives only while it reads:
:class:`KeyWitness` keeps the hashed tuples of a few candidates with a fingerprint of the row each came from, and
counts the tuples it saw on rows that differ (exact duplicate rows do not count: keys hold modulo them).

Candidates: the columns :func:`esc.contract.combos.key_candidates` puts first (id-named ones, then the first
column) as single columns and pairs, at most ``WITNESS_COLUMNS`` columns. Every ``COMPACT_ROWS`` rows the kept
tuples are sorted and checked; a candidate with a repeat is settled (it is not a key) and its tuples dropped, so
memory is spent only on candidates that are still unique. A candidate is given up (no claim) past ``MAX_ROWS``.
The result depends only on the file's rows, never on timing or on how they were batched: :meth:`KeyWitness.conflicts`
names the candidates that repeat.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from esc.contract.combos import combo_key, key_candidates
from esc.contract.hashing import combine_hashes, hash_int_array, hash_value

WITNESS_COLUMNS = 6
"""Columns whose singles and pairs are witnessed (6 columns: 6 singles and 15 pairs)."""
COMPACT_ROWS = 1 << 16
"""Rows gathered between two checks."""
MAX_ROWS = 1 << 23
"""Rows per candidate beyond which a file is not witnessed (the exact sets of discovery stop there too)."""
SEP = "\x1f"


def candidate_name(columns: Sequence[str]) -> str:
    """The wire name of a candidate: its columns sorted by name, joined by ``SEP``."""
    return SEP.join(combo_key(columns))


def candidate_columns(name: str) -> tuple[str, ...]:
    return tuple(name.split(SEP))


def witness_candidates(columns: Sequence[str]) -> list[tuple[str, ...]]:
    cols = key_candidates(columns)[:WITNESS_COLUMNS]
    return [(c,) for c in cols] + [combo_key(p) for p in itertools.combinations(cols, 2)]


def _row_print(values: Mapping[str, Any]) -> int:
    try:
        return hash(tuple(values.items()))
    except TypeError:  # lists and dicts
        return hash(repr(sorted(values.items(), key=lambda kv: kv[0])))


class KeyWitness:
    """Repeated tuples of key candidates over the rows of one file (of one source), in bounded passes."""

    def __init__(self) -> None:
        self.candidates: list[tuple[str, ...]] | None = None
        self._tuples: dict[tuple[str, ...], list[np.ndarray]] = {}
        self._prints: dict[tuple[str, ...], list[np.ndarray]] = {}
        self._found: dict[tuple[str, ...], int] = {}
        self._given_up: set[tuple[str, ...]] = set()
        self._rows: dict[tuple[str, ...], int] = {}
        self._pending = 0

    # -- intake ------------------------------------------------------------------------------------------------------
    def add_records(self, rows: Sequence[Mapping[str, Any]]) -> None:
        """A batch of records' values, in file order."""
        if not rows:
            return
        if self.candidates is None:
            self._start(list(rows[0]))
        live = self._live()
        if not live:
            return
        memo: dict[tuple[type, Any], int | None] = {}

        def h(v: Any) -> int | None:
            try:
                k = (type(v), v)
                if k not in memo:
                    memo[k] = hash_value(v)
                return memo[k]
            except TypeError:  # unhashable: lists and dicts are not key values
                return None

        cols = sorted({c for cand in live for c in cand})
        hashes: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        for c in cols:
            got = [h(r.get(c)) for r in rows]
            valid = np.fromiter((x is not None for x in got), dtype=bool, count=len(got))
            hashes[c] = (np.fromiter((x or 0 for x in got), dtype=np.uint64, count=len(got)), valid)
        prints = np.fromiter((_row_print(r) for r in rows), dtype=np.int64, count=len(rows))
        self.add_hashes(hashes, prints)

    def add_hashes(self, columns: Mapping[str, tuple[np.ndarray, np.ndarray]], prints: np.ndarray) -> None:
        """A batch given as each column's value hashes and validity, and a fingerprint per row (any integers that
        are equal for equal rows)."""
        if self.candidates is None:
            self._start(list(columns))
        for cand in self._live():
            if any(c not in columns for c in cand):
                continue  # (a row without the column has no tuple)
            mask = np.logical_and.reduce([columns[c][1] for c in cand])
            tup = columns[cand[0]][0][mask] if len(cand) == 1 else combine_hashes([columns[c][0][mask] for c in cand])
            self._tuples.setdefault(cand, []).append(tup)
            self._prints.setdefault(cand, []).append(np.asarray(prints)[mask].astype(np.int64, copy=False))
            self._rows[cand] = self._rows.get(cand, 0) + len(tup)
            if self._rows[cand] > MAX_ROWS:
                self._given_up.add(cand)
                self._tuples.pop(cand, None)
                self._prints.pop(cand, None)
        self._pending += len(prints)
        if self._pending >= COMPACT_ROWS:
            self._check()

    def _start(self, columns: list[str]) -> None:
        self.candidates = witness_candidates(columns)

    def _live(self) -> list[tuple[str, ...]]:
        return [c for c in self.candidates or [] if c not in self._found and c not in self._given_up]

    # -- checks ------------------------------------------------------------------------------------------------------
    def _check(self) -> None:
        self._pending = 0
        for cand in list(self._tuples):
            tup = np.concatenate(self._tuples[cand])
            prints = np.concatenate(self._prints[cand])
            order = np.lexsort((prints, tup))
            tup, prints = tup[order], prints[order]
            same = tup[1:] == tup[:-1]
            repeated = int(np.count_nonzero(same & (prints[1:] != prints[:-1])))
            if repeated:
                self._found[cand] = repeated
                del self._tuples[cand], self._prints[cand]
                continue
            keep = np.ones(len(tup), dtype=bool)
            keep[1:] = ~same  # one row per tuple is enough once the others are its exact duplicates
            self._tuples[cand], self._prints[cand] = [tup[keep]], [prints[keep]]

    def conflicts(self) -> dict[str, int]:
        """The candidates that repeat on rows that differ (``candidate_name`` -> 1). How many repeats a check
        finds depends on where the checks fall (a candidate is dropped at its first), so only the fact is given:
        the record path and the table path (:func:`table_conflicts`) say the same of the same file."""
        self._check()
        return {candidate_name(c): 1 for c in sorted(self._found)}


def witnessed(parts: Iterable[Mapping[str, int]]) -> dict[tuple[str, ...], int]:
    """Candidates' repeats summed over files (each file's count is a lower bound, so the sum is one)."""
    out: dict[tuple[str, ...], int] = {}
    for part in parts:
        for name, n in part.items():
            cols = candidate_columns(name)
            out[cols] = out.get(cols, 0) + int(n)
    return out


def table_conflicts(table: pa.Table) -> dict[str, int]:
    """:meth:`KeyWitness.conflicts` of a whole table, vectorised: cells are equal when their text is (each
    column's dictionary codes stand for its values)."""
    w = KeyWitness()
    w._start(list(table.schema.names))
    need = {c for cand in w.candidates or [] for c in cand}
    cols: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    codes: list[np.ndarray] = []
    for name in table.schema.names:
        arr = table.column(name)
        enc = pc.dictionary_encode(arr.combine_chunks() if isinstance(arr, pa.ChunkedArray) else arr)
        idx = np.asarray(pc.fill_null(enc.indices, -1).to_numpy(zero_copy_only=False), dtype=np.int64)
        h = hash_int_array(idx)
        codes.append(h)
        if name in need:
            cols[name] = (h, idx >= 0)
    if codes:
        w.add_hashes(cols, combine_hashes(codes).view(np.int64))
    return w.conflicts()
