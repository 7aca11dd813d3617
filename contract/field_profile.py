"""Profile of one field: counts, types, hints, ranges, lengths and sketches; mergeable, bounded, JSON-able.

A :class:`FieldProfile` is built from a batch of values (:meth:`FieldProfile.of`) or from already-grouped
arrays (:func:`build_from_groups`, used by the columnar path) and combined with :meth:`FieldProfile.merge`,
which returns a new profile. Both builders end in the same code, so a profile is the same whichever path made it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from esc.contract import histogram
from esc.contract.aggregates import Aggregates, FoldedReps, group_values
from esc.contract.folding import FoldHint, folded_sketches
from esc.contract.sketches import BottomK, ExactSet, Examples, HyperLogLog, TopK
from esc.contract.typing import PhysicalType, widen
from esc.contract.value_order import add_counts, lower, upper


@dataclass(frozen=True)
class Caps:
    """Memory bounds of one profile."""

    exact: int = 4096  # exact distinct set per field, then HLL only
    combo: int = 4096  # exact set of hashed tuples per key-candidate pair of columns
    sample_k: int = 512  # bottom-k hashes kept per field and combo (containment)
    top_k: int = 32  # Misra-Gries counters
    examples: int = 5
    hll_p: int = 12


DEFAULT_CAPS = Caps()


@dataclass(frozen=True, eq=False)
class FieldProfile:
    name: str
    path: str
    position: int  # smallest column index seen
    nonnull: int
    types: Mapping[str, int]  # physical type -> count of non-null values
    hints: Mapping[str, int]  # value hint (email, url, phone, percent, money, year) -> count
    num_min: float | None
    num_max: float | None
    str_min: str | None
    str_max: str | None
    len_min: int | None  # over string/text values
    len_max: int | None
    len_sum: int
    str_count: int
    words_sum: int
    hll: HyperLogLog
    exact: ExactSet
    sample: BottomK
    top: TopK
    examples: Examples
    caps: Caps = field(default=DEFAULT_CAPS, compare=False)
    folded_exact: ExactSet | None = None  # values under fold_text (codes), when folding changed any of them
    folded_sample: BottomK | None = None
    num_hist: Mapping[int, int] = field(default_factory=dict)  # numeric values on a log grid (contract/histogram.py)

    # ---------------------------------------------------------------------------------------------- building
    @classmethod
    def empty(
        cls, name: str, path: str | None = None, position: int = 0, caps: Caps = DEFAULT_CAPS
    ) -> FieldProfile:
        return build_from_groups(
            name, path or name, position, Aggregates(), [], np.empty(0, np.uint64), [], caps=caps
        )

    @classmethod
    def of(
        cls,
        name: str,
        values: Iterable[Any],
        path: str | None = None,
        position: int = 0,
        caps: Caps = DEFAULT_CAPS,
    ) -> FieldProfile:
        """Profile of a batch of raw values as readers deliver them (None is a null)."""
        raw_counts: dict[Any, int] = {}
        unhashable: list[Any] = []
        for v in values:
            if v is None:
                continue
            try:
                raw_counts[(type(v), v)] = raw_counts.get((type(v), v), 0) + 1
            except TypeError:  # lists and dicts (json values)
                unhashable.append(v)
        pairs = [*((tv[1], n) for tv, n in raw_counts.items()), *((u, 1) for u in unhashable)]
        return cls.of_counts(name, pairs, path, position, caps)

    @classmethod
    def of_counts(
        cls,
        name: str,
        pairs: Iterable[tuple[Any, int]],
        path: str | None = None,
        position: int = 0,
        caps: Caps = DEFAULT_CAPS,
    ) -> FieldProfile:
        """Profile of values given with their counts (``(value, n)``; the same as ``of`` on the expanded list)."""
        agg, weights, hashes, reps = group_values(pairs)
        return build_from_groups(name, path or name, position, agg, weights, hashes, reps, caps=caps)

    def observe(self, values: Iterable[Any]) -> FieldProfile:
        """A new profile: this one merged with the profile of ``values``."""
        return self.merge(FieldProfile.of(self.name, values, self.path, self.position, self.caps))

    # ---------------------------------------------------------------------------------------------- merging
    def merge(self, other: FieldProfile) -> FieldProfile:
        if other.name != self.name:
            raise ValueError(f"cannot merge profiles of different fields: {self.name!r} and {other.name!r}")
        return FieldProfile(
            name=self.name,
            path=min(self.path, other.path),
            position=min(self.position, other.position),
            nonnull=self.nonnull + other.nonnull,
            types=add_counts(self.types, other.types),
            hints=add_counts(self.hints, other.hints),
            num_min=lower(self.num_min, other.num_min),
            num_max=upper(self.num_max, other.num_max),
            str_min=lower(self.str_min, other.str_min),
            str_max=upper(self.str_max, other.str_max),
            len_min=lower(self.len_min, other.len_min),
            len_max=upper(self.len_max, other.len_max),
            len_sum=self.len_sum + other.len_sum,
            str_count=self.str_count + other.str_count,
            words_sum=self.words_sum + other.words_sum,
            hll=self.hll.merge(other.hll),
            exact=self.exact.merge(other.exact),
            sample=self.sample.merge(other.sample),
            top=self.top.merge(other.top),
            examples=self.examples.merge(other.examples),
            caps=self.caps,
            **_merge_folded(self, other),
            num_hist=histogram.merge(self.num_hist, other.num_hist),
        )

    # ---------------------------------------------------------------------------------------------- reading
    @property
    def physical(self) -> PhysicalType:
        t: PhysicalType = "null"
        for name in self.types:
            t = widen(t, name)  # type: ignore[arg-type]
        return t

    @property
    def distinct(self) -> float:
        """Distinct non-null values: exact while small, else the HLL estimate (never above nonnull)."""
        if self.exact.hashes is not None:
            return float(len(self.exact.hashes))
        return min(self.hll.estimate(), float(self.nonnull))

    def folded(self) -> tuple[ExactSet, BottomK]:
        """Exact set and sample of the values under ``fold_text`` (the raw ones when folding changes none)."""
        if self.folded_exact is None or self.folded_sample is None:
            return self.exact, self.sample
        return self.folded_exact, self.folded_sample

    @property
    def distinct_exact(self) -> bool:
        return self.exact.hashes is not None

    @property
    def uniqueness(self) -> float:
        return self.distinct / self.nonnull if self.nonnull else 0.0

    @property
    def mean_length(self) -> float | None:
        return self.len_sum / self.str_count if self.str_count else None

    @property
    def mean_words(self) -> float | None:
        return self.words_sum / self.str_count if self.str_count else None

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, FieldProfile):
            return False
        return self.to_dict() == other.to_dict()

    # ---------------------------------------------------------------------------------------------- storage
    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "path": self.path,
            "position": self.position,
            "nonnull": self.nonnull,
            "types": dict(self.types),
            "hints": dict(self.hints),
            "num_min": self.num_min,
            "num_max": self.num_max,
            "str_min": self.str_min,
            "str_max": self.str_max,
            "len_min": self.len_min,
            "len_max": self.len_max,
            "len_sum": self.len_sum,
            "str_count": self.str_count,
            "words_sum": self.words_sum,
            "hll": self.hll.to_dict(),
            "exact": self.exact.to_dict(),
            "sample": self.sample.to_dict(),
            "top": self.top.to_dict(),
            "examples": self.examples.to_dict(),
            **(
                {}
                if self.folded_exact is None or self.folded_sample is None
                else {
                    "folded": {"exact": self.folded_exact.to_dict(), "sample": self.folded_sample.to_dict()}
                }
            ),
            "num_hist": histogram.to_list(self.num_hist),
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], caps: Caps = DEFAULT_CAPS) -> FieldProfile:
        return cls(
            name=d["name"],
            path=d["path"],
            position=int(d["position"]),
            nonnull=int(d["nonnull"]),
            types=dict(d["types"]),
            hints=dict(d["hints"]),
            num_min=d["num_min"],
            num_max=d["num_max"],
            str_min=d["str_min"],
            str_max=d["str_max"],
            len_min=d["len_min"],
            len_max=d["len_max"],
            len_sum=int(d["len_sum"]),
            str_count=int(d["str_count"]),
            words_sum=int(d["words_sum"]),
            hll=HyperLogLog.from_dict(d["hll"]),
            exact=ExactSet.from_dict(d["exact"]),
            sample=BottomK.from_dict(d["sample"]),
            top=TopK.from_dict(d["top"]),
            examples=Examples.from_dict(d["examples"]),
            caps=caps,
            folded_exact=ExactSet.from_dict(d["folded"]["exact"]) if d.get("folded") else None,
            folded_sample=BottomK.from_dict(d["folded"]["sample"]) if d.get("folded") else None,
            num_hist=histogram.from_list(d.get("num_hist")),  # absent in profiles saved before it existed
        )


def build_from_groups(
    name: str,
    path: str,
    position: int,
    agg: Aggregates,
    weights: Sequence[int] | np.ndarray,
    hashes: np.ndarray,
    reps: Sequence[Any],
    *,
    caps: Caps = DEFAULT_CAPS,
    fold_hint: FoldHint | None = None,
) -> FieldProfile:
    """The one place a profile is made, from the aggregates and one group per canonical value: ``hashes[i]``
    is the group's canonical hash, ``weights[i]`` its count and ``reps[i]`` its canonical representative (only
    the few kept as top values and examples are ever read). ``fold_hint`` (per group, optional: what a caller
    measured vectorised) spares the folded sketches a Python loop over every distinct value."""
    h = hashes.astype(np.uint64, copy=False)
    order = np.argsort(h, kind="stable")
    sh = h[order]
    counts = np.asarray(weights, dtype=np.int64)[order]
    hint = None if fold_hint is None else fold_hint.reorder(order)
    if len(sh) > 1 and bool((sh[1:] == sh[:-1]).any()):
        # the same canonical value in several groups (several physical types, or rows not deduplicated):
        # one group per distinct hash; a representative is folded only for the few groups that are read
        starts = np.concatenate([[0], np.nonzero(sh[1:] != sh[:-1])[0] + 1])
        ends = np.concatenate([starts[1:], [len(sh)]])
        counts = np.add.reduceat(counts, starts)
        sh = sh[starts]
        reps = FoldedReps(reps, order, starts, ends)
        order = np.arange(len(sh))
        if hint is not None:
            hint = hint.reduce(starts, ends)
    top_items: list[tuple[int, Any, int]] = []
    if len(sh):
        k = caps.top_k
        if len(sh) > k:
            cut = int(np.partition(counts, len(counts) - 1 - k)[len(counts) - 1 - k])
            keep = np.nonzero(counts > cut)[0]
        else:
            cut, keep = 0, np.arange(len(sh))
        top_items = [(int(sh[i]), reps[int(order[i])], int(counts[i]) - cut) for i in keep]
    ex_items = tuple((int(sh[i]), reps[int(order[i])]) for i in range(min(caps.examples, len(sh))))
    return FieldProfile(
        name=name,
        path=path,
        position=position,
        nonnull=agg.nonnull,
        types=dict(sorted(agg.types.items())),
        hints=dict(sorted(agg.hints.items())),
        num_min=agg.num_min,
        num_max=agg.num_max,
        str_min=agg.str_min,
        str_max=agg.str_max,
        len_min=agg.len_min,
        len_max=agg.len_max,
        len_sum=agg.len_sum,
        str_count=agg.str_count,
        words_sum=agg.words_sum,
        hll=HyperLogLog.empty(caps.hll_p).add(sh),
        exact=ExactSet(caps.exact, sh if len(sh) <= caps.exact else None),
        sample=BottomK(caps.sample_k, sh[: caps.sample_k]),
        top=TopK(caps.top_k, tuple(top_items)),
        examples=Examples(caps.examples, ex_items),
        **folded_sketches(sh, order, reps, caps.exact, caps.sample_k, hint) if "string" in agg.types else {},
        caps=caps,
        num_hist=dict(agg.num_hist),
    )


def _merge_folded(a: FieldProfile, b: FieldProfile) -> dict[str, Any]:
    if a.folded_exact is None and b.folded_exact is None:
        return {}
    (ea, sa), (eb, sb) = a.folded(), b.folded()
    return {"folded_exact": ea.merge(eb), "folded_sample": sa.merge(sb)}
