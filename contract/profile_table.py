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
    ``batch`` rows, merged in order into the first."""
    acc: TopK | None = None
    n = len(hashes)
    for start in range(0, n, batch):
        v = valid[start : start + batch]
        h = hashes[start : start + batch][v]
        if not len(h):
            continue
        uh, first, counts = np.unique(h, return_index=True, return_counts=True)
        if len(uh) > k:
            cut = int(np.partition(counts, len(counts) - 1 - k)[len(counts) - 1 - k])
            keep = np.nonzero(counts > cut)[0]
        else:
            cut, keep = 0, np.arange(len(uh))
        rows = np.flatnonzero(v) + start  # table rows of this batch's valid cells, in order
        items = []
        for i in keep.tolist():
            hv = uh[i]
            cells = rows[np.flatnonzero(h == hv)]
            values = {str(x) for x in raw.take(pa.array(cells)).to_pylist()} if len(cells) > 1 else {
                str(raw[int(rows[int(first[i])])].as_py())}
            rep: Any = None
            for s in sorted(values):
                c = reps.get(s)
                if c is None:
                    c = reps[s] = canonical(s)
                rep = c if rep is None else representative(rep, c)
            items.append((int(hv), rep, int(counts[i]) - cut))
        part = TopK(k, tuple(sorted(items, key=lambda t: t[0])))
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
