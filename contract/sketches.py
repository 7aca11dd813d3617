"""Mergeable sketches with bounded memory: canonical value hashing, HyperLogLog, exact-while-small hash sets,
bottom-k (KMV) samples, Misra-Gries top-k and deterministic examples.

Every sketch is an immutable value: ``merge`` returns a new sketch and never touches its inputs, so merges can
be tested for commutativity and associativity. Values are hashed through one canonical form, so that ``"17"``
from a CSV file, ``17`` from JSON and ``17.0`` from a float column hash alike, and ``"01581"`` (a code with a
leading zero) stays a string. The same hash is computed value by value (:func:`hash_value`) and vectorised
(:func:`hash_int_array`, :func:`hash_float_array`), and the two agree bit for bit.
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
import re
import struct
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
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


def _pack(a: np.ndarray) -> str:
    return base64.b64encode(a.astype("<u8").tobytes()).decode("ascii")


def _unpack(s: str) -> np.ndarray:
    return np.frombuffer(base64.b64decode(s), dtype="<u8").astype(np.uint64)


# --------------------------------------------------------------------------------------------------------------
# HyperLogLog


def _clz64(x: np.ndarray) -> np.ndarray:
    """Leading zero count of uint64 values (64 for zero)."""
    x = x.astype(np.uint64, copy=True)
    n = np.zeros(x.shape, dtype=np.int64)
    for shift in (32, 16, 8, 4, 2, 1):
        top = x >> np.uint64(64 - shift)
        empty = top == 0
        n[empty] += shift
        x[empty] <<= np.uint64(shift)
    n[x == 0] = 64
    return n


@dataclass(frozen=True, eq=False)
class HyperLogLog:
    """HyperLogLog with 2**p one-byte registers (p=12: 4 KiB, standard error about 1.6 %)."""

    p: int
    registers: np.ndarray

    @classmethod
    def empty(cls, p: int = 12) -> HyperLogLog:
        return cls(p, np.zeros(1 << p, dtype=np.uint8))

    def add(self, hashes: np.ndarray) -> HyperLogLog:
        if len(hashes) == 0:
            return self
        h = hashes.astype(np.uint64, copy=False)
        idx = (h >> np.uint64(64 - self.p)).astype(np.int64)
        rest = h << np.uint64(self.p)
        rho = np.minimum(_clz64(rest) + 1, 64 - self.p + 1).astype(np.uint8)
        reg = self.registers.copy()
        np.maximum.at(reg, idx, rho)
        return HyperLogLog(self.p, reg)

    def merge(self, other: HyperLogLog) -> HyperLogLog:
        if other.p != self.p:
            raise ValueError(f"cannot merge HyperLogLog p={self.p} with p={other.p}")
        return HyperLogLog(self.p, np.maximum(self.registers, other.registers))

    def estimate(self) -> float:
        m = 1 << self.p
        alpha = 0.7213 / (1 + 1.079 / m)
        regs = self.registers.astype(np.float64)
        raw = alpha * m * m / float(np.sum(np.exp2(-regs)))
        zeros = int(np.count_nonzero(self.registers == 0))
        if raw <= 2.5 * m and zeros:
            return m * math.log(m / zeros)
        return raw

    @property
    def relative_error(self) -> float:
        return 1.04 / math.sqrt(1 << self.p)

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, HyperLogLog)
            and self.p == other.p
            and bool(np.array_equal(self.registers, other.registers))
        )

    def to_dict(self) -> dict[str, Any]:
        return {"p": self.p, "registers": base64.b64encode(self.registers.tobytes()).decode("ascii")}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> HyperLogLog:
        regs = np.frombuffer(base64.b64decode(d["registers"]), dtype=np.uint8).copy()
        return cls(int(d["p"]), regs)


# --------------------------------------------------------------------------------------------------------------
# Exact set of hashes while small


@dataclass(frozen=True, eq=False)
class ExactSet:
    """The exact set of distinct hashes while it holds at most ``cap`` of them; ``hashes is None`` after.

    Merge keeps the smaller cap, so merging stays associative: the union only ever grows and the cap only ever
    shrinks, so a set that overflowed somewhere overflows in every merge order.
    """

    cap: int
    hashes: np.ndarray | None  # sorted, distinct uint64; None once over cap

    @classmethod
    def empty(cls, cap: int = 4096) -> ExactSet:
        return cls(cap, np.empty(0, dtype=np.uint64))

    @classmethod
    def of(cls, hashes: np.ndarray, cap: int = 4096) -> ExactSet:
        u = sorted_unique(hashes)
        return cls(cap, u if len(u) <= cap else None)

    @property
    def exact(self) -> bool:
        return self.hashes is not None

    def __len__(self) -> int:
        if self.hashes is None:
            raise ValueError("set overflowed its cap: size is unknown")
        return len(self.hashes)

    def merge(self, other: ExactSet) -> ExactSet:
        cap = min(self.cap, other.cap)
        if self.hashes is None or other.hashes is None:
            return ExactSet(cap, None)
        u = sorted_unique(np.concatenate([self.hashes, other.hashes]))
        return ExactSet(cap, u if len(u) <= cap else None)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ExactSet) or self.cap != other.cap:
            return False
        if self.hashes is None or other.hashes is None:
            return self.hashes is None and other.hashes is None
        return bool(np.array_equal(self.hashes, other.hashes))

    def to_dict(self) -> dict[str, Any]:
        return {"cap": self.cap, "hashes": None if self.hashes is None else _pack(self.hashes)}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ExactSet:
        return cls(int(d["cap"]), None if d["hashes"] is None else _unpack(d["hashes"]))


# --------------------------------------------------------------------------------------------------------------
# Bottom-k (KMV) sample of distinct hashes


@dataclass(frozen=True, eq=False)
class BottomK:
    """The ``k`` smallest distinct hashes: a uniform sample of the distinct values, mergeable exactly.

    Used for containment between two columns: a hash of A below B's threshold that is in A ⊆ B must also be in
    B's sample, so the share of such hashes found in B estimates |A ∩ B| / |A| (see :func:`containment`).
    """

    k: int
    hashes: np.ndarray  # sorted, distinct, at most k

    @classmethod
    def empty(cls, k: int = 512) -> BottomK:
        return cls(k, np.empty(0, dtype=np.uint64))

    @classmethod
    def of(cls, hashes: np.ndarray, k: int = 512) -> BottomK:
        return cls(k, sorted_unique(hashes)[:k])

    def merge(self, other: BottomK) -> BottomK:
        k = min(self.k, other.k)
        return BottomK(k, sorted_unique(np.concatenate([self.hashes, other.hashes]))[:k])

    @property
    def full(self) -> bool:
        return len(self.hashes) >= self.k

    @property
    def threshold(self) -> int:
        """Largest hash kept when full (every smaller distinct hash is in the sample), else 2**64-1."""
        return int(self.hashes[-1]) if self.full else MASK64

    def estimate(self) -> float:
        if not self.full:
            return float(len(self.hashes))
        return (self.k - 1) / ((self.threshold + 1) / 2.0**64)

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, BottomK)
            and self.k == other.k
            and bool(np.array_equal(self.hashes, other.hashes))
        )

    def to_dict(self) -> dict[str, Any]:
        return {"k": self.k, "hashes": _pack(self.hashes)}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> BottomK:
        return cls(int(d["k"]), _unpack(d["hashes"]))


@dataclass(frozen=True)
class Containment:
    """Estimated share of A's distinct values that are in B, and how much it rests on."""

    ratio: float
    checked: int  # distinct values of A that could be checked
    exact: bool


def containment(a_exact: ExactSet, a_sample: BottomK, b_exact: ExactSet, b_sample: BottomK) -> Containment:
    """|A ∩ B| / |A| from exact sets where both are exact, else from bottom-k samples.

    Only A's sampled hashes at or below B's threshold can be checked against B's sample; if B's set is exact,
    every hash of A's sample can be checked.
    """
    if a_exact.hashes is not None and b_exact.hashes is not None:
        n = len(a_exact.hashes)
        if n == 0:
            return Containment(0.0, 0, True)
        hit = int(np.count_nonzero(np.isin(a_exact.hashes, b_exact.hashes, assume_unique=True)))
        return Containment(hit / n, n, True)
    sample = a_exact.hashes if a_exact.hashes is not None else a_sample.hashes
    if b_exact.hashes is not None:
        ref = b_exact.hashes
        cand = sample
    else:
        ref = b_sample.hashes
        cand = sample[sample <= np.uint64(b_sample.threshold)]
    if len(cand) == 0:
        return Containment(0.0, 0, False)
    hit = int(np.count_nonzero(np.isin(cand, ref, assume_unique=True)))
    return Containment(hit / len(cand), len(cand), False)


# --------------------------------------------------------------------------------------------------------------
# Top values (Misra-Gries) and examples


def _rep_key(v: Any) -> tuple[str, str]:
    return (type(v).__name__, str(v))


def representative(a: Any, b: Any) -> Any:
    """Deterministic choice between two values with the same canonical hash (commutative)."""
    return a if _rep_key(a) <= _rep_key(b) else b


@dataclass(frozen=True)
class TopK:
    """Misra-Gries frequent items over canonical hashes: exact while at most ``k`` distinct values were seen;
    after that each kept count undercounts by at most n/(k+1). Values are JSON-able representatives."""

    k: int
    items: tuple[tuple[int, Any, int], ...]  # (hash, value, count), sorted by hash

    @classmethod
    def empty(cls, k: int = 32) -> TopK:
        return cls(k, ())

    @classmethod
    def of(cls, counts: dict[int, tuple[Any, int]], k: int = 32) -> TopK:
        return cls(k, ())._with(counts, k)

    def _with(self, counts: dict[int, tuple[Any, int]], k: int) -> TopK:
        if len(counts) > k:
            ordered = sorted((c for _, c in counts.values()), reverse=True)
            cut = ordered[k]
            counts = {h: (v, c - cut) for h, (v, c) in counts.items() if c - cut > 0}
        return TopK(k, tuple(sorted((h, v, c) for h, (v, c) in counts.items())))

    def merge(self, other: TopK) -> TopK:
        counts: dict[int, tuple[Any, int]] = {h: (v, c) for h, v, c in self.items}
        for h, v, c in other.items:
            if h in counts:
                v0, c0 = counts[h]
                counts[h] = (representative(v0, v), c0 + c)
            else:
                counts[h] = (v, c)
        return TopK(min(self.k, other.k), ())._with(counts, min(self.k, other.k))

    def top(self, n: int = 10) -> list[tuple[Any, int]]:
        ranked = sorted(self.items, key=lambda t: (-t[2], _rep_key(t[1])))
        return [(v, c) for _, v, c in ranked[:n]]

    def to_dict(self) -> dict[str, Any]:
        return {"k": self.k, "items": [[str(h), v, c] for h, v, c in self.items]}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> TopK:
        return cls(int(d["k"]), tuple((int(h), v, int(c)) for h, v, c in d["items"]))


@dataclass(frozen=True)
class Examples:
    """The ``k`` distinct values with the smallest hashes: a deterministic, mergeable sample of examples."""

    k: int
    items: tuple[tuple[int, Any], ...]  # sorted by hash

    @classmethod
    def empty(cls, k: int = 5) -> Examples:
        return cls(k, ())

    @classmethod
    def of(cls, pairs: Iterable[tuple[int, Any]], k: int = 5) -> Examples:
        return cls(k, ()).merge(cls(k, tuple(pairs)))

    def merge(self, other: Examples) -> Examples:
        best: dict[int, Any] = {}
        for h, v in (*self.items, *other.items):
            best[h] = representative(best[h], v) if h in best else v
        k = min(self.k, other.k)
        return Examples(k, tuple(sorted(best.items(), key=lambda t: t[0])[:k]))

    def values(self) -> list[Any]:
        return [v for _, v in self.items]

    def to_dict(self) -> dict[str, Any]:
        return {"k": self.k, "items": [[str(h), v] for h, v in self.items]}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Examples:
        return cls(int(d["k"]), tuple((int(h), v) for h, v in d["items"]))
