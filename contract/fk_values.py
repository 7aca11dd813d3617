"""Evidence from values for a foreign key whose column is named unlike its target, and the guards against the
classic false inclusion dependencies.

A column contained in a key is not yet a reference to it: small integer domains, booleans, years and dense
1..N ids are contained in every other 1..N id. A column qualifies by its values alone only when all hold:

* the target key has at least ``MIN_TARGET_DISTINCT`` values and the column at least ``MIN_CHILD_DISTINCT``
  (a reference to a table of five rows cannot be told from a small code by values);
* *text codes*: the column's values have the key's shape (no longer than ``MAX_CODE_CHARS``, lengths within the
  key's);
* *integers*: the values are not mostly years, and they are *spread over the key's range* like a sample of its
  values would be: the room left below the column's minimum and above its maximum, together, is at most a few
  times what a random sample of that many of the key's values leaves (``2 * range / (m + 1)`` for ``m`` values).
  A measure (a length 46..185, a quantity 1..50) is a dense block somewhere inside a longer id range, which a
  sample of ids almost never is: a column spanning less than half the key's range, or holding every value of a
  block shorter than 90 % of it, does not qualify;
* more of the column's distinct values are contained than the floor of ``VALUES_MIN`` asks, and no other target
  passes all of this equally well (then the values cannot say which, and nothing is inferred).

Containment of text codes is also computed on case-folded values (``fold_text``), so codes upper-cased in one
source and lower-cased in another still match; the evidence then says ``case_insensitive`` and ``match: casefold``.
"""

from __future__ import annotations

from typing import Any

from esc.contract.field_profile import FieldProfile
from esc.contract.sketches import Containment, containment

VALUES_ONLY = 0.55  # name score of a values-only candidate: any name evidence wins over it
VALUES_MIN = 0.9  # containment needed when only the values say so
MIN_TARGET_DISTINCT = 20
MIN_CHILD_DISTINCT = 3
MAX_CODE_CHARS = 24
SPREAD_FACTOR = 3.0
MIN_SPAN_SHARE = 0.5
DENSE_SPAN_SHARE = 0.9
YEAR_SHARE = 0.5
STRINGY = ("string", "text")


def value_evidence(child: FieldProfile, key: FieldProfile) -> tuple[float, str] | None:
    """(score, rule) when the values of ``child`` may reference ``key`` with no name evidence, else None."""
    if key.distinct < MIN_TARGET_DISTINCT or child.distinct < MIN_CHILD_DISTINCT or child.nonnull < 5:
        return None
    if child.physical == "string" and key.physical == "string":
        if None in (child.len_min, child.len_max, key.len_min, key.len_max):
            return None
        assert child.len_min is not None and child.len_max is not None
        assert key.len_min is not None and key.len_max is not None
        if key.len_max > MAX_CODE_CHARS or child.len_min < key.len_min or child.len_max > key.len_max:
            return None
        return VALUES_ONLY, "values_only"
    if child.physical == "int" and key.physical == "int":
        if child.hints.get("year", 0) >= YEAR_SHARE * child.nonnull > 0 and not key.hints.get("year"):
            return None
        if not spread_like_sample(child, key):
            return None
        return VALUES_ONLY, "values_only"
    return None


def spread_like_sample(child: FieldProfile, key: FieldProfile) -> bool:
    """Whether the integer values of ``child`` spread over ``key``'s range as a sample of its values would."""
    lo, hi, klo, khi = child.num_min, child.num_max, key.num_min, key.num_max
    if lo is None or hi is None or klo is None or khi is None:
        return False
    span = float(khi) - float(klo) + 1
    own = float(hi) - float(lo) + 1
    m = max(child.distinct, 1.0)
    if own < MIN_SPAN_SHARE * span:
        return False  # a narrow band of the key's range: a sample of its values would spread wider
    if child.distinct_exact and m >= own and own < DENSE_SPAN_SHARE * span:
        return False  # every value of a block inside a longer range: a run of measures, not a sample of ids
    room = max(0.0, float(lo) - float(klo)) + max(0.0, float(khi) - float(hi))
    return room <= SPREAD_FACTOR * 2 * span / (m + 1) + 2


def spread_fit(child: FieldProfile, key: FieldProfile) -> float:
    """How tightly the key fits the column: its distinct values over the key's (1 = every key value used; a
    key with more values is a less likely parent of the same sample)."""
    return min(1.0, child.distinct / key.distinct) if key.distinct else 0.0


def field_containment(child: FieldProfile, key: FieldProfile) -> tuple[Containment, bool]:
    """Containment of ``child``'s values in ``key``'s, and whether it took case folding to find it."""
    c = containment(child.exact, child.sample, key.exact, key.sample)
    if c.ratio >= 1.0 or child.physical not in STRINGY or key.physical not in STRINGY:
        return c, False
    if child.folded_exact is None and key.folded_exact is None:
        return c, False
    f = containment(*child.folded(), *key.folded())
    if f.ratio > c.ratio and f.checked >= min(c.checked, 1):
        return f, True
    return c, False


def folded_evidence(folded: bool) -> dict[str, Any]:
    """What the foreign key's evidence says of a match found on case-folded values (writers join on it:
    ``esc.contract.fk_match``)."""
    return {"case_insensitive": True, "match": "casefold"} if folded else {}
