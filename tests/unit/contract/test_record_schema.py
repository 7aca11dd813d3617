"""Per-source record schemas (contract/record_schema.py): a value is admitted exactly when it would not widen its
field's type as the profiler reads values (plus the two documented relaxations)."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from esc.contract.model import Contract, FieldSpec, SourceSpec
from esc.contract.record_schema import KINDS, admitted, record_schema, record_schemas, value_schema
from esc.contract.semantic import physical_of
from esc.contract.typing import PhysicalType

TEXTY = st.one_of(
    st.from_regex(r"-?[0-9]{1,20}", fullmatch=True),
    st.from_regex(r"-?[0-9]{1,4}\.[0-9]{1,4}", fullmatch=True),
    st.from_regex(r"[-+]?[0-9]{0,3}\.?[0-9]{0,3}(e[-+]?[0-9]{1,2})?", fullmatch=True),
    st.from_regex(r"[0-9]{4}-[0-9]{2}-[0-9]{2}([T ][0-9]{2}:[0-9]{2}(:[0-9]{2})?Z?)?", fullmatch=True),
    st.sampled_from(["true", "FALSE", "Yes", "n", "T", "maybe", "", "007", "-0.5", "0.5", "1e5", "+1.5", ".5"]),
    st.text(max_size=50),
)
VALUES = st.one_of(st.none(), st.booleans(), st.integers(-(10**20), 10**20), TEXTY,
                   st.floats(allow_nan=False, allow_infinity=False).filter(lambda f: f != int(f)),
                   st.lists(st.integers(), max_size=2), st.dictionaries(st.text(max_size=3), st.integers(), max_size=2))


def valid(t: PhysicalType, v: Any) -> bool:
    return Draft202012Validator(value_schema(t)).is_valid(v)


@given(st.sampled_from(KINDS), VALUES)
@settings(max_examples=1500, deadline=None)
def test_a_value_is_admitted_exactly_when_it_does_not_widen_the_type(t: PhysicalType, v: Any) -> None:
    assert valid(t, v) == (physical_of(v) in admitted(t)), (t, v, physical_of(v))


def test_the_rules_a_user_meets() -> None:
    assert valid("int", 17) and valid("int", "17") and valid("int", True) and valid("int", None)
    assert not valid("int", "abc") and not valid("int", 2.5) and not valid("int", "007")  # "007" is a code
    assert valid("decimal", "12.50") and valid("decimal", 12.5) and not valid("decimal", "twelve")
    assert valid("float", 3) and valid("float", "1e5") and not valid("float", "2021-01-01")
    assert valid("date", "2021-03-04") and not valid("date", "2021-03-04 10:00") and not valid("date", 20210304)
    assert valid("datetime", "2021-03-04 10:00") and valid("datetime", "2021-03-04")
    assert valid("bool", "yes") and valid("bool", False) and not valid("bool", 1)
    assert valid("string", 3) and valid("string", "x" * 500) and not valid("string", {"a": 1})
    assert valid("json", {"a": [1]}) and valid("null", "anything") and valid("text", 1.5)


def test_a_source_schema_lists_its_fields_allows_new_ones_and_requires_nothing() -> None:
    fields = [FieldSpec(id="f_1", name="qty", path="qty", type="int"),
              FieldSpec(id="f_2", name="address.city", path="address.city", type="string")]  # fmt: skip
    contract = Contract(contract_id="shop", version=3, sources={"orders": SourceSpec(format="topic", fields=fields)})
    schema = record_schema(contract, "orders")
    Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["$id"] == "urn:esc:shop:v3:orders" and "required" not in schema
    check = Draft202012Validator(schema)
    assert check.is_valid({"qty": "4", "address.city": "Oslo", "new_field": [1, 2]}) and check.is_valid({})
    assert not check.is_valid({"qty": "four"}) and not check.is_valid([])
    assert record_schemas(contract) == {"orders": schema}
