"""Profiles compare values only within one kind (contract/value_order.py): a column mixing numbers, number-like
text and words gives a profile (no TypeError), merges stay commutative and associative, and the ranges hold
numbers and strings respectively."""

from __future__ import annotations

import math
from decimal import Decimal
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from esc.contract.field_profile import FieldProfile
from esc.contract.value_order import lower, number, upper

mixed = st.lists(
    st.one_of(
        st.none(),
        st.integers(-(10**30), 10**30),
        st.floats(allow_nan=True, allow_infinity=True),
        st.sampled_from(
            ["1e5", "-2.5E-3", "inf", "NaN", "abc", "007", "17", "17.50", "2020-01-01", "", "true"]
        ),
        st.booleans(),
        st.decimals(allow_nan=False, allow_infinity=False, places=3),
    ),
    max_size=30,
)


def _sig(p: FieldProfile) -> dict[str, Any]:
    d = p.to_dict()
    d.pop("examples")  # representatives of equal canonical values may be either spelling
    d.pop("top")
    return d


@settings(max_examples=150, deadline=None)
@given(mixed, mixed, mixed)
def test_mixed_values_profile_and_merge_in_any_order(a: list[Any], b: list[Any], c: list[Any]) -> None:
    pa, pb, pc = (FieldProfile.of("v", xs) for xs in (a, b, c))
    left, right = pa.merge(pb).merge(pc), pa.merge(pb.merge(pc))
    assert _sig(left) == _sig(right) == _sig(pc.merge(pb).merge(pa))
    whole = FieldProfile.of("v", [*a, *b, *c])
    for p in (left, whole):
        assert p.num_min is None or (isinstance(p.num_min, int | float) and not math.isnan(p.num_min))
        assert p.num_max is None or (isinstance(p.num_max, int | float) and not math.isnan(p.num_max))
        assert p.str_min is None or isinstance(p.str_min, str)
    assert (left.num_min, left.num_max, left.str_min, left.str_max) == (
        whole.num_min,
        whole.num_max,
        whole.str_min,
        whole.str_max,
    )


def test_number_reads_exponents_and_refuses_nan_and_words() -> None:
    assert number("1e5") == 100000 and number("-2.5E-3") == -0.0025
    assert number(Decimal("2.50")) == 2.5 and number(7) == 7
    assert number(float("nan")) is None and number("abc") is None and number(True) is None
    assert number(float("inf")) == float("inf")


def test_lower_and_upper_order_kinds_instead_of_failing() -> None:
    assert lower(3, "a") == 3 and lower("a", 3) == 3 and upper(3, "a") == "a" and upper("a", 3) == "a"
    assert lower(None, "x") == "x" and upper(2, None) == 2 and lower(2.5, 1) == 1
