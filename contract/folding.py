"""Case folding of codes for the folded sketches of a field profile: ``ALFKI`` and ``alfki`` (or ``" alfki"``)
are one code under ``fold_text``, so a foreign key whose codes were re-cased in one source is still found.

Only short strings without inner spaces (codes) that folding changes are folded; prose and names are compared
as they are. :func:`folded_sketches` folds one batch's distinct values; a caller that measured the values
vectorised (the columnar path) passes a :class:`FoldHint` saying which groups may change at all and, where it
could tell, their folded hash, so the Python loop reads only the few values it could not settle.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from esc.contract.hashing import _hash_str, fold_text, hash_value, sorted_unique
from esc.contract.semantic import physical_of
from esc.contract.sketches import BottomK, ExactSet

FOLD_MAX_CHARS = 24
"""Only strings this short are folded (codes)."""
_NUMERIC_FIRST = frozenset("-0123456789")


def fold_hash(t: str) -> int:
    """``hash_value`` of a folded code (a string: only one starting with a digit or '-' may read as a number)."""
    if t and t[0] in _NUMERIC_FIRST:
        return hash_value(t) or 0
    return _hash_str(t)


@dataclass(frozen=True)
class FoldHint:
    """Per group of a batch: ``may`` (the value may change under folding: a superset), ``known`` (it does, and
    qualifies as a code: its folded hash is ``hashes``)."""

    may: np.ndarray
    known: np.ndarray
    hashes: np.ndarray

    def reorder(self, order: np.ndarray) -> FoldHint:
        return FoldHint(self.may[order], self.known[order], self.hashes[order])

    def reduce(self, starts: np.ndarray, ends: np.ndarray) -> FoldHint:
        """Groups ``starts[g]:ends[g]`` merged into one (the same canonical value in several groups): it may
        change if any member may; a merged group's fold is left to the loop (its representative decides)."""
        return FoldHint(
            np.logical_or.reduceat(self.may, starts),
            np.logical_and.reduceat(self.known, starts) & (ends - starts == 1),
            self.hashes[starts],
        )


def folded_sketches(
    sh: np.ndarray,
    order: np.ndarray,
    reps: Sequence[Any],
    exact_cap: int,
    sample_k: int,
    hint: FoldHint | None = None,
) -> dict[str, Any]:
    """The folded sketches (``folded_exact``, ``folded_sample``) of one batch's distinct hashes ``sh`` (group
    ``i`` has representative ``reps[order[i]]``), or nothing when folding changes none of them. ``hint`` is in
    the order of ``sh``."""
    fh = sh.copy()
    changed = False
    todo = range(len(sh)) if hint is None else np.flatnonzero(hint.may & ~hint.known).tolist()
    for i in todo:
        r = reps[int(order[i])]
        if not isinstance(r, str) or len(r) > FOLD_MAX_CHARS:
            continue
        t = fold_text(r)
        if t != r and not any(ch.isspace() for ch in t) and physical_of(r) == "string":
            fh[i] = fold_hash(t)
            changed = True
    if hint is not None and bool(hint.known.any()):
        fh[hint.known] = hint.hashes[hint.known]
        changed = True
    if not changed:
        return {}
    u = sorted_unique(fh)
    return {
        "folded_exact": ExactSet(exact_cap, u if len(u) <= exact_cap else None),
        "folded_sample": BottomK(sample_k, u[:sample_k]),
    }
