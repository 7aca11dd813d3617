"""Frequent values (Misra-Gries top-k) and deterministic examples: mergeable, bounded, JSON-able."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any


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
