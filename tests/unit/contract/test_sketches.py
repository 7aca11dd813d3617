"""Sketches: canonical hashing (scalar == vectorised), HLL accuracy, exact-while-small sets, bottom-k
containment, Misra-Gries top-k; every merge commutative and associative."""

from __future__ import annotations

import json
from decimal import Decimal

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from esc.contract.sketches import (
    BottomK,
    ExactSet,
    Examples,
    HyperLogLog,
    TopK,
    combine_hash,
    combine_hashes,
    containment,
    hash_float_array,
    hash_int_array,
    hash_value,
    hash_values,
)


def test_canonical_hash_identifies_text_and_native_numbers() -> None:
    assert hash_value("17") == hash_value(17) == hash_value(17.0) == hash_value("17.00")
    assert hash_value("0.99") == hash_value(0.99) == hash_value(Decimal("0.990"))
    assert hash_value("01581") != hash_value(1581)  # a leading zero makes a code
    assert hash_value("abc") != hash_value("abd")
    assert hash_value(True) != hash_value(1)
    assert hash_value(None) is None
    assert hash_value({"a": 1, "b": [1, 2]}) == hash_value({"b": [1, 2], "a": 1})


@given(st.lists(st.integers(min_value=-(2**63), max_value=2**63 - 1), max_size=50))
def test_int_hash_vectorised_equals_scalar(xs: list[int]) -> None:
    vec = hash_int_array(np.array(xs, dtype=np.int64))
    assert vec.tolist() == [hash_value(x) for x in xs]


@given(st.lists(st.floats(allow_nan=False, allow_infinity=False, width=64), max_size=50))
def test_float_hash_vectorised_equals_scalar(xs: list[float]) -> None:
    vec = hash_float_array(np.array(xs, dtype=np.float64))
    assert vec.tolist() == [hash_value(x) for x in xs]


@given(st.lists(st.tuples(st.integers(0, 2**64 - 1), st.integers(0, 2**64 - 1)), min_size=1, max_size=20))
def test_tuple_hash_vectorised_equals_scalar(pairs: list[tuple[int, int]]) -> None:
    a = np.array([p[0] for p in pairs], dtype=np.uint64)
    b = np.array([p[1] for p in pairs], dtype=np.uint64)
    assert combine_hashes([a, b]).tolist() == [combine_hash([x, y]) for x, y in pairs]
    assert combine_hash([1, 2]) != combine_hash([2, 1])


def test_hll_estimate_within_error() -> None:
    for n in (10, 1000, 100_000):
        h = HyperLogLog.empty(12).add(hash_values(range(n)))
        assert abs(h.estimate() - n) <= max(2, 4 * h.relative_error * n), n


hashes = st.lists(st.integers(0, 2**64 - 1), max_size=200).map(lambda xs: np.array(xs, dtype=np.uint64))


@given(hashes, hashes, hashes)
def test_hll_merge_is_commutative_associative_and_union(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> None:
    ha, hb, hc = (HyperLogLog.empty(8).add(x) for x in (a, b, c))
    assert ha.merge(hb) == hb.merge(ha)
    assert ha.merge(hb).merge(hc) == ha.merge(hb.merge(hc))
    assert ha.merge(hb) == HyperLogLog.empty(8).add(np.concatenate([a, b]))
    assert HyperLogLog.from_dict(json.loads(json.dumps(ha.to_dict()))) == ha


@given(hashes, hashes, hashes, st.integers(1, 300))
def test_exact_set_caps_and_merges(a: np.ndarray, b: np.ndarray, c: np.ndarray, cap: int) -> None:
    ea, eb, ec = (ExactSet.of(x, cap) for x in (a, b, c))
    assert ea.merge(eb) == eb.merge(ea)
    assert ea.merge(eb).merge(ec) == ea.merge(eb.merge(ec))
    union = ExactSet.of(np.concatenate([a, b, c]), cap)
    assert ea.merge(eb).merge(ec) == union
    if union.hashes is not None:
        assert len(union) == len(set(np.concatenate([a, b, c]).tolist()))
    assert ExactSet.from_dict(json.loads(json.dumps(ea.to_dict()))) == ea


@given(hashes, hashes, hashes)
def test_bottom_k_merge_equals_sample_of_union(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> None:
    ba, bb, bc = (BottomK.of(x, 16) for x in (a, b, c))
    assert ba.merge(bb).merge(bc) == bb.merge(bc.merge(ba)) == BottomK.of(np.concatenate([a, b, c]), 16)


def test_containment_exact_and_sampled() -> None:
    child = hash_values(range(0, 5000, 7))
    parent = hash_values(range(10_000))
    other = hash_values(range(20_000, 30_000))
    big = 1 << 20
    c = containment(ExactSet.of(child, big), BottomK.of(child), ExactSet.of(parent, big), BottomK.of(parent))
    assert c.exact and c.ratio == 1.0
    # parent too large for its exact set: estimated from bottom-k samples
    small = 100
    c2 = containment(
        ExactSet.of(child, small), BottomK.of(child), ExactSet.of(parent, small), BottomK.of(parent)
    )
    assert not c2.exact and c2.ratio == 1.0 and c2.checked > 8
    c3 = containment(
        ExactSet.of(other, small), BottomK.of(other), ExactSet.of(parent, small), BottomK.of(parent)
    )
    assert c3.ratio < 0.1


@given(st.lists(st.sampled_from("abcdefgh"), max_size=60), st.lists(st.sampled_from("abcdefgh"), max_size=60))
def test_top_k_exact_while_few_distinct(xs: list[str], ys: list[str]) -> None:
    def of(vals: list[str]) -> TopK:
        counts: dict[int, tuple[object, int]] = {}
        for v in vals:
            h = hash_value(v)
            assert h is not None
            counts[h] = (v, counts.get(h, (v, 0))[1] + 1)
        return TopK.of(counts, k=8)

    merged = of(xs).merge(of(ys))
    assert merged.items == of(ys).merge(of(xs)).items == of(xs + ys).items
    assert dict(merged.top(8)) == {v: (xs + ys).count(v) for v in set(xs + ys)}


def test_top_k_undercount_is_bounded() -> None:
    vals = [i % 50 for i in range(1000)] + [7] * 300
    counts: dict[int, tuple[object, int]] = {}
    for v in vals:
        h = hash_value(v)
        assert h is not None
        counts[h] = (v, counts.get(h, (v, 0))[1] + 1)
    top = TopK.of(counts, k=10)
    (v, c), *_ = top.top(1)
    assert v == 7
    assert 320 - len(vals) / 11 <= c <= 320


def test_examples_are_deterministic_and_mergeable() -> None:
    pairs = [(hash_value(v), v) for v in "abcdefghij"]
    e1 = Examples.of([p for p in pairs[:5] if p[0] is not None], k=3)  # type: ignore[misc]
    e2 = Examples.of([p for p in pairs[5:] if p[0] is not None], k=3)  # type: ignore[misc]
    assert e1.merge(e2) == e2.merge(e1) == Examples.of(pairs, k=3)  # type: ignore[arg-type]
    assert len(e1.merge(e2).values()) == 3
