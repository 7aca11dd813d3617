"""Mergeable sketches with bounded memory: HyperLogLog, exact-while-small hash sets, bottom-k (KMV) samples and
containment between columns. Hashing is ``esc.contract.hashing``; top values and examples are
``esc.contract.frequent`` (both re-exported here).

Every sketch is an immutable value: ``merge`` returns a new sketch and never touches its inputs, so merges can
be tested for commutativity and associativity.
"""

from __future__ import annotations

import base64
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from esc.contract.frequent import Examples, TopK, representative
from esc.contract.hashing import (
    DEC_RE,
    INT_RE,
    MASK64,
    _hash_str,
    _pack,
    _unpack,
    combine_hash,
    combine_hashes,
    fold_text,
    hash_float_array,
    hash_int_array,
    hash_value,
    hash_values,
    merge_sorted_unique,
    smallest_distinct,
    sorted_unique,
    splitmix64,
)

__all__ = [
    "DEC_RE",
    "INT_RE",
    "MASK64",
    "BottomK",
    "Containment",
    "ExactSet",
    "Examples",
    "HyperLogLog",
    "TopK",
    "_hash_str",
    "combine_hash",
    "combine_hashes",
    "containment",
    "fold_text",
    "hash_float_array",
    "hash_int_array",
    "hash_value",
    "hash_values",
    "merge_sorted_unique",
    "representative",
    "smallest_distinct",
    "sorted_unique",
    "splitmix64",
]

# --------------------------------------------------------------------------------------------------------------
# HyperLogLog


def _clz64(x: np.ndarray) -> np.ndarray:
    """Leading zero count of uint64 values (64 for zero): the bit length of each 32-bit half from the exponent
    ``frexp`` gives (a 32-bit integer is exact in a float64), six times faster than shifting in steps."""
    x = x.astype(np.uint64, copy=False)
    hi = np.frexp((x >> np.uint64(32)).astype(np.float64))[1].astype(np.int64)
    lo = np.frexp((x & np.uint64(0xFFFFFFFF)).astype(np.float64))[1].astype(np.int64)
    return 64 - np.where(hi > 0, hi + 32, lo)


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
        u = merge_sorted_unique(self.hashes, other.hashes)
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
        return cls(k, smallest_distinct(hashes, k))

    def merge(self, other: BottomK) -> BottomK:
        k = min(self.k, other.k)
        return BottomK(k, merge_sorted_unique(self.hashes, other.hashes)[:k])

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
