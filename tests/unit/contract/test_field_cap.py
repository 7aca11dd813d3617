"""The field cap (contract/field_cap.py): at most N fields per source in read order, the rest in one overflow map."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from esc.contract.field_cap import OVERFLOW_FIELD, RENAMED_DATA_FIELD, FieldCap
from esc.contract.records import Location, ParentLink, Record
from esc.streams.discover import discover
from esc.streams.readers import read_path


def _rec(values: dict[str, object], source: str = "s", parent: ParentLink | None = None) -> Record:
    return Record(source=source, format="jsonl", values=values, location=Location(file="f"), parent=parent)


def test_names_past_the_cap_go_to_the_overflow_map_in_read_order() -> None:
    cap = FieldCap(3)
    first = cap.apply(_rec({"a": 1, "b": 2}))
    assert first.values == {"a": 1, "b": 2}
    second = cap.apply(_rec({"c": 3, "d": 4, "e": None, "a": 5}))
    assert second.values == {"c": 3, "a": 5, OVERFLOW_FIELD: {"d": 4}}  # a null past the cap says nothing
    third = cap.apply(_rec({"e": None, "b": 6}))
    assert third.values == {"b": 6}  # no value past the cap: no overflow field
    assert cap.admitted["s"] == {"a", "b", "c"} and cap.overflowed == {"s": 1}


def test_every_non_null_value_is_kept_somewhere() -> None:
    cap = FieldCap(5)
    rows = [{f"k{(i * 7 + j) % 40}": i * 100 + j for j in range(6)} for i in range(30)]
    for row in rows:
        out = cap.apply(_rec(row)).values
        flat = {k: v for k, v in out.items() if k != OVERFLOW_FIELD} | out.get(OVERFLOW_FIELD, {})
        assert flat == row
        assert len(set(out) - {OVERFLOW_FIELD}) <= 5
    assert len(cap.admitted["s"]) == 5


def test_sources_are_capped_apart_and_a_data_field_named_overflow_is_renamed() -> None:
    cap = FieldCap(2)
    assert cap.apply(_rec({"x": 1, "y": 2}, "a")).values == {"x": 1, "y": 2}
    assert cap.apply(_rec({"p": 1, OVERFLOW_FIELD: "mine"}, "b")).values == {
        "p": 1,
        RENAMED_DATA_FIELD: "mine",
    }
    assert cap.apply(_rec({"q": 1, OVERFLOW_FIELD: "again"}, "b")).values == {
        RENAMED_DATA_FIELD: "again",
        OVERFLOW_FIELD: {"q": 1},
    }


def test_a_childs_copy_of_its_parent_keeps_only_the_parents_fields() -> None:
    cap = FieldCap(2)
    parent_values = {"id": 1, "name": "n", "extra": "e"}
    cap.apply(_rec(parent_values, "p"))
    link = ParentLink(source="p", location=Location(file="f"), values=parent_values)
    child = cap.apply(_rec({"line": 1}, "p.items", parent=link))
    assert child.parent is not None and child.parent.values == {"id": 1, "name": "n"}


def test_the_cap_is_at_least_one() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        FieldCap(0)


def test_readers_and_discovery_cap_a_wide_csv_and_keep_its_values(tmp_path: Path) -> None:
    width, rows = 2000, 4
    header = ["id", *(f"c{i}" for i in range(width))]
    lines = [",".join(header)] + [
        ",".join([str(r), *(f"v{r}_{i}" for i in range(width))]) for r in range(rows)
    ]
    path = tmp_path / "wide.csv"
    path.write_text("\n".join(lines) + "\n", "utf-8")
    records = [r for r in read_path(path, tmp_path, max_fields=100) if isinstance(r, Record)]
    assert len(records) == rows
    for r, rec in enumerate(records):
        assert list(rec.values)[:100] == header[:100]
        overflow = rec.values[OVERFLOW_FIELD]
        assert list(overflow) == header[100:] and overflow[header[-1]] == f"v{r}_{width - 1}"
    result = discover(tmp_path, max_fields=100)
    src = result.contract.sources["wide"]
    assert [f.name for f in src.fields] == [*header[:100], OVERFLOW_FIELD]
    assert src.field(OVERFLOW_FIELD).type == "json"  # type: ignore[union-attr]
    assert src.records == rows and src.identity_key == ["id"]


def test_jsonl_with_a_new_key_per_line_has_a_bounded_catalog(tmp_path: Path) -> None:
    path = tmp_path / "keys.jsonl"
    path.write_text("".join(json.dumps({"id": i, f"k{i}": i}) + "\n" for i in range(300)), "utf-8")
    records = [r for r in read_path(path, tmp_path, max_fields=50) if isinstance(r, Record)]
    assert len(records) == 300
    assert {k for r in records for k in r.values} == {"id", OVERFLOW_FIELD, *(f"k{i}" for i in range(49))}
    assert records[-1].values == {"id": 299, OVERFLOW_FIELD: {"k299": 299}}
