"""Excel, Parquet, text, markdown and PDF readers on files the tests generate."""

from __future__ import annotations

import datetime as dt
import decimal
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from openpyxl import Workbook

from esc.contract.records import Record, Rejected
from esc.streams.readers import read_path
from tests.hostile.office import pdf as _pdf


def _read(path: Path, **kw: int) -> tuple[list[Record], list[Rejected]]:
    items = list(read_path(path, path.parent, **kw))
    return [i for i in items if isinstance(i, Record)], [i for i in items if isinstance(i, Rejected)]


def test_excel_single_sheet_is_the_stem(tmp_path: Path) -> None:
    wb = Workbook()
    ws = wb.active
    assert ws is not None
    ws.title = "Data"
    ws.append(["id", "name", "when", "", "id"])
    ws.append([1, "Ann", dt.datetime(2024, 1, 2, 3, 4, 5), None, 9])
    ws.append([None, None, None])
    ws.append([2.5, "", None, None, None])
    p = tmp_path / "book.xlsx"
    wb.save(p)
    recs, rejs = _read(p)
    assert rejs == []
    assert [r.source for r in recs] == ["book", "book"]
    assert recs[0].values == {
        "id": 1,
        "name": "Ann",
        "when": "2024-01-02T03:04:05",
        "col_4": None,
        "id__2": 9,
    }
    assert recs[1].values == {"id": 2.5, "name": None, "when": None, "col_4": None, "id__2": None}
    assert (recs[1].location.sheet, recs[1].location.row) == ("Data", 4)
    assert recs[0].format == "excel"


def test_excel_many_sheets_are_stem_dot_sheet_and_ragged_rows_are_rejected(tmp_path: Path) -> None:
    wb = Workbook()
    first = wb.active
    assert first is not None
    first.title = "Orders"
    first.append(["OrderId", "Total"])
    first.append([1, 10.5])
    first.append([2, 3, "extra"])
    second = wb.create_sheet("Lines")
    second.append(["LineId"])
    second.append([7])
    p = tmp_path / "shop.xlsx"
    wb.save(p)
    recs, rejs = _read(p)
    assert [(r.source, r.values) for r in recs] == [
        ("shop.Orders", {"OrderId": 1, "Total": 10.5}),
        ("shop.Lines", {"LineId": 7}),
    ]
    assert len(rejs) == 1 and rejs[0].location is not None
    assert (rejs[0].location.sheet, rejs[0].location.row) == ("Orders", 3)


def test_corrupt_workbook_is_one_rejected(tmp_path: Path) -> None:
    p = tmp_path / "bad.xlsx"
    p.write_bytes(b"PK\x03\x04 this is not really a zip")
    recs, rejs = _read(p)
    assert recs == [] and len(rejs) == 1 and "Excel" in rejs[0].reason


def test_parquet_streams_row_groups_with_types_and_nesting(tmp_path: Path) -> None:
    n = 2500
    table = pa.table(
        {
            "id": pa.array(range(n), pa.int64()),
            "name": pa.array([None if i % 7 == 0 else f"n{i}" for i in range(n)]),
            "day": pa.array([dt.date(2024, 1, 1) + dt.timedelta(days=i % 30) for i in range(n)]),
            "price": pa.array([decimal.Decimal("1.10")] * n, pa.decimal128(10, 2)),
            "addr": pa.array([{"city": "Oslo", "zip": str(i)} for i in range(n)]),
            "lines": pa.array([[{"sku": f"s{i}", "qty": 1}] if i % 2 else [] for i in range(n)]),
        }
    )
    p = tmp_path / "facts.parquet"
    pq.write_table(table, p, row_group_size=1000)
    assert pq.ParquetFile(p).num_row_groups == 3
    recs, rejs = _read(p)
    assert rejs == []
    top = [r for r in recs if r.source == "facts"]
    kids = [r for r in recs if r.source == "facts.lines"]
    assert len(top) == n and len(kids) == n // 2
    assert top[7].values == {
        "id": 7,
        "name": None,
        "day": "2024-01-08",
        "price": "1.10",
        "addr.city": "Oslo",
        "addr.zip": "7",
    }
    assert top[-1].location.row == n
    assert kids[0].values == {"sku": "s1", "qty": 1} and kids[0].parent is not None
    assert kids[0].parent.values["id"] == 1 and kids[0].array_path == "$[*].lines"


def test_corrupt_parquet_is_one_rejected(tmp_path: Path) -> None:
    p = tmp_path / "bad.parquet"
    p.write_bytes(b"PAR1" + b"\x00" * 100)
    recs, rejs = _read(p)
    assert recs == [] and len(rejs) == 1 and "Parquet" in rejs[0].reason


def test_text_and_markdown_are_one_record_per_document(tmp_path: Path) -> None:
    t = tmp_path / "note.txt"
    t.write_text("\n\n  First line is the title  \nbody\n", encoding="utf-8")
    m = tmp_path / "README.md"
    m.write_text("intro text\n\n## Setup ##\n\nsteps\n", encoding="utf-8")
    (rec,), rejs = _read(t)
    assert rejs == [] and rec.format == "text" and rec.source == "note"
    assert rec.values == {
        "text": "\n\n  First line is the title  \nbody\n",
        "title": "First line is the title",
    }
    (md,), _ = _read(m)
    assert md.format == "markdown" and md.values["title"] == "Setup"
    assert md.location.file == "README.md"


def test_text_malformed_cases(tmp_path: Path) -> None:
    empty = tmp_path / "e.txt"
    empty.write_bytes(b"")
    big = tmp_path / "big.txt"
    big.write_text("w" * 5000, encoding="utf-8")
    junk = tmp_path / "j.txt"
    junk.write_bytes(bytes(range(256)) * 10)
    legacy = tmp_path / "l.txt"
    legacy.write_bytes("Déjà vu – café crème, naïve façade, Müller Straße.\n".encode("cp1252") * 5)
    assert [r.reason for r in _read(empty)[1]] == ["empty file"]
    assert "over the record limit" in _read(big, max_record_bytes=1000)[1][0].reason
    assert "binary" in _read(junk)[1][0].reason
    (rec,), _ = _read(legacy)
    assert rec.values["title"] == "Déjà vu – café crème, naïve façade, Müller Straße."


def test_pdf_one_record_per_page(tmp_path: Path) -> None:
    p = tmp_path / "report.pdf"
    p.write_bytes(_pdf(["Revenue grew in 2019", "Costs fell", "Outlook"]))
    recs, rejs = _read(p)
    assert rejs == []
    assert [r.values["page"] for r in recs] == [1, 2, 3]
    assert [r.location.page for r in recs] == [1, 2, 3]
    assert "Revenue grew in 2019" in recs[0].values["text"]
    assert "Costs fell" in recs[1].values["text"]
    assert recs[0].format == "pdf" and recs[0].source == "report"


def test_broken_pdf_is_one_rejected(tmp_path: Path) -> None:
    p = tmp_path / "broken.pdf"
    p.write_bytes(b"%PDF-1.4\n garbage with no objects at all")
    recs, rejs = _read(p)
    assert recs == [] and len(rejs) == 1
