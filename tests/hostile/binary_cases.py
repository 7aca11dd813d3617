"""Hostile binary input: junk with data extensions, truncated and empty files, zip bombs dressed as workbooks,
workbooks with huge declared dimensions, and odd Parquet and PDF files."""

from __future__ import annotations

import gzip
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

from esc.contract.field_cap import MAX_FIELDS_PER_SOURCE
from tests.hostile import office
from tests.hostile.model import Case, Env, Expect, Numbering, write

EXTENSIONS = ("csv", "tsv", "json", "jsonl", "xlsx", "parquet", "pdf", "txt", "md", "")


def _junk(seed: int, size: int = 4096) -> bytes:
    rng = random.Random(seed)
    data = bytearray(rng.randrange(256) for _ in range(size))
    data[size // 2] = 0  # binary, certainly
    return bytes(data)


BINARIES: dict[str, bytes] = {
    "random": _junk(1),
    "png": b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + _junk(2, 2048),
    "elf": b"\x7fELF\x02\x01\x01\x00" + _junk(3, 2048),
    "gzip": gzip.compress(b"id,name\n" + b"".join(b"%d,n%d\n" % (i, i) for i in range(200)), mtime=0),
}


def _file(ids: Numbering, kind: str, title: str, name: str, data: bytes | Callable[[], bytes], expect: Expect,
          heavy: bool = False) -> Case:
    """A case of one file; ``data`` may be a function, so that costly files are made only when the case runs."""

    def build(folder: Path, env: Env) -> None:
        write(folder, f"{folder.name}_{name}", data if isinstance(data, bytes) else data())

    return Case(ids.next(), kind, title, build, expect, heavy)


def junk_cases(ids: Numbering) -> list[Case]:
    return [
        _file(ids, "binary", f"{label} bytes as .{ext or '(no extension)'}", f"junk.{ext}" if ext else "junk", data,
              Expect(rows=0, records=0, min_dead=1))
        for label, data in BINARIES.items()
        for ext in EXTENSIONS
    ]


def empty_cases(ids: Numbering) -> list[Case]:
    out = [
        _file(ids, "empty", f"0 bytes as .{ext or '(no extension)'}", f"empty.{ext}" if ext else "empty", b"",
              Expect(rows=0, records=0, min_dead=1))
        for ext in EXTENSIONS
    ]
    for ext in ("csv", "jsonl", "json", "txt", "md"):
        out.append(_file(ids, "empty", f"whitespace only .{ext}", f"blank.{ext}", b" \n\n\t \r\n  ",
                         Expect(rows=0, records=0)))
    for text, expect in (
        ("[]", Expect(rows=0, records=0)),
        ("{}", Expect(rows=1, all_or_nothing=True)),
        ("null", Expect(rows=0, records=0, min_dead=1)),
        ('"just a string"', Expect(rows=0, records=0, min_dead=1)),
        ("42", Expect(rows=0, records=0, min_dead=1)),
        ("[[]]", Expect(rows=1, all_or_nothing=True)),
        ("[1, 2, 3]", Expect(rows=3, records=3, dead=0)),
    ):
        out.append(_file(ids, "empty", f"JSON {text}", "tiny.json", text.encode(), expect))
    return out


def _truncated(data: bytes, share: float) -> bytes:
    return data[: int(len(data) * share)]


def truncated_cases(ids: Numbering) -> list[Case]:
    rows: list[list[Any]] = [["id", "name"], *([i, f"name {i}"] for i in range(1, 41))]

    def book() -> bytes:
        return office.xlsx(rows)

    def table() -> bytes:
        return office.parquet({"id": list(range(200)), "name": [f"n{i}" for i in range(200)]})

    def doc() -> bytes:
        return office.pdf([f"page {i}" for i in range(1, 6)])

    def cut(make: Callable[[], bytes], share: float) -> Callable[[], bytes]:
        return lambda: _truncated(make(), share)

    def flipped() -> bytes:
        corrupt = bytearray(table())
        for i in range(len(corrupt) // 3, len(corrupt) // 3 + 64):
            corrupt[i] ^= 0x5A
        return bytes(corrupt)

    out: list[Case] = []
    for share in (0.3, 0.7, 0.98):
        out.append(_file(ids, "truncated", f"xlsx cut at {share:.0%}", "cut.xlsx", cut(book, share),
                         Expect(rows=40, min_dead=1)))
        out.append(_file(ids, "truncated", f"parquet cut at {share:.0%}", "cut.parquet", cut(table, share),
                         Expect(rows=200, min_dead=1)))
        out.append(_file(ids, "truncated", f"pdf cut at {share:.0%}", "cut.pdf", cut(doc, share), Expect(rows=5)))
    out.append(_file(ids, "truncated", "parquet with flipped bytes in its data", "flipped.parquet", flipped,
                     Expect(rows=200)))
    out.append(_file(ids, "truncated", "parquet without its magic footer", "nofooter.parquet",
                     lambda: table()[:-4], Expect(rows=200, records=0, min_dead=1)))
    out.append(_file(ids, "truncated", "pdf with only a header", "header.pdf", b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n",
                     Expect(rows=0, records=0, min_dead=1)))
    return out


def workbook_cases(ids: Numbering) -> list[Case]:
    rows: list[list[Any]] = [["id", "name"], [1, "a"], [2, "b"], [3, "c"]]
    wide_header = ["id", *(f"col{i}" for i in range(3000))]

    def far() -> bytes:
        return office.huge_dimension(rows)

    def wide() -> bytes:
        return office.xlsx([wide_header, *([r, *(f"w{r}-{i}" for i in range(3000))] for r in range(1, 4))])

    def big_cell() -> bytes:  # written into the XML: openpyxl's writer cuts a cell to Excel's 32,767 characters
        book = office.xlsx([["id", "v"], [1, "a"], [2, "BIGCELL"], [3, "c"]])
        return office.rewrite_zip(book, lambda n, b: b.replace(b"BIGCELL", b"x" * (3 << 19)) if b"BIGCELL" in b else None)

    def mixed() -> bytes:
        return office.xlsx([["id", "v"], [1, 1], [2, "two"], [3, 3.5], [4, True], [5, None], [6, "=1/0"]])

    def liar() -> bytes:
        return office.lying_sizes(office.xlsx(rows), "xl/worksheets/sheet1.xml")

    def plain() -> bytes:
        return office.rewrite_zip(office.xlsx(rows), lambda n, b: b"" if n.endswith(".xml") else None)

    def sheets() -> bytes:
        return office.xlsx(rows, sheets=("a`) DETACH DELETE n", "b'}) MATCH (m)"))
    return [
        _file(ids, "zip-bomb", "shared strings inflating to 80 MiB", "bomb.xlsx", office.shared_strings_bomb,
              Expect(rows=1, records=0, min_dead=1, reason="inflate")),
        _file(ids, "zip-bomb", "a worksheet inflating 1,000-fold", "sheetbomb.xlsx", office.sheet_bomb,
              Expect(rows=1, records=0, min_dead=1, reason="inflate")),
        _file(ids, "zip-bomb", "a worksheet declaring 4 GiB", "liar.xlsx", liar,
              Expect(rows=3, records=0, min_dead=1, reason="inflate")),
        _file(ids, "zip-bomb", "10,001 archive members", "members.xlsx", office.many_members,
              Expect(rows=1, records=0, min_dead=1, reason="members")),
        _file(ids, "zip-bomb", "a zip that is no workbook", "plain.xlsx", plain,
              Expect(rows=3, records=0, min_dead=1)),
        _file(ids, "workbook", "declared dimension A1:XFD1048576", "dimension.xlsx", far,
              Expect(rows=3, records=3, dead=0)),
        _file(ids, "workbook", "3,000 columns", "wide.xlsx", wide,
              Expect(rows=3, records=3, dead=0, max_fields=MAX_FIELDS_PER_SOURCE + 1, present=("w3-2999", "col2999")),
              heavy=True),
        _file(ids, "workbook", "a 1.5 MiB cell", "bigcell.xlsx", big_cell, Expect(rows=3, records=2, dead=1,
                                                                                  reason="over")),
        _file(ids, "workbook", "mixed types and a formula in one column", "mixed.xlsx", mixed,
              Expect(rows=6, records=6, dead=0)),
        _file(ids, "workbook", "sheet names with Cypher in them", "sheets.xlsx", sheets,
              Expect(rows=6, records=6, dead=0)),
    ]


def parquet_cases(ids: Numbering) -> list[Case]:
    n = 30

    def big() -> bytes:
        return office.parquet({"id": list(range(n)), "v": ["x" * (2 << 20) if i == 7 else f"v{i}" for i in range(n)]})

    def wide() -> bytes:
        return office.parquet({"id": list(range(5)), **{f"c{i}": [f"p{r}-{i}" for r in range(5)] for i in range(2000)}})

    return [
        _file(ids, "parquet", "a 2 MiB value in one row", "bigvalue.parquet", big,
              Expect(rows=n, records=n - 1, dead=1, reason="over")),
        _file(ids, "parquet", "2,000 columns", "wide.parquet", wide,
              Expect(rows=5, records=5, dead=0, max_fields=MAX_FIELDS_PER_SOURCE + 1, present=("p4-1999",)),
              heavy=True),
        _file(ids, "parquet", "a struct nested 60 deep", "deep.parquet", lambda: office.deep_struct_parquet(60, 4),
              Expect(rows=4, records=4, dead=0)),
        _file(ids, "pdf", "a PDF with 40 pages", "pages.pdf", lambda: office.pdf([f"page {i}" for i in range(1, 41)]),
              Expect(rows=40, records=40, dead=0)),
    ]


def cases(ids: Numbering) -> list[Case]:
    return [*junk_cases(ids), *empty_cases(ids), *truncated_cases(ids), *workbook_cases(ids), *parquet_cases(ids)]
