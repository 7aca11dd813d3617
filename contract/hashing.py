"""Canonical value hashing: one 64-bit hash per value, computed value by value (:func:`hash_value`) and
vectorised (:func:`hash_int_array`, :func:`hash_float_array`), the two agreeing bit for bit.

Values are hashed through one canonical form, so that ``"17"`` from a CSV file, ``17`` from JSON and ``17.0`` from
a float column hash alike, and ``"01581"`` (a code with a leading zero) stays a string. :func:`fold_text` gives
the case- and space-insensitive form under which codes are compared when their case differs between sources.
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
import re
import struct
from collections.abc import Iterable, Sequence
from decimal import Decimal
from typing import Any

import numpy as np

MASK64 = (1 << 64) - 1
_GOLDEN = 0x9E3779B97F4A7C15
_M1 = 0xBF58476D1CE4E5B9
_M2 = 0x94D049BB133111EB
_FLOAT_TAG = 0x5F3759DF5F3759DF
_BOOL_TAG = 0x0B00_0B00_0B00_0B00

INT_RE = re.compile(r"-?(?:0|[1-9][0-9]{0,17})")
"""A canonical integer written as text: no sign '+', no leading zeros (``007`` is a code), at most 18 digits."""
DEC_RE = re.compile(r"-?(?:0|[1-9][0-9]{0,17})\.[0-9]{1,15}")
"""A plain decimal written as text (``12.50``)."""


def splitmix64(x: int) -> int:
    """The splitmix64 finaliser on a 64-bit unsigned integer."""
    z = (x + _GOLDEN) & MASK64
    z = ((z ^ (z >> 30)) * _M1) & MASK64
    z = ((z ^ (z >> 27)) * _M2) & MASK64
    return z ^ (z >> 31)


def _splitmix64_np(x: np.ndarray) -> np.ndarray:
    z = x.astype(np.uint64, copy=True)
    with np.errstate(over="ignore"):
        z += np.uint64(_GOLDEN)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(_M1)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(_M2)
    return z ^ (z >> np.uint64(31))


def _hash_str(s: str) -> int:
    return int.from_bytes(
        hashlib.blake2b(s.encode("utf-8", "surrogatepass"), digest_size=8).digest(), "little"
    )


def _hash_int(i: int) -> int:
    if -(1 << 63) <= i < (1 << 64):
        return splitmix64(i & MASK64)
    return _hash_str(str(i))


def _hash_float(f: float) -> int:
    if math.isfinite(f) and f == math.floor(f) and abs(f) < 2**53:
        return _hash_int(int(f))
    (bits,) = struct.unpack("<Q", struct.pack("<d", f))
    return splitmix64(bits ^ _FLOAT_TAG)


def hash_value(v: Any) -> int | None:
    """Canonical 64-bit hash of one value; None for a null."""
    if v is None:
        return None
    if isinstance(v, bool):
        return splitmix64(_BOOL_TAG + int(v))
    if isinstance(v, int):
        return _hash_int(v)
    if isinstance(v, float):
        return _hash_float(v)
    if isinstance(v, Decimal):
        return _hash_float(float(v)) if v.is_finite() else _hash_str(str(v))
    if isinstance(v, str):
        if INT_RE.fullmatch(v):
            return _hash_int(int(v))
        if DEC_RE.fullmatch(v):
            return _hash_float(float(v))
        return _hash_str(v)
    if isinstance(v, dict | list | tuple):
        return _hash_str(json.dumps(v, sort_keys=True, default=str, ensure_ascii=False))
    return _hash_str(str(v))


def hash_values(values: Iterable[Any]) -> np.ndarray:
    """Hashes of the non-null values, in order, as uint64."""
    out = [h for h in (hash_value(v) for v in values) if h is not None]
    return np.array(out, dtype=np.uint64)


def hash_int_array(a: np.ndarray) -> np.ndarray:
    """Vectorised :func:`hash_value` for int64 values."""
    return _splitmix64_np(a.astype(np.int64, copy=False).view(np.uint64))


def hash_float_array(a: np.ndarray) -> np.ndarray:
    """Vectorised :func:`hash_value` for float64 values (integral ones hash as ints)."""
    a = a.astype(np.float64, copy=False)
    integral = np.isfinite(a) & (a == np.floor(a)) & (np.abs(a) < 2.0**53)
    out = np.empty(a.shape, dtype=np.uint64)
    out[integral] = hash_int_array(a[integral].astype(np.int64))
    rest = ~integral
    out[rest] = _splitmix64_np(a[rest].view(np.uint64) ^ np.uint64(_FLOAT_TAG))
    return out


def combine_hashes(columns: Sequence[np.ndarray]) -> np.ndarray:
    """Order-sensitive hash of tuples, one column of hashes per tuple position."""
    h = np.full(len(columns[0]), np.uint64(len(columns)), dtype=np.uint64)
    with np.errstate(over="ignore"):
        for col in columns:
            h = _splitmix64_np(h * np.uint64(31) ^ col)
    return h


def combine_hash(parts: Sequence[int]) -> int:
    """Scalar :func:`combine_hashes`."""
    h = len(parts)
    for p in parts:
        h = splitmix64(((h * 31) & MASK64) ^ p)
    return h


def sorted_unique(a: np.ndarray) -> np.ndarray:
    """Sorted distinct values (sort-based; much faster than ``np.unique`` on uint64)."""
    if len(a) == 0:
        return np.empty(0, dtype=np.uint64)
    s = np.sort(a.astype(np.uint64, copy=False))
    keep = np.empty(len(s), dtype=bool)
    keep[0] = True
    np.not_equal(s[1:], s[:-1], out=keep[1:])
    return s[keep]


def merge_sorted_unique(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Sorted distinct values of two sorted distinct arrays: a stable sort of their concatenation finds the two
    runs and merges them in linear time (about 20 times faster than sorting them afresh at a million values)."""
    if len(a) == 0 or len(b) == 0:
        return (b if len(a) == 0 else a).astype(np.uint64, copy=False)
    s = np.concatenate([a, b]).astype(np.uint64, copy=False)
    s.sort(kind="stable")  # in place: no second copy of a large set
    keep = np.empty(len(s), dtype=bool)
    keep[0] = True
    np.not_equal(s[1:], s[:-1], out=keep[1:])
    return s if bool(keep.all()) else s[keep]


def smallest_distinct(a: np.ndarray, k: int) -> np.ndarray:
    """The ``k`` smallest distinct hashes, sorted, without sorting all of ``a``: hashes are uniform, so the
    values below a threshold about ``8k / len(a)`` of the way up hold them unless most values repeat; then the
    distinct values are few and found by hashing (Arrow's ``unique``) rather than by a sort of every value."""
    a = a.astype(np.uint64, copy=False)
    if len(a) <= 8 * k:
        return sorted_unique(a)[:k]
    t = np.uint64(min(MASK64, int(MASK64 * (8 * k / len(a)))))
    head = sorted_unique(a[a <= t])
    if len(head) >= k:
        return head[:k]  # every value up to the threshold was kept, so the k smallest distinct ones are there
    import pyarrow as pa
    import pyarrow.compute as pc

    distinct = np.asarray(pc.unique(pa.array(a)).to_numpy(zero_copy_only=False), dtype=np.uint64)
    return np.sort(distinct)[:k]


def _pack(a: np.ndarray) -> str:
    return base64.b64encode(a.astype("<u8").tobytes()).decode("ascii")


def _unpack(s: str) -> np.ndarray:
    return np.frombuffer(base64.b64decode(s), dtype="<u8").astype(np.uint64)


def fold_text(s: str) -> str:
    """The case- and surrounding-space-insensitive form of a code (``" alfki"`` -> ``"ALFKI"``)."""
    return s.strip().upper()
