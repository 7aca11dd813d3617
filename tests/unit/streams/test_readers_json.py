"""JSON / JSONL readers: shapes, nesting, malformed input, and streaming in bounded memory."""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from esc.contract.records import Record, Rejected
from esc.streams.readers import jsonstream, read_path


def _read(path: Path, **kw: int) -> tuple[list[Record], list[Rejected]]:
    items = list(read_path(path, path.parent, **kw))
    return [i for i in items if isinstance(i, Record)], [i for i in items if isinstance(i, Rejected)]


def _write(tmp_path: Path, name: str, text: str) -> Path:
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


def test_array_keeps_native_types_and_paths(tmp_path: Path) -> None:
    p = _write(tmp_path, "a.json", json.dumps([{"id": 1, "ok": True, "x": 1.5, "n": None}, {"id": 2}]))
    recs, rejs = _read(p)
    assert rejs == []
    assert [r.values for r in recs] == [{"id": 1, "ok": True, "x": 1.5, "n": None}, {"id": 2}]
    assert [r.location.json_path for r in recs] == ["$[0]", "$[1]"]
    assert recs[0].source == "a" and recs[0].format == "json" and recs[0].parent is None


def test_nested_objects_flatten_arrays_of_objects_become_children(tmp_path: Path) -> None:
    doc = [
        {
            "InvoiceId": 7,
            "address": {"city": "Oslo", "geo": {"lat": 59.9}},
            "tags": ["a", "b"],
            "InvoiceLine": [
                {"LineId": 1, "Taxes": [{"rate": 0.25}]},
                {"LineId": 2, "Taxes": []},
            ],
        }
    ]
    p = _write(tmp_path, "Invoice.json", json.dumps(doc))
    recs, rejs = _read(p)
    assert rejs == []
    by_source = {r.source: [x for x in recs if x.source == r.source] for r in recs}
    assert list(by_source) == ["Invoice", "Invoice.InvoiceLine", "Invoice.InvoiceLine.Taxes"]
    (inv,) = by_source["Invoice"]
    assert inv.values == {"InvoiceId": 7, "address.city": "Oslo", "address.geo.lat": 59.9, "tags": ["a", "b"]}
    lines = by_source["Invoice.InvoiceLine"]
    assert [ln.values for ln in lines] == [{"LineId": 1}, {"LineId": 2}]
    assert lines[1].location.json_path == "$[0].InvoiceLine[1]"
    assert lines[1].array_path == "$[*].InvoiceLine"
    assert lines[1].parent is not None
    assert lines[1].parent.source == "Invoice" and lines[1].parent.location.json_path == "$[0]"
    assert lines[1].parent.values == {"InvoiceId": 7, "address.city": "Oslo", "address.geo.lat": 59.9}
    (tax,) = by_source["Invoice.InvoiceLine.Taxes"]
    assert tax.values == {"rate": 0.25}
    assert tax.location.json_path == "$[0].InvoiceLine[0].Taxes[0]"
    assert tax.array_path == "$[*].InvoiceLine.Taxes"
    assert tax.parent is not None and tax.parent.source == "Invoice.InvoiceLine"
    assert tax.parent.values == {"LineId": 1}
    # parents come before their children
    assert [r.source for r in recs] == [
        "Invoice",
        "Invoice.InvoiceLine",
        "Invoice.InvoiceLine.Taxes",
        "Invoice.InvoiceLine",
    ]


def test_colliding_flattened_names_are_made_unique(tmp_path: Path) -> None:
    p = _write(tmp_path, "c.json", '[{"a.b": 1, "a": {"b": 2}, "": 3}]')
    (rec,), _ = _read(p)
    assert rec.values == {"a.b": 1, "a.b__2": 2, "col_3": 3}


def test_top_level_object_shapes(tmp_path: Path) -> None:
    one = _write(tmp_path, "cfg.json", '{"name": "x", "items": [{"k": 1}], "n": 2}')
    recs, _ = _read(one)
    assert [(r.source, r.location.json_path) for r in recs] == [("cfg", "$"), ("cfg.items", "$.items[0]")]
    wrapped = _write(tmp_path, "w.json", '{"data": [{"k": 1}, {"k": 2, "sub": [{"z": 0}]}]}')
    recs, _ = _read(wrapped)
    assert [(r.source, r.location.json_path) for r in recs] == [
        ("w", "$.data[0]"),
        ("w", "$.data[1]"),
        ("w.sub", "$.data[1].sub[0]"),
    ]
    assert recs[2].array_path == "$.data[*].sub"
    scalar = _write(tmp_path, "s.json", "42")
    recs, rejs = _read(scalar)
    assert recs == [] and len(rejs) == 1 and "not an array or object" in rejs[0].reason
    scalars = _write(tmp_path, "v.json", '[1, "two", [3]]')
    recs, _ = _read(scalars)
    assert [r.values for r in recs] == [{"value": 1}, {"value": "two"}, {"value": [3]}]


def test_malformed_elements_are_rejected_and_the_array_goes_on(tmp_path: Path) -> None:
    text = '[{"id": 1}, {"id": 2,, "x": 1}, {"id": 3}, nonsense, {"id": "4, ]"} {"id": 5}, {"id": 6},]'
    recs, rejs = _read(_write(tmp_path, "m.json", text))
    assert [r.values["id"] for r in recs] == [1, 3, "4, ]", 5, 6]
    assert len(rejs) == 3
    assert rejs[0].location is not None and rejs[0].location.json_path == "$[1]"
    assert rejs[0].raw == '{"id": 2,, "x": 1}' and "malformed JSON" in rejs[0].reason
    assert rejs[1].raw == "nonsense"
    assert "expected ','" in rejs[2].reason


def test_truncated_file_keeps_what_was_read(tmp_path: Path) -> None:
    recs, rejs = _read(_write(tmp_path, "t.json", '[{"id": 1}, {"id": 2}, {"id": '))
    assert [r.values for r in recs] == [{"id": 1}, {"id": 2}]
    assert len(rejs) == 1 and "end of file" in rejs[0].reason


def test_extra_data_empty_and_binary(tmp_path: Path) -> None:
    recs, rejs = _read(_write(tmp_path, "x.json", '[{"id": 1}] trailing'))
    assert len(recs) == 1 and len(rejs) == 1 and "extra data" in rejs[0].reason
    recs, rejs = _read(_write(tmp_path, "e.json", "  \n"))
    assert recs == [] and [r.reason for r in rejs] == ["empty file"]
    junk = tmp_path / "j.json"
    junk.write_bytes(b"\x00\x01\x02\xff" * 100)
    recs, rejs = _read(junk)
    assert recs == [] and len(rejs) == 1 and "binary" in rejs[0].reason


def test_oversized_element_is_skipped_in_a_stream(tmp_path: Path) -> None:
    big = {"id": 2, "blob": "x" * 50_000, "nested": [{"s": "]},{"}] * 200}
    p = _write(tmp_path, "o.json", json.dumps([{"id": 1}, big, {"id": 3}]))
    recs, rejs = _read(p, max_record_bytes=10_000)
    assert [r.values["id"] for r in recs] == [1, 3]
    assert len(rejs) == 1 and "over the limit" in rejs[0].reason
    assert rejs[0].location is not None and rejs[0].location.json_path == "$[1]"
    assert rejs[0].raw is not None and len(rejs[0].raw) <= 2100


def test_jsonl_lines_bad_lines_and_children(tmp_path: Path) -> None:
    text = '{"id": 1, "kids": [{"k": 1}]}\n\n{"id": 2,\n[1, 2]\n{"id": 3}\n'
    recs, rejs = _read(_write(tmp_path, "l.jsonl", text))
    assert [(r.source, r.values, r.location.line) for r in recs] == [
        ("l", {"id": 1}, 1),
        ("l.kids", {"k": 1}, 1),
        ("l", {"value": [1, 2]}, 4),
        ("l", {"id": 3}, 5),
    ]
    assert recs[1].location.json_path == "$.kids[0]" and recs[1].array_path == "$[*].kids"
    assert recs[1].parent is not None and recs[1].parent.location.line == 1
    assert len(rejs) == 1 and rejs[0].location is not None and rejs[0].location.line == 3
    assert rejs[0].raw == '{"id": 2,\n'


def test_jsonl_oversized_line_is_skipped(tmp_path: Path) -> None:
    text = '{"id": 1}\n{"blob": "' + "y" * 5000 + '"}\n{"id": 3}\n'
    recs, rejs = _read(_write(tmp_path, "b.jsonl", text), max_record_bytes=1000)
    assert [r.values for r in recs] == [{"id": 1}, {"id": 3}]
    assert len(rejs) == 1 and rejs[0].location is not None and rejs[0].location.line == 2


def test_json_file_holding_json_lines_is_read_as_jsonl(tmp_path: Path) -> None:
    recs, rejs = _read(_write(tmp_path, "n.json", '{"id": 1}\n{"id": 2}\n'))
    assert rejs == [] and [r.values for r in recs] == [{"id": 1}, {"id": 2}]
    assert recs[0].format == "jsonl" and recs[1].location.line == 2


def test_bom_json(tmp_path: Path) -> None:
    p = tmp_path / "bom.json"
    p.write_bytes(b"\xef\xbb\xbf" + json.dumps([{"é": "ü"}], ensure_ascii=False).encode())
    recs, rejs = _read(p)
    assert rejs == [] and recs[0].values == {"é": "ü"}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    docs=st.lists(
        st.dictionaries(
            st.text(min_size=1, max_size=5),
            st.one_of(
                st.none(),
                st.booleans(),
                st.integers(),
                st.floats(allow_nan=False, allow_infinity=False),
                st.text(max_size=30),
            ),
            max_size=5,
        ),
        max_size=12,
    ),
    indent=st.sampled_from([None, 0, 2]),
    chunk=st.integers(min_value=1, max_value=17),
)
def test_splitter_matches_json_loads_at_any_chunk_size(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    docs: list[dict[str, Any]],
    indent: int | None,
    chunk: int,
) -> None:
    monkeypatch.setattr(jsonstream, "CHUNK_CHARS", chunk)
    p = tmp_path / "h.json"
    p.write_text(json.dumps(docs, indent=indent, ensure_ascii=False), encoding="utf-8")
    recs, rejs = _read(p)
    assert rejs == []
    top = [r for r in recs if r.parent is None]
    assert len(top) == len(docs)
    for rec, doc in zip(top, docs, strict=True):
        flat = {k: v for k, v in doc.items() if k.strip()}  # blank keys get renamed; compare the others
        assert {k: rec.values[k] for k in flat if "." not in k} == {
            k: v for k, v in flat.items() if "." not in k
        }


def test_multi_megabyte_array_streams_in_bounded_memory(tmp_path: Path) -> None:
    p = tmp_path / "huge.json"
    n = 16_000
    with p.open("w", encoding="utf-8") as fh:
        fh.write("[\n")
        for i in range(n):
            row = {"id": i, "name": f"name {i}", "payload": "z" * 500, "items": [{"k": i}]}
            fh.write(json.dumps(row) + (",\n" if i < n - 1 else "\n"))
        fh.write("]\n")
    size = p.stat().st_size
    assert size > 8 << 20
    tracemalloc.start()
    try:
        count = 0
        for item in read_path(p):
            assert isinstance(item, Record)
            count += 1
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert count == 2 * n
    assert peak < size / 8, f"peak {peak} bytes for a {size}-byte file"


def test_huge_wrapper_object_is_streamed(tmp_path: Path) -> None:
    p = tmp_path / "wrap.json"
    n = 5_000
    p.write_text(json.dumps({"rows": [{"i": i, "pad": "p" * 100} for i in range(n)]}), encoding="utf-8")
    recs, rejs = _read(p, max_record_bytes=64 << 10)
    assert rejs == [] and len(recs) == n
    assert recs[-1].location.json_path == f"$.rows[{n - 1}]"
    p.write_text(json.dumps({"rows": [{"i": i, "pad": "p" * 100} for i in range(n)], "meta": 1}))
    recs, rejs = _read(p, max_record_bytes=64 << 10)
    assert len(recs) == n and len(rejs) == 1 and "more members" in rejs[0].reason


def test_jsonl_with_crlf_and_bom(tmp_path: Path) -> None:
    p = tmp_path / "w.jsonl"
    p.write_bytes(b'\xef\xbb\xbf{"a": "x"}\r\n{"a": "y"}\r\n')
    recs, rejs = _read(p)
    assert rejs == [] and [r.values for r in recs] == [{"a": "x"}, {"a": "y"}]
