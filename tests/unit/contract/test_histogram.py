"""The numeric histogram of field profiles (contract/histogram.py): a fixed log grid, so merging is exact; the scalar
and vectorised bucketing agree; PSI and KS see a shift and stay quiet on the same distribution."""

from __future__ import annotations

import math
import random

import numpy as np
import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from esc.contract import histogram
from esc.contract.field_profile import FieldProfile
from esc.contract.profile_arrow import profile_batch

finite = st.floats(allow_nan=False, allow_infinity=False)


@given(st.lists(finite, min_size=1, max_size=200))
@settings(max_examples=200, deadline=None)
def test_vectorised_buckets_equal_the_scalar_ones(xs: list[float]) -> None:
    expect: dict[int, int] = {}
    for x in xs:
        histogram.add(expect, x)
    assert histogram.of_array(np.array(xs)) == dict(sorted(expect.items()))


@given(finite, finite)
def test_bucket_order_follows_value_order(a: float, b: float) -> None:
    ba, bb = histogram.bucket(a), histogram.bucket(b)
    assert ba is not None and bb is not None
    if a < b:
        assert ba <= bb
    assert abs(histogram.lower_edge(ba)) <= abs(a)  # the edge of a bucket nearest zero


def test_non_finite_values_are_not_counted_and_tiny_ones_are_zero() -> None:
    assert histogram.bucket(math.nan) is None and histogram.bucket(math.inf) is None
    assert histogram.of_array(np.array([math.nan, -math.inf, 0.0, 1e-300])) == {0: 2}
    assert histogram.bucket(-3.0) == -(histogram.bucket(3.0) or 0)


@given(st.lists(finite, max_size=50), st.lists(finite, max_size=50), st.lists(finite, max_size=50))
@settings(deadline=None)
def test_merge_is_exact_commutative_and_associative(a: list[float], b: list[float], c: list[float]) -> None:
    ha, hb, hc = (histogram.of_array(np.array(x, dtype=np.float64)) for x in (a, b, c))
    assert histogram.merge(ha, hb) == histogram.merge(hb, ha)
    assert histogram.merge(histogram.merge(ha, hb), hc) == histogram.merge(ha, histogram.merge(hb, hc))
    assert histogram.merge(ha, hb) == histogram.of_array(np.array(a + b, dtype=np.float64))
    assert histogram.subtract(histogram.merge(ha, hb), hb) == {k: v for k, v in ha.items() if v}


def _normal(mean: float, sd: float, n: int, seed: int) -> dict[int, int]:
    rnd = random.Random(seed)
    return histogram.of_array(np.array([rnd.gauss(mean, sd) for _ in range(n)]))


def test_psi_and_ks_are_small_for_the_same_distribution_and_large_for_a_shift() -> None:
    ref = _normal(100, 10, 2000, 1)
    same = _normal(100, 10, 2000, 2)
    shifted = _normal(130, 10, 2000, 3)
    psi_same, psi_shift = histogram.psi(ref, same), histogram.psi(ref, shifted)
    ks_same, ks_shift = histogram.ks(ref, same), histogram.ks(ref, shifted)
    assert psi_same is not None and psi_shift is not None and ks_same is not None and ks_shift is not None
    assert psi_same < 0.1 < 0.25 < psi_shift
    assert ks_same < 0.1 and ks_shift > 0.5
    assert histogram.psi(ref, ref) == 0.0 and histogram.ks(ref, ref) == 0.0
    assert histogram.psi({}, ref) is None and histogram.ks(ref, {}) is None
    above = histogram.of_array(np.full(100, 1e6))  # every value above the reference's range
    assert (histogram.psi(ref, above) or 0) > 5 and histogram.ks(ref, above) == 1.0


def test_record_and_columnar_profiles_hold_the_same_histogram() -> None:
    ints = ["17", "-3", "0", "250000", None, "17"]
    decs = ["12.50", "-0.25", "3", "1e5", None, "7.125"]
    table = pa.table({"i": pa.array([None if v is None else int(v) for v in ints], pa.int64()),
                      "d": pa.array(decs, pa.string())})  # fmt: skip
    columnar = profile_batch("t", table, {"i": "int", "d": "decimal"})
    assert columnar.fields["i"].num_hist == FieldProfile.of("i", ints).num_hist
    record = FieldProfile.of("d", decs)
    assert sum(record.num_hist.values()) == 5  # "1e5" is a float written as text: counted too
    assert FieldProfile.from_dict(record.to_dict()).num_hist == record.num_hist
    old = record.to_dict()
    del old["num_hist"]  # a profile saved before histograms existed still loads
    assert FieldProfile.from_dict(old).num_hist == {}
