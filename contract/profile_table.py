"""Profiling a whole file's Arrow table into the profile the record path builds (issue 15.3, columnar path).

The record path profiles each batch of 500 records (``agents.profiler``; the in-process runtime cuts a file's
records into batches of ``BATCH`` from its first record) and the contract agent merges the batch profiles one after
another. Every sketch of a profile merges exactly (counts, exact sets, HyperLogLog, bottom-k, examples, histograms,
combinations) except the Misra-Gries frequent values (``TopK``), whose merge depends on the batches. So the table
is profiled column by column, vectorised (``contract.profile_arrow``), and each field's ``top`` is then rebuilt
as the record path's sequence of batch merges would leave it, from per-batch counts of the row hashes.

Column kinds are decided on every value, not a sample: a column is ``int`` only when each value matches the
record path's own integer pattern (``contract.hashing.INT_RE``), ``decimal`` when each matches it or the decimal
one; anything else is text, whose values the profiler types one distinct value at a time, as the record path does.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from esc.contract.combos import ROW, ComboProfile, add_cells, combos_of, key_candidates, row_combo
from esc.contract.field_profile import Caps, FieldProfile
from esc.contract.frequent import TopK, representative
from esc.contract.hashing import DEC_RE, INT_RE
from esc.contract.profile import SourceProfile
from esc.contract.profile_arrow import ColumnKind, _column
from esc.contract.semantic import canonical
from esc.contract.sketches import combine_hashes


def _all_match(arr: pa.Array, *patterns: str) -> bool:
    nn = arr.drop_null()
    if len(nn) == 0:
        return False
    ok = pc.match_substring_regex(nn, "|".join(f"^(?:{p})$" for p in patterns))
    return bool(pc.all(ok).as_py())


def column_kind(arr: pa.Array) -> ColumnKind:
    """How the vectorised profiler may read a text column and still count as the record path does."""
    if _all_match(arr, INT_RE.pattern):
        return "int"
    if _all_match(arr, INT_RE.pattern, DEC_RE.pattern):
        return "decimal"
    return "string"


def _typed(arr: pa.Array, kind: ColumnKind) -> pa.Array:
    return pc.cast(arr, pa.int64()) if kind == "int" else arr


def sequential_top(
    hashes: np.ndarray, valid: np.ndarray, raw: pa.Array, k: int, batch: int, reps: dict[str, Any]
) -> TopK:
    """The frequent values of a column as the record path leaves them: one Misra-Gries summary per batch of
    ``batch`` rows, merged in order into the first.

    The valid cells are ranked by hash once and then sorted by (batch, rank); a batch's summary keeps the hashes
    counted more often than its (k+1)-th largest count, less that count. A kept hash's representative is the
    least canonical form of the strings it stands for in the batch: the one string when every cell of the column
    with that hash holds the same (read once), else the batch's cells are read."""
    rows = np.flatnonzero(valid)  # table rows of the valid cells, in order
    if not len(rows):
        return TopK.empty(k)
    h = hashes[rows]
    by_hash = np.argsort(h, kind="stable")
    hs = h[by_hash]
    firsts = np.r_[True, hs[1:] != hs[:-1]]
    starts = np.flatnonzero(firsts)
    uniq, totals = hs[starts], np.diff(np.r_[starts, len(hs)])
    enc = raw.dictionary_encode()
    codes = enc.indices.to_numpy(zero_copy_only=False)[rows][by_hash]
    lo, hi = np.minimum.reduceat(codes, starts), np.maximum.reduceat(codes, starts)
    code = np.where(lo == hi, lo, -1)  # the hash's one string (an index into the dictionary), or -1
    texts: dict[int, str] = {}

    def rep_of(one: int, cells: Callable[[], np.ndarray]) -> Any:
        if one >= 0:
            text = texts.get(one)
            if text is None:
                text = texts[one] = str(enc.dictionary[one].as_py())
            values = {text}
        else:
            values = {str(x) for x in raw.take(pa.array(cells())).to_pylist()}
        rep: Any = None
        for v in sorted(values):
            r = reps.get(v)
            if r is None:
                r = reps[v] = canonical(v)
            rep = r if rep is None else representative(rep, r)
        return rep

    if len(uniq) <= k:
        # never more than k distinct hashes: no batch and no merge cuts, so the summary is the column's exact
        # counts, each with the least representative over all its cells (a merge keeps the lesser of two)
        return TopK(k, tuple(
            (int(uniq[i]), rep_of(int(code[i]), lambda i=i: rows[by_hash[starts[i] : starts[i] + totals[i]]]),  # type: ignore[misc]
             int(totals[i]))
            for i in range(len(uniq))
        ))  # fmt: skip
    rank = np.empty(len(h), np.int64)
    rank[by_hash] = np.cumsum(firsts) - 1
    key = (rows // batch) * len(uniq) + rank
    order = np.argsort(key, kind="stable")
    ks = key[order]
    g_starts = np.flatnonzero(np.r_[True, ks[1:] != ks[:-1]])
    counts = np.diff(np.r_[g_starts, len(ks)])
    g_batch, g_rank = np.divmod(ks[g_starts], len(uniq))
    b_starts = np.flatnonzero(np.r_[True, g_batch[1:] != g_batch[:-1]])
    b_ends = np.r_[b_starts[1:], len(g_starts)]
    acc: TopK | None = None
    for s, e in zip(b_starts.tolist(), b_ends.tolist(), strict=True):
        c = counts[s:e]
        if e - s > k:
            cut = int(np.partition(c, len(c) - 1 - k)[len(c) - 1 - k])
            keep = (np.flatnonzero(c > cut) + s).tolist()
        else:
            cut, keep = 0, list(range(s, e))
        if not keep and acc is not None:
            continue  # an empty summary merges into any summary of at most k items as a no-op
        items = []
        for g in keep:
            r = int(g_rank[g])
            cells = lambda g=g: rows[order[g_starts[g] : g_starts[g] + counts[g]]]  # noqa: E731
            items.append((int(uniq[r]), rep_of(int(code[r]), cells), int(counts[g]) - cut))  # type: ignore[misc]
        part = TopK(k, tuple(items))  # sorted by hash: the groups of a batch are in rank order
        acc = part if acc is None else acc.merge(part)
    return acc if acc is not None else TopK.empty(k)


def profile_table(name: str, table: pa.Table, fmt: str, caps: Caps, batch: int) -> SourceProfile:
    """The profile of a table of text cells (None: empty), equal to the record path's merged batch profiles."""
    names = list(table.schema.names)
    n = table.num_rows
    fields: dict[str, FieldProfile] = {}
    row_hashes: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    acc = np.zeros(n, dtype=np.uint64)
    for i, col in enumerate(names):
        arr = table.column(i)
        raw = arr.combine_chunks() if isinstance(arr, pa.ChunkedArray) else arr
        if raw.null_count == len(raw):
            fields[col] = FieldProfile.of(col, [], col, i, caps)
            row_hashes[col] = (np.zeros(n, np.uint64), np.zeros(n, bool))
            continue
        kind = column_kind(raw)
        prof, h, valid = _column(col, i, _typed(raw, kind), kind, caps, True)
        assert h is not None and valid is not None
        prof = replace(prof, top=sequential_top(h, valid, raw, caps.top_k, batch, {}))
        fields[col] = prof
        row_hashes[col] = (h, valid)
        add_cells(acc, col, h, valid)
    cands = key_candidates(names, {c: f.physical for c, f in fields.items()})
    combos: dict[tuple[str, ...], ComboProfile] = {}
    for combo in combos_of(cands):
        mask = np.logical_and.reduce([row_hashes[c][1] for c in combo])
        whole = bool(mask.all())
        hashes = combine_hashes([row_hashes[c][0] if whole else row_hashes[c][0][mask] for c in combo])
        combos[combo] = ComboProfile.of(combo, hashes, caps)
    if n:
        combos[ROW] = row_combo(acc, caps)
    return SourceProfile(name, n, fields, combos, None, (fmt,))
