"""A mergeable histogram of numeric values on a fixed logarithmic grid, and distribution shift between two of them.

Each finite number falls in one bucket of a grid fixed in advance: the octave of its magnitude (``math.frexp``)
split into :data:`SUB_BUCKETS` equal parts, mirrored for negative numbers, with one bucket for zero (and for
magnitudes below 2**:data:`MIN_EXP`, which count as zero). Octaves above 2**:data:`MAX_EXP` share the top bucket.
So a histogram is a map bucket index -> count: merging adds counts, which is exact, commutative and associative,
and it holds at most ``2 * (MAX_EXP - MIN_EXP + 1) * SUB_BUCKETS + 1`` buckets (a few dozen for most columns).
Bucket indices grow with the value, so a cumulative walk over sorted indices is the distribution function.

:func:`bucket` (one value) and :func:`of_array` (numpy) agree bit for bit: both use ``frexp`` and the same
float operations. :func:`psi` (population stability index over deciles of the reference) and :func:`ks`
(Kolmogorov-Smirnov distance at bucket edges) compare two histograms; a relative change below the bucket width
(~9 % of the value with 8 sub-buckets) is not seen.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence

import numpy as np

SUB_BUCKETS = 8
MIN_EXP = -63
MAX_EXP = 64
PSI_BINS = 10
PSI_FLOOR = 1e-4
"""Share given to an empty bin on either side, so the index stays finite (the usual smoothing)."""

Hist = dict[int, int]


def bucket(x: float) -> int | None:
    """Bucket index of one number; None for NaN and infinities."""
    x = float(x)
    if not math.isfinite(x):
        return None
    m, e = math.frexp(abs(x))
    if x == 0 or e < MIN_EXP:
        return 0
    sub = int((m - 0.5) * (2 * SUB_BUCKETS))
    if e > MAX_EXP:
        e, sub = MAX_EXP, SUB_BUCKETS - 1
    idx = 1 + (e - MIN_EXP) * SUB_BUCKETS + sub
    return idx if x > 0 else -idx


_OFFSET = 1 + (MAX_EXP - MIN_EXP + 1) * SUB_BUCKETS
"""Largest bucket index: ``bucket + _OFFSET`` is never negative (for ``np.bincount``)."""


def of_array(values: np.ndarray | Sequence[float], weights: np.ndarray | Sequence[int] | None = None) -> Hist:
    """Histogram of an array of numbers, each counted ``weights[i]`` times (default once): the vectorised
    :func:`bucket`, and the one the profilers use."""
    a = np.asarray(values, dtype=np.float64)
    w = np.ones(len(a), dtype=np.float64) if weights is None else np.asarray(weights, dtype=np.float64)
    finite = np.isfinite(a)
    if not finite.all():
        a, w = a[finite], w[finite]
    if len(a) == 0:
        return {}
    m, e = np.frexp(np.abs(a))
    sub = ((m - 0.5) * (2 * SUB_BUCKETS)).astype(np.int64)
    top = e > MAX_EXP
    idx = 1 + (np.minimum(e, MAX_EXP).astype(np.int64) - MIN_EXP) * SUB_BUCKETS + np.where(top, SUB_BUCKETS - 1, sub)
    idx = np.where(a < 0, -idx, idx)
    idx = np.where((a == 0) | (e < MIN_EXP), 0, idx)
    counts = np.bincount(idx + _OFFSET, weights=w)
    nz = np.nonzero(counts)[0]
    return {int(k) - _OFFSET: int(counts[k] + 0.5) for k in nz}


def of_pairs(pairs: Sequence[tuple[float | None, int]]) -> Hist:
    """Histogram of ``(number or None, count)`` pairs (None and non-finite numbers are not counted)."""
    nums = [(x, n) for x, n in pairs if x is not None]
    if not nums:
        return {}
    try:
        values = np.array([x for x, _ in nums], dtype=np.float64)
    except OverflowError:  # an integer beyond the float range: counted in the top bucket of its sign
        values = np.array([x if abs(x) < 1e308 else math.copysign(1e308, x) for x, _ in nums], dtype=np.float64)
    return of_array(values, [n for _, n in nums])


def add(h: dict[int, int], x: float | None, n: int = 1) -> None:
    """Count ``n`` occurrences of ``x`` (None: nothing) into the histogram ``h``."""
    b = None if x is None else bucket(x)
    if b is not None:
        h[b] = h.get(b, 0) + n


def merge(a: Mapping[int, int], b: Mapping[int, int]) -> Hist:
    out = dict(a)
    for k, v in b.items():
        out[k] = out.get(k, 0) + v
    return dict(sorted(out.items()))


def subtract(a: Mapping[int, int], b: Mapping[int, int]) -> Hist:
    """``a - b`` for a histogram ``a`` that contains ``b`` (counts never go below zero)."""
    out = {k: v - b.get(k, 0) for k, v in a.items()}
    return {k: v for k, v in sorted(out.items()) if v > 0}


def to_list(h: Mapping[int, int]) -> list[list[int]]:
    """JSON form: ``[[bucket, count], ...]`` sorted by bucket."""
    return [[int(k), int(v)] for k, v in sorted(h.items())]


def from_list(items: Iterable[Iterable[int]] | None) -> Hist:
    return dict(sorted((int(k), int(v)) for k, v in (items or [])))


def lower_edge(idx: int) -> float:
    """The edge of a bucket nearest zero (for display: a bucket holds the values from there outwards)."""
    if idx == 0:
        return 0.0
    i = abs(idx) - 1
    e, sub = divmod(i, SUB_BUCKETS)
    v = math.ldexp(0.5 + sub / (2 * SUB_BUCKETS), e + MIN_EXP)
    return v if idx > 0 else -v


def _cdf_pairs(ref: Mapping[int, int], cur: Mapping[int, int]) -> list[tuple[int, float, float]]:
    """(bucket, reference share, current share) over the union of buckets, in value order."""
    nr, nc = sum(ref.values()), sum(cur.values())
    return [(k, ref.get(k, 0) / nr, cur.get(k, 0) / nc) for k in sorted(set(ref) | set(cur))]


def ks(ref: Mapping[int, int], cur: Mapping[int, int]) -> float | None:
    """Kolmogorov-Smirnov distance: the largest gap between the two distribution functions at bucket edges
    (0: same buckets in the same shares; 1: no overlap). None when either side is empty."""
    if not sum(ref.values()) or not sum(cur.values()):
        return None
    fr = fc = gap = 0.0
    for _, pr, pc in _cdf_pairs(ref, cur):
        fr, fc = fr + pr, fc + pc
        gap = max(gap, abs(fr - fc))
    return min(gap, 1.0)


def psi(ref: Mapping[int, int], cur: Mapping[int, int], bins: int = PSI_BINS) -> float | None:
    """Population stability index of ``cur`` against ``ref`` over (at most) ``bins`` bins holding about equal
    shares of the reference; buckets are never split. ``< 0.1`` is usually read as stable, ``> 0.25`` as a
    significant shift. None when either side is empty."""
    if not sum(ref.values()) or not sum(cur.values()):
        return None
    shares: list[tuple[float, float]] = []  # (reference share, current share) per bin
    acc_r = acc_c = 0.0
    filled = 0.0
    for _, pr, pc in _cdf_pairs(ref, cur):
        acc_r, acc_c = acc_r + pr, acc_c + pc
        filled += pr
        if filled >= (len(shares) + 1) / bins - 1e-12:
            shares.append((acc_r, acc_c))
            acc_r = acc_c = 0.0
    if acc_r or acc_c:
        if shares and not acc_r:
            last = shares.pop()  # current values above the reference's range join the last bin
            acc_r, acc_c = last[0] + acc_r, last[1] + acc_c
        shares.append((acc_r, acc_c))
    total = 0.0
    for r, c in shares:
        r, c = max(r, PSI_FLOOR), max(c, PSI_FLOOR)
        total += (c - r) * math.log(c / r)
    return total
