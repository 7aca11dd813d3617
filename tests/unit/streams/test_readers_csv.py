"""CSV/TSV reader: dialects, encodings, hostile headers and every malformed case, on generated files."""

from __future__ import annotations

from pathlib import Path

from esc.contract.records import Record, Rejected
from esc.streams.readers import read_path
from esc.streams.readers.sniff import SAMPLE_BYTES


def _read(path: Path, **kw: int) -> tuple[list[Record], list[Rejected]]:
    items = list(read_path(path, path.parent, **kw))
    recs = [i for i in items if isinstance(i, Record)]
    rejs = [i for i in items if isinstance(i, Rejected)]
    assert len(recs) + len(rejs) == len(items)
    return recs, rejs


def test_plain_csv_values_are_strings_and_empty_is_null(tmp_path: Path) -> None:
    p = tmp_path / "people.csv"
    p.write_text("id,name,age\n1,Ann,30\n2,,41\n", encoding="utf-8")
    recs, rejs = _read(p)
    assert rejs == []
    assert [r.values for r in recs] == [
        {"id": "1", "name": "Ann", "age": "30"},
        {"id": "2", "name": None, "age": "41"},
    ]
    assert recs[0].source == "people" and recs[0].format == "csv"
    assert recs[1].location.file == "people.csv" and recs[1].location.row == 2 and recs[1].location.line == 3


def test_bom_crlf_all_quoted_semicolon(tmp_path: Path) -> None:
    p = tmp_path / "c.csv"
    body = '"Id";"City";"Note"\r\n"1";"Köln";"a;b"\r\n"2";"Zürich";"say ""hi"""\r\n'
    p.write_bytes(b"\xef\xbb\xbf" + body.encode("utf-8"))
    recs, rejs = _read(p)
    assert rejs == []
    assert list(recs[0].values) == ["Id", "City", "Note"]  # the BOM is not part of the first name
    assert recs[0].values == {"Id": "1", "City": "Köln", "Note": "a;b"}
    assert recs[1].values["Note"] == 'say "hi"'


def test_quoted_newline_inside_a_field_keeps_rows_and_lines(tmp_path: Path) -> None:
    p = tmp_path / "m.csv"
    p.write_text('id,text\n1,"two\nlines"\n2,x\n', encoding="utf-8")
    recs, _ = _read(p)
    assert recs[0].values["text"] == "two\nlines"
    assert (recs[1].location.row, recs[1].location.line) == (2, 4)


def test_cp1252_file_is_decoded(tmp_path: Path) -> None:
    p = tmp_path / "legacy.csv"
    rows = "id;name;city\n" + "".join(f"{i};Müller–Señor €{i};Besançon\n" for i in range(20))
    p.write_bytes(rows.encode("cp1252"))
    recs, rejs = _read(p)
    assert rejs == []
    assert len(recs) == 20
    assert recs[3].values == {"id": "3", "name": "Müller–Señor €3", "city": "Besançon"}


def test_late_latin1_byte_after_ascii_prefix_switches_encoding(tmp_path: Path) -> None:
    p = tmp_path / "late.csv"
    head = b"id,name\n" + b"".join(b"%d,plain ascii name %d\n" % (i, i) for i in range(20000))
    assert len(head) > SAMPLE_BYTES  # the encoding guess saw only ASCII
    p.write_bytes(head + b"20000,Jos\xe9\n")
    recs, rejs = _read(p)
    assert rejs == []
    assert recs[-1].values == {"id": "20000", "name": "José"}


def test_invalid_utf8_line_in_utf8_file_is_rejected_and_reading_goes_on(tmp_path: Path) -> None:
    p = tmp_path / "u.csv"
    p.write_bytes("id,name\n1,Zoë Renée Müller\n".encode() + b"2,bad \xff\xfe byte\n" + b"3,ok\n")
    recs, rejs = _read(p)
    assert [r.values["id"] for r in recs] == ["1", "3"]
    assert len(rejs) == 1 and "not valid utf-8" in rejs[0].reason
    assert rejs[0].location is not None and rejs[0].location.line == 3
    assert rejs[0].raw is not None and "bad" in rejs[0].raw


def test_tsv_and_pipe(tmp_path: Path) -> None:
    t = tmp_path / "t.tsv"
    t.write_text("a\tb, c\n1\tx, y\n", encoding="utf-8")
    recs, _ = _read(t)
    assert recs[0].values == {"a": "1", "b, c": "x, y"} and recs[0].format == "tsv"
    p = tmp_path / "p.csv"
    p.write_text("a|b|c\n1|2|3\n4|5|6\n", encoding="utf-8")
    recs, _ = _read(p)
    assert recs[1].values == {"a": "4", "b": "5", "c": "6"}


def test_hostile_header_names_are_kept_and_made_unique(tmp_path: Path) -> None:
    p = tmp_path / "h.csv"
    p.write_text('Name,,Name,"we`ird ""q""\nx",Name__2, \n1,2,3,4,5,6\n', encoding="utf-8")
    recs, rejs = _read(p)
    assert rejs == []
    assert list(recs[0].values) == ["Name", "col_2", "Name__3", 'we`ird "q"\nx', "Name__2", "col_6"]
    assert list(recs[0].values.values()) == ["1", "2", "3", "4", "5", "6"]


def test_ragged_rows_are_rejected_with_location_and_the_rest_is_read(tmp_path: Path) -> None:
    p = tmp_path / "r.csv"
    p.write_text("a,b,c\n1,2,3\n4,5\n6,7,8,9\n\n10,11,12\n", encoding="utf-8")
    recs, rejs = _read(p)
    assert [r.values["a"] for r in recs] == ["1", "10"]
    assert [(r.location.row, r.location.line) for r in recs] == [(1, 2), (4, 6)]
    assert len(rejs) == 2
    assert "2 cells, header has 3" in rejs[0].reason and rejs[0].raw == "4,5\n"
    assert "4 cells" in rejs[1].reason
    assert rejs[1].location is not None and rejs[1].location.row == 3


def test_empty_and_blank_files_yield_one_rejected(tmp_path: Path) -> None:
    for name, data in [("e.csv", b""), ("w.csv", b"  \n\r\n")]:
        p = tmp_path / name
        p.write_bytes(data)
        recs, rejs = _read(p)
        assert recs == [] and len(rejs) == 1 and rejs[0].reason == "empty file"


def test_header_only_file_has_no_records_and_no_errors(tmp_path: Path) -> None:
    p = tmp_path / "h.csv"
    p.write_text("a,b\n", encoding="utf-8")
    assert _read(p) == ([], [])


def test_binary_junk_yields_one_rejected(tmp_path: Path) -> None:
    p = tmp_path / "junk.csv"
    p.write_bytes(bytes(range(256)) * 64)
    recs, rejs = _read(p)
    assert recs == [] and len(rejs) == 1 and "binary" in rejs[0].reason


def test_oversized_line_and_row_are_rejected_without_stopping(tmp_path: Path) -> None:
    p = tmp_path / "big.csv"
    p.write_text("a,b\n1,short\n2," + "x" * 5000 + '\n3,short\n4,"' + "y\n" * 3000 + '"\n5,end\n')
    recs, rejs = _read(p, max_record_bytes=1000)
    assert [r.values["a"] for r in recs] == ["1", "3", "5"]
    assert any("line is over the record limit" in r.reason for r in rejs)
    assert any("record is over the limit" in r.reason for r in rejs)
    for r in rejs:
        assert r.raw is not None and len(r.raw) < 2100


def test_runaway_quote_is_one_rejected_record_and_reading_resumes(tmp_path: Path) -> None:
    p = tmp_path / "q.csv"
    p.write_text('a,b\n1,"open\n' + "2,x\n" * 2000 + '3,"closed"\n4,y\n', encoding="utf-8")
    recs, rejs = _read(p, max_record_bytes=500)
    assert [r.values for r in recs] == [{"a": "4", "b": "y"}]
    assert len(rejs) == 1 and "over the limit" in rejs[0].reason
    assert rejs[0].location is not None and rejs[0].location.line == 2


def test_utf16_with_bom_is_read(tmp_path: Path) -> None:
    p = tmp_path / "w.csv"
    p.write_bytes("id;name\r\n1;Łódź\r\n2;東京\r\n".encode("utf-16"))
    recs, rejs = _read(p)
    assert rejs == []
    assert [r.values for r in recs] == [{"id": "1", "name": "Łódź"}, {"id": "2", "name": "東京"}]
