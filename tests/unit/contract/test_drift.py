"""Drift between two windows of a source (contract/drift.py): null rates, type mix, distinct counts, PSI/KS."""

from __future__ import annotations

import random

from esc.contract.drift import MIN_NUMERIC, Window, compare, type_shift
from esc.contract.profile import SourceProfile


def rows(n: int, mean: float, null_share: float, seed: int, kind: str = "num") -> list[dict[str, object]]:
    rnd = random.Random(seed)
    out: list[dict[str, object]] = []
    for i in range(n):
        value: object = round(rnd.gauss(mean, 2), 2) if kind == "num" else f"code-{rnd.randint(1, 5)}"
        out.append({"id": i, "v": None if rnd.random() < null_share else value})
    return out


def window(n: int, mean: float, null_share: float, seed: int, kind: str = "num") -> Window:
    return Window.of(SourceProfile.of_rows("s", rows(n, mean, null_share, seed, kind)))


def test_first_window_reports_rates_and_no_shift() -> None:
    d = compare(None, window(200, 10, 0.1, 1), 1, {"v": "f_v"})
    v = d.fields["v"]
    assert d.window == 1 and d.records == 200 and d.previous_records is None
    assert v.id == "f_v" and 0.05 < v.null_rate < 0.15 and v.types == {"float": 1.0}
    assert v.previous_null_rate is None and v.psi is None and v.ks is None and v.type_shift is None


def test_a_shift_and_a_null_jump_show_and_the_same_distribution_does_not() -> None:
    before = window(500, 10, 0.02, 1)
    same = compare(before, window(500, 10, 0.02, 2), 2).fields["v"]
    moved = compare(before, window(500, 25, 0.5, 3), 2).fields["v"]
    assert same.psi is not None and same.psi < 0.1 and same.ks is not None and same.ks < 0.1
    assert abs(same.null_rate_change or 0) < 0.05
    assert moved.psi is not None and moved.psi > 0.25 and moved.ks is not None and moved.ks > 0.9
    assert moved.null_rate_change is not None and moved.null_rate_change > 0.4
    assert moved.type_shift == 0.0


def test_type_mix_and_a_column_that_is_gone() -> None:
    before = window(300, 10, 0.0, 1)
    text = window(300, 10, 0.0, 2, kind="text")
    d = compare(before, text, 2).fields["v"]
    assert d.type_shift == 1.0 and d.psi is None  # no numbers left: nothing to compare
    assert type_shift({"int": 9, "string": 1}, {"int": 5, "string": 5}) == 0.4
    gone = Window.of(SourceProfile.of_rows("s", [{"id": i} for i in range(300)]))
    assert compare(before, gone, 2).fields["v"].null_rate_change == 1.0


def test_too_few_numbers_give_no_psi() -> None:
    d = compare(window(MIN_NUMERIC - 1, 10, 0, 1), window(500, 30, 0, 2), 2).fields["v"]
    assert d.psi is None and d.ks is None and d.null_rate_change == 0.0


def test_the_records_added_since_a_window_are_the_later_minus_the_earlier() -> None:
    first = rows(300, 10, 0.0, 1)
    added = rows(200, 40, 0.5, 2)
    earlier = Window.of(SourceProfile.of_rows("s", first))
    later = Window.of(SourceProfile.of_rows("s", first + added))
    alone = Window.of(SourceProfile.of_rows("s", added))
    grown = later.minus(earlier)
    assert grown.records == 200
    assert grown.fields["v"].nonnull == alone.fields["v"].nonnull
    assert grown.fields["v"].types == alone.fields["v"].types and grown.fields["v"].hist == alone.fields["v"].hist
    assert Window.from_dict(grown.to_dict()) == grown
