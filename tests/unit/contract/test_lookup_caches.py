"""The caches behind field_by_id and SourceProfile.columns follow changes (they made wide sources linear)."""

from __future__ import annotations

from esc.contract.model import Contract, FieldSpec, SourceSpec
from esc.contract.profile import SourceProfile
from esc.contract.records import Location, Record


def spec(fid: str, name: str) -> FieldSpec:
    return FieldSpec(id=fid, name=name, path=name, type="string")


def test_field_by_id_sees_fields_added_removed_and_replaced() -> None:
    c = Contract(sources={"A": SourceSpec(format="csv", fields=[spec("f1", "a"), spec("f2", "b")])})
    assert c.field_by_id("f2") == ("A", c.sources["A"].fields[1])
    c.sources["A"].fields.insert(0, spec("f0", "z"))  # positions move
    assert c.field_by_id("f2") == ("A", c.sources["A"].fields[2])
    c.sources["B"] = SourceSpec(format="csv", fields=[spec("f9", "q")])
    assert c.field_by_id("f9") is not None and c.field_by_id("nope") is None
    c.sources["A"].fields[2] = spec("f3", "b")  # replaced in place: the old id is gone
    assert c.field_by_id("f2") is None and c.field_by_id("f3") == ("A", c.sources["A"].fields[2])


def test_columns_are_in_position_order_and_copies() -> None:
    recs = [
        Record(source="T", format="csv", values={"b": "1", "a": "2"}, location=Location(file="T.csv", row=1))
    ]
    p = SourceProfile.of_records("T", recs)
    cols = p.columns()
    cols.append("x")  # the caller's list is its own
    assert p.columns() == ["b", "a"] and p.column_prefix() == ""
