"""Columnar profiling of Arrow record batches: the same profiles as the record path, computed vectorised.

The caller says how each column was parsed (``ColumnKind``): ``int`` (parsed as int64), ``decimal`` (kept as
text, numbers written with or without a decimal point) or ``string`` (any text). Integers and decimals are
hashed, grouped and counted with numpy; text is dictionary-encoded by Arrow and each distinct string goes
through exactly the code the record path uses (:meth:`FieldProfile.of_counts`), so a CSV file profiled either
way gives equal profiles (checked in the tests).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from esc.contract import histogram
from esc.contract.combos import ROW, ComboProfile, add_cells, combos_of, key_candidates, row_combo
from esc.contract.field_profile import (
    DEFAULT_CAPS,
    Aggregates,
    Caps,
    FieldProfile,
    build_from_groups,
    group_values,
)
from esc.contract.folding_arrow import concat, fold_hint, fold_hint_of_reps
from esc.contract.hash_arrow import hash_str_array
from esc.contract.profile import SourceProfile
from esc.contract.semantic import TEXT_CHARS, canonical, is_text
from esc.contract.sketches import combine_hashes, hash_float_array, hash_int_array, hash_value

ColumnKind = Literal["int", "decimal", "string"]
UNIQUE_SKIP_ROWS = 50_000
"""In batches at least this large, columns unique in the batch take no part in combinations (bounded memory:
a large table's surrogate key would otherwise pair with every other column, each pair an exact set)."""


def _groups(hashes: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Distinct hashes (sorted), one value for each, and how often each occurs."""
    order = np.argsort(hashes, kind="stable")
    sh = hashes[order]
    if len(sh) == 0:
        return sh, values[:0], np.empty(0, np.int64)
    starts = np.concatenate([[0], np.nonzero(sh[1:] != sh[:-1])[0] + 1])
    counts = np.diff(np.concatenate([starts, [len(sh)]]))
    return sh[starts], values[order][starts], counts


def _numeric_field(
    name: str,
    position: int,
    values: np.ndarray,
    hashes: np.ndarray,
    types: dict[str, int],
    years: int,
    caps: Caps,
) -> FieldProfile:
    uh, uv, counts = _groups(hashes, values)
    agg = Aggregates(
        nonnull=len(values),
        types={k: v for k, v in sorted(types.items()) if v},
        hints={"year": years} if years else {},
        num_min=canonical(values.min().item()) if len(values) else None,
        num_max=canonical(values.max().item()) if len(values) else None,
        num_hist=histogram.of_array(uv, counts),
    )
    return build_from_groups(name, name, position, agg, counts, uh, _LazyReps(uv), caps=caps)


class _LazyReps(Sequence[object]):
    """Canonical representatives of group values, made only for the few that are read."""

    def __init__(self, values: np.ndarray | pa.Array) -> None:
        self.values = values

    def __len__(self) -> int:
        return len(self.values)

    def __getitem__(self, i: int) -> object:  # type: ignore[override]
        v = self.values[i]
        return canonical(v.as_py() if isinstance(v, pa.Scalar) else v.item())


def _years(ints: np.ndarray) -> int:
    return int(np.count_nonzero((ints >= 1800) & (ints <= 2100)))


_SPECIAL_FIRST = "0123456789+-.#$€£¥"
_PHONE_FIRST = " (/"


def _special_mask(d: pa.Array, lengths: np.ndarray) -> np.ndarray:
    """Distinct strings that may be anything but a plain string/text without hints (numbers, dates, booleans,
    emails, URLs, phones, money, percents); they go through the record path's per-value code."""
    first = pc.utf8_slice_codeunits(d, 0, 1)
    special = lengths < 6
    special |= _np(pc.is_in(first, value_set=pa.array(list(_SPECIAL_FIRST))))
    special |= _np(pc.match_substring(d, "@")) | _np(pc.match_substring(d, "%"))
    special |= _np(pc.starts_with(d, "http", ignore_case=True)) | _np(
        pc.starts_with(d, "www.", ignore_case=True)
    )
    maybe_phone = _np(pc.is_in(first, value_set=pa.array(list(_PHONE_FIRST))))
    if maybe_phone.any():
        digits = np.asarray(pc.count_substring_regex(d, r"[0-9]").to_numpy(zero_copy_only=False))
        special |= maybe_phone & (digits >= 6)
    return special


def _np(a: pa.Array | pa.ChunkedArray) -> np.ndarray:
    return np.asarray(a.to_numpy(zero_copy_only=False))


def _string_field(
    name: str, position: int, nn: pa.Array, caps: Caps
) -> tuple[FieldProfile, np.ndarray, np.ndarray]:
    """Profile of a text column, and the hash of each entry with the row -> entry index.

    Entries are the dictionary of the column (counts from the indices), or the rows themselves (count 1) when
    the column is mostly distinct."""
    head = nn.slice(0, 10_000)
    if len(head) >= 1000 and pc.count_distinct(head).as_py() > 0.5 * len(head):
        # mostly distinct (comments, names): dictionary encoding would cost more than it saves
        d = nn
        idx = np.arange(len(nn), dtype=np.int64)
        counts = np.ones(len(nn), dtype=np.int64)
    else:
        enc = pc.dictionary_encode(nn)
        d = enc.dictionary
        idx = _np(enc.indices).astype(np.int64)
        counts = np.bincount(idx, minlength=len(d)).astype(np.int64)
    lengths = _np(pc.utf8_length(d)).astype(np.int64)
    special = _special_mask(d, lengths)
    dh = np.zeros(len(d), dtype=np.uint64)
    # special entries: exactly the record path
    sp_idx = np.nonzero(special)[0]
    sp_vals = d.take(pa.array(sp_idx)).to_pylist() if len(sp_idx) else []
    agg, sp_w, sp_h, sp_reps = group_values(zip(sp_vals, counts[sp_idx].tolist(), strict=True))
    for j, v in zip(sp_idx.tolist(), sp_vals, strict=True):
        dh[j] = hash_value(v) or 0
    # plain entries: string or text, no hints; classified and measured vectorised
    pl_idx = np.nonzero(~special)[0]
    if len(pl_idx):
        plain = d.take(pa.array(pl_idx))
        texts = _Lazy(plain)
        ph = hash_str_array(plain)
        dh[pl_idx] = ph
        w = counts[pl_idx]
        ln = lengths[pl_idx]
        mid = np.nonzero((ln >= 60) & (ln < TEXT_CHARS))[0]
        is_txt = ln >= TEXT_CHARS
        if len(mid):
            # is_text needs a newline or two sentence ends ([.!?]): only values holding either are read
            sub = plain.take(pa.array(mid))
            maybe = _np(pc.greater_equal(pc.count_substring_regex(sub, r"[.!?]"), 2)).astype(bool)
            maybe |= _np(pc.match_substring(sub, "\n")).astype(bool)
            at = mid[maybe]
            if len(at):
                is_txt[at] = np.array([is_text(t) for t in plain.take(pa.array(at)).to_pylist()], dtype=bool)
        trimmed = pc.utf8_trim_whitespace(plain)
        words = _np(pc.list_value_length(pc.utf8_split_whitespace(trimmed)))
        words = np.where(_np(pc.utf8_length(trimmed)) > 0, words, 0).astype(np.int64)
        mm = pc.min_max(plain)
        n_text = int(w[is_txt].sum())
        total = int(w.sum())
        agg = agg.merge(
            Aggregates(
                nonnull=total,
                types={k: v for k, v in (("string", total - n_text), ("text", n_text)) if v},
                str_min=mm["min"].as_py(),
                str_max=mm["max"].as_py(),
                len_min=ln.min().item(),
                len_max=ln.max().item(),
                len_sum=int((ln * w).sum()),
                str_count=total,
                words_sum=int((words * w).sum()),
            )
        )
        hashes = np.concatenate([sp_h, ph])
        weights = np.concatenate([np.asarray(sp_w, dtype=np.int64), w])
        reps: Sequence[object] = _Concat(sp_reps, texts)
        hint = concat(fold_hint_of_reps(sp_reps), fold_hint(plain, settle=True))
    else:
        hashes, weights, reps = sp_h, np.asarray(sp_w, dtype=np.int64), sp_reps
        hint = fold_hint_of_reps(sp_reps)
    prof = build_from_groups(name, name, position, agg, weights, hashes, reps, caps=caps, fold_hint=hint)
    return prof, dh, idx


class _Lazy(Sequence[object]):
    """The values of an Arrow array as a sequence, each made a Python object only when read (few are)."""

    def __init__(self, arr: pa.Array) -> None:
        self.arr = arr

    def __len__(self) -> int:
        return len(self.arr)

    def __getitem__(self, i: int) -> object:  # type: ignore[override]
        return self.arr[i].as_py()


class _Concat(Sequence[object]):
    def __init__(self, a: Sequence[object], b: Sequence[object]) -> None:
        self.a, self.b = a, b

    def __len__(self) -> int:
        return len(self.a) + len(self.b)

    def __getitem__(self, i: int) -> object:  # type: ignore[override]
        return self.a[i] if i < len(self.a) else self.b[i - len(self.a)]


def _column(
    name: str, position: int, arr: pa.Array, kind: ColumnKind, caps: Caps, want_hashes: bool
) -> tuple[FieldProfile, np.ndarray | None, np.ndarray | None]:
    """The field profile, and (when asked) per-row hashes with a validity mask for key candidates."""
    valid = np.asarray(arr.is_valid().to_numpy(zero_copy_only=False), dtype=bool)
    nn = arr.drop_null()
    if kind == "int":
        ints = np.asarray(nn.to_numpy(zero_copy_only=False), dtype=np.int64)
        h = hash_int_array(ints)
        prof = _numeric_field(name, position, ints, h, {"int": len(ints)}, _years(ints), caps)
    elif kind == "decimal":
        floats = np.asarray(pc.cast(nn, pa.float64()).to_numpy(zero_copy_only=False), dtype=np.float64)
        dotted = np.asarray(pc.match_substring(nn, ".").to_numpy(zero_copy_only=False), dtype=bool)
        n_dec = int(np.count_nonzero(dotted))
        h = hash_float_array(floats)
        types = {"decimal": n_dec, "int": len(floats) - n_dec}
        prof = _numeric_field(name, position, floats, h, types, _years(floats[~dotted]), caps)
    else:
        prof, dh, idx = _string_field(name, position, nn, caps)
        h = dh[idx] if len(idx) else np.empty(0, np.uint64)
    if not want_hashes:
        return prof, None, None
    full = np.zeros(len(valid), dtype=np.uint64)
    full[valid] = h
    return prof, full, valid


def profile_batch(
    name: str, batch: pa.RecordBatch | pa.Table, kinds: Mapping[str, ColumnKind], caps: Caps = DEFAULT_CAPS
) -> SourceProfile:
    """Profile of one Arrow batch of source ``name``; columns missing from ``kinds`` are strings."""
    names = list(batch.schema.names)
    n = batch.num_rows
    fields: dict[str, FieldProfile] = {}
    row_hashes: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    acc = np.zeros(n, dtype=np.uint64)
    for i, col in enumerate(names):
        arr = batch.column(i)
        if isinstance(arr, pa.ChunkedArray):
            arr = arr.combine_chunks()
        if arr.null_count == len(arr):
            # a column of nulls only: like the record path, it is known but has no values
            fields[col] = FieldProfile.of(col, [], col, i, caps)
            row_hashes[col] = (np.zeros(len(arr), np.uint64), np.zeros(len(arr), bool))
            continue
        prof, h, valid = _column(col, i, arr, kinds.get(col, "string"), caps, True)
        fields[col] = prof
        if h is not None and valid is not None:
            row_hashes[col] = (h, valid)
            add_cells(acc, col, h, valid)
    cands = key_candidates(names, {c: f.physical for c, f in fields.items()})
    if n >= UNIQUE_SKIP_ROWS:
        # a column unique over this many rows is a key on its own: combinations with it are never minimal
        cands = [c for c in cands if not (fields[c].nonnull == n and fields[c].distinct >= n)]
    combos: dict[tuple[str, ...], ComboProfile] = {}
    for combo in combos_of(cands):
        mask = np.logical_and.reduce([row_hashes[c][1] for c in combo])
        whole = bool(mask.all())  # no nulls in these columns: no copy of each column
        hashes = combine_hashes([row_hashes[c][0] if whole else row_hashes[c][0][mask] for c in combo])
        combos[combo] = ComboProfile.of(combo, hashes, caps)
    if n:
        combos[ROW] = row_combo(acc, caps)
    return SourceProfile(name, n, fields, combos, None, ())
