from __future__ import annotations

from datetime import date, datetime
from decimal import Decimal
from typing import Any

import pytest

from esc.agents.coerce import CoercionError, coerce, coerce_lenient


@pytest.mark.parametrize(
    ("values", "type_", "expected"),
    [
        (["1", 1, 1.0, " 1 ", Decimal("1"), "1.0", True], "int", 1),
        (["-42", -42, -42.0], "int", -42),
        (["1.5", 1.5, Decimal("1.5"), " 1.5"], "float", 1.5),
        (["0.99", 0.99, Decimal("0.99")], "decimal", 0.99),
        (["true", "True", "yes", "Y", "1", 1, True, "t"], "bool", True),
        (["false", "No", "0", 0, False, "f"], "bool", False),
        (
            ["2009-01-01", date(2009, 1, 1), datetime(2009, 1, 1, 5), "2009-01-01T00:00:00"],
            "date",
            "2009-01-01",
        ),
        (
            [
                "2009-01-01 00:00:00",
                "2009-01-01T00:00:00",
                datetime(2009, 1, 1),
                date(2009, 1, 1),
                "2009-01-01",
            ],
            "datetime",
            "2009-01-01T00:00:00",
        ),
        (["2021-03-04T05:06:07Z", "2021-03-04 05:06:07+00:00"], "datetime", "2021-03-04T05:06:07+00:00"),
        (["1", 1, 1.0], "string", "1"),
        ([True, "true"], "string", "true"),
        (["x" * 300], "text", "x" * 300),
    ],
)
def test_same_value_from_any_format_coerces_to_one_graph_value(
    values: list[Any], type_: str, expected: Any
) -> None:
    got = [coerce(v, type_) for v in values]
    assert got == [expected] * len(values)
    assert all(type(g) is type(expected) for g in got)


@pytest.mark.parametrize("type_", ["int", "float", "decimal", "bool", "date", "datetime"])
def test_null_and_blank_are_none(type_: str) -> None:
    assert coerce(None, type_) is None
    assert coerce("", type_) is None
    assert coerce("  ", type_) is None


def test_blank_string_stays_a_string_in_text_fields() -> None:
    assert coerce("", "string") == ""
    assert coerce(None, "string") is None


@pytest.mark.parametrize(
    ("value", "type_"),
    [
        ("abc", "int"),
        ("1.5", "int"),
        (1.5, "int"),
        ("1_000", "int"),
        ("nan", "float"),
        ("inf", "float"),
        ("maybe", "bool"),
        (2, "bool"),
        ("yesterday", "date"),
        ("2009-13-01", "date"),
        ("noon", "datetime"),
        ([1], "int"),
    ],
)
def test_mismatches_raise_with_value_and_type(value: Any, type_: str) -> None:
    with pytest.raises(CoercionError, match=type_):
        coerce(value, type_)


def test_lenient_keeps_values_that_do_not_fit() -> None:
    assert coerce_lenient("abc", "int") == "abc"
    assert coerce_lenient("7", "int") == 7
    assert coerce_lenient({"a": 1}, "json") == {"a": 1}
    assert coerce_lenient({"a": [1, 2]}, "string") == '{"a": [1, 2]}'
    assert coerce_lenient(Decimal("2.5"), "string") == "2.5"
    assert coerce_lenient(Decimal("2.5"), "null") == "2.5"
