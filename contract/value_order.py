"""How profile values are compared: only within one kind, so a column mixing numbers and text never compares a
number with a string (``'<' not supported between 'str' and 'int'`` aborted whole ingests).

``num_min``/``num_max`` hold numbers and ``str_min``/``str_max`` strings (see :func:`number`); should a stored
profile still hold a stray value of another kind, :func:`lower` and :func:`upper` order kinds (numbers, then
strings, then anything else by its text) instead of failing, and stay commutative and associative.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from esc.contract.semantic import canonical


def _key(v: Any) -> tuple[int, Any]:
    if isinstance(v, int | float | Decimal):
        return (0, v)
    if isinstance(v, str):
        return (1, v)
    return (2, repr(v))


def lower(a: Any, b: Any) -> Any:
    """The smaller of two values (None is no value)."""
    if a is None:
        return b
    if b is None:
        return a
    return a if _key(a) <= _key(b) else b


def upper(a: Any, b: Any) -> Any:
    """The larger of two values (None is no value)."""
    if a is None:
        return b
    if b is None:
        return a
    return a if _key(a) >= _key(b) else b


def number(raw: Any) -> int | float | None:
    """A value typed int, float or decimal as a number for ranges: ``"1e5"`` is 100000.0; None for what is not a
    finite number (NaN has no place in an order; an infinity does)."""
    v = canonical(raw)
    if isinstance(v, str):
        try:
            v = float(v)
        except ValueError:
            return None
    if isinstance(v, Decimal):
        v = float(v)
    if isinstance(v, bool) or not isinstance(v, int | float):
        return None
    if isinstance(v, float) and math.isnan(v):
        return None
    return v


def add_counts(a: Mapping[str, int], b: Mapping[str, int]) -> dict[str, int]:
    out = dict(a)
    for k, v in b.items():
        out[k] = out.get(k, 0) + v
    return dict(sorted(out.items()))
