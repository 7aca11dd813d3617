"""The non-sketch part of a field profile: counts, types, hints, ranges and lengths (:class:`Aggregates`), and
the grouping of raw values by canonical hash that both profiling paths start from (:func:`group_values`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from esc.contract import histogram
from esc.contract.semantic import canonical, is_year, physical_of, string_hints
from esc.contract.sketches import hash_value, representative
from esc.contract.value_order import add_counts, lower, number, upper


def group_values(pairs: Iterable[tuple[Any, int]]) -> tuple[Aggregates, list[int], np.ndarray, list[Any]]:
    """Raw values with counts -> aggregates, and one group per (canonical hash, physical type)."""
    groups: dict[tuple[int, str], list[Any]] = {}  # (hash, physical type) -> [raw value, count, rep]
    for v, n in pairs:
        h = hash_value(v)
        if h is None:
            continue
        key = (h, physical_of(v))
        g = groups.get(key)
        if g is None:
            groups[key] = [v, n, canonical(v)]
        else:
            g[1] += n
            g[2] = representative(g[2], canonical(v))
    items = list(groups.items())
    weights = [g[1] for _, g in items]
    agg = classify([g[0] for _, g in items], weights, [k[1] for k, _ in items])
    return agg, weights, np.array([k[0] for k, _ in items], dtype=np.uint64), [g[2] for _, g in items]


class FoldedReps(Sequence[Any]):
    def __init__(self, reps: Sequence[Any], order: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> None:
        self.reps, self.order, self.starts, self.ends = reps, order, starts, ends

    def __len__(self) -> int:
        return len(self.starts)

    def __getitem__(self, g: int) -> Any:  # type: ignore[override]
        a, b = int(self.starts[g]), int(self.ends[g])
        r = self.reps[int(self.order[a])]
        for j in range(a + 1, b):
            r = representative(r, self.reps[int(self.order[j])])
        return r


@dataclass(frozen=True)
class Aggregates:
    """The non-sketch part of a field profile: counts, types, hints, ranges and lengths."""

    nonnull: int = 0
    types: Mapping[str, int] = field(default_factory=dict)
    hints: Mapping[str, int] = field(default_factory=dict)
    num_min: Any = None
    num_max: Any = None
    str_min: str | None = None
    str_max: str | None = None
    len_min: int | None = None
    len_max: int | None = None
    len_sum: int = 0
    str_count: int = 0
    words_sum: int = 0
    num_hist: Mapping[int, int] = field(default_factory=dict)  # numeric values on a log grid (contract/histogram.py)

    def merge(self, o: Aggregates) -> Aggregates:
        return Aggregates(
            self.nonnull + o.nonnull,
            add_counts(self.types, o.types),
            add_counts(self.hints, o.hints),
            lower(self.num_min, o.num_min),
            upper(self.num_max, o.num_max),
            lower(self.str_min, o.str_min),
            upper(self.str_max, o.str_max),
            lower(self.len_min, o.len_min),
            upper(self.len_max, o.len_max),
            self.len_sum + o.len_sum,
            self.str_count + o.str_count,
            self.words_sum + o.words_sum,
            histogram.merge(self.num_hist, o.num_hist),
        )


def classify(raws: Sequence[Any], weights: Sequence[int], phys: Sequence[str] | None = None) -> Aggregates:
    """Aggregates of raw values with weights (``phys``: their physical types, when already known)."""
    types: dict[str, int] = {}
    hints: dict[str, int] = {}
    num_min: Any = None
    num_max: Any = None
    str_min: str | None = None
    str_max: str | None = None
    len_min: int | None = None
    len_max: int | None = None
    len_sum = str_count = words_sum = 0
    nonnull, numbers = 0, list[tuple[Any, int]]()
    for i, (raw, wt) in enumerate(zip(raws, weights, strict=True)):
        nonnull += wt
        t = phys[i] if phys is not None else physical_of(raw)
        types[t] = types.get(t, 0) + wt
        if t in ("int", "float", "decimal"):
            cv = number(raw)
            num_min = lower(num_min, cv)
            num_max = upper(num_max, cv)
            numbers.append((cv, wt))
            if t == "int" and cv is not None and is_year(cv):
                hints["year"] = hints.get("year", 0) + wt
        elif isinstance(raw, str):
            if t in ("string", "text"):
                n = len(raw)
                len_min, len_max = lower(len_min, n), upper(len_max, n)
                len_sum += n * wt
                str_count += wt
                words_sum += len(raw.split()) * wt
                for hint in string_hints(raw):
                    hints[hint] = hints.get(hint, 0) + wt
            if t in ("string", "text", "date", "datetime"):
                str_min, str_max = lower(str_min, raw), upper(str_max, raw)
    return Aggregates(nonnull, dict(sorted(types.items())), dict(sorted(hints.items())), num_min, num_max,
                      str_min, str_max, len_min, len_max, len_sum, str_count, words_sum,
                      histogram.of_pairs(numbers))  # fmt: skip
