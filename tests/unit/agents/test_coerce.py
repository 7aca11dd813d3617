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


def test_a_remembered_string_gives_the_same_value_and_a_remembered_mismatch_raises_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Strings are coerced once per distinct value and type: the second answer (and the second refusal, a new
    error each time) is the first one's; a full memo starts again."""
    from esc.agents import coerce as module

    for memo in (*module._MEMOS.values(), *module._LENIENT_MEMOS.values()):
        memo.clear()
    calls: list[tuple[Any, str]] = []
    real = module._coerce

    def counted(value: Any, type_: str) -> Any:
        calls.append((value, type_))
        return real(value, type_)

    monkeypatch.setattr(module, "_coerce", counted)
    assert [coerce(" 7 ", "int") for _ in range(3)] == [7, 7, 7]
    assert [coerce("7", "float") for _ in range(2)] == [7.0, 7.0]
    errors = []
    for _ in range(2):
        with pytest.raises(CoercionError, match="int") as info:
            coerce("seven", "int")
        errors.append(info.value)
    assert errors[0] is not errors[1] and str(errors[0]) == str(errors[1])
    assert coerce(" ", "date") is None and coerce(" ", "date") is None
    assert [coerce_lenient("seven", "int") for _ in range(2)] == ["seven", "seven"]
    assert [coerce_lenient("8", "int") for _ in range(2)] == [8, 8]
    assert calls == [(" 7 ", "int"), ("7", "float"), ("seven", "int"), (" ", "date"), ("seven", "int"), ("8", "int")]
    # Other values are not remembered (True == 1 == 1.0 as dict keys, yet "true" and "1" are different strings).
    assert coerce(True, "string") == "true" and coerce(1, "string") == "1" and coerce(1.0, "string") == "1"
    assert coerce("x", "string") == "x" and coerce_lenient(" ", "text") == " "
    monkeypatch.setattr(module, "MEMO_MAX", 2)
    for v in ("1", "2", "3"):
        coerce(v, "int")
    assert list(module._MEMOS["int"]) == ["3"]
