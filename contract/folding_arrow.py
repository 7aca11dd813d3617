"""The columnar path's :class:`~esc.contract.folding.FoldHint`: which distinct strings may change under
``fold_text`` and, for plain ASCII ones, their folded hash, measured with Arrow kernels instead of a Python loop
over every distinct value (a column of 150,000 distinct addresses took seconds).

Python's ``str.strip`` and ``str.upper`` agree with Arrow's ASCII kernels on ASCII text; anything else (non-ASCII
text, and representatives that are not plain strings) is only marked as *may change* and left to the loop.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from esc.contract.folding import FOLD_MAX_CHARS, FoldHint, fold_hash

_WS_CHARS = " \t\n\x0b\x0c\r\x1c\x1d\x1e\x1f"
"""The ASCII characters Python's ``str.isspace`` (and so ``str.strip``) counts as white space."""
_WS = r"\t\n\x0b\f\r \x1c-\x1f"  # the same, as a regular expression class


def _np(a: pa.Array) -> np.ndarray:
    return np.asarray(a.to_numpy(zero_copy_only=False))


def fold_hint(strings: pa.Array, settle: bool) -> FoldHint:
    """The hint for distinct strings (nulls: values that are no strings, never folded). ``settle``: they are
    plain strings (physical ``string`` whatever their content), so ASCII ones get their folded hash here."""
    n = len(strings)
    lengths = _np(pc.fill_null(pc.utf8_length(strings), FOLD_MAX_CHARS + 1)).astype(np.int64)
    may = lengths <= FOLD_MAX_CHARS
    known = np.zeros(n, dtype=bool)
    hashes = np.zeros(n, dtype=np.uint64)
    at = np.flatnonzero(may)
    if len(at):
        sub = strings.take(pa.array(at))
        ascii_only = _np(pc.string_is_ascii(sub)).astype(bool)
        lower_or_edge = _np(pc.match_substring_regex(sub, f"[a-z]|^[{_WS}]|[{_WS}]$")).astype(bool)
        inner = _np(pc.match_substring_regex(sub, f"[^{_WS}][{_WS}]+[^{_WS}]")).astype(bool)
        changes = lower_or_edge & ~inner  # for ASCII: folding changes it, and leaves no space inside
        may[at] = ~ascii_only | changes
        if settle:
            k = at[ascii_only & changes]
            if len(k):
                folded = pc.ascii_upper(pc.ascii_trim(strings.take(pa.array(k)), characters=_WS_CHARS))
                hashes[k] = np.fromiter((fold_hash(t) for t in folded.to_pylist()), np.uint64, len(k))
                known[k] = True
    return FoldHint(may, known, hashes)


def fold_hint_of_reps(reps: Sequence[object]) -> FoldHint:
    """The hint for representatives of any type (only strings may fold; none is settled here)."""
    arr = pa.array([r if isinstance(r, str) else None for r in reps], pa.string())
    return fold_hint(arr, settle=False)


def concat(a: FoldHint, b: FoldHint) -> FoldHint:
    return FoldHint(
        np.concatenate([a.may, b.may]), np.concatenate([a.known, b.known]), np.concatenate([a.hashes, b.hashes])
    )
