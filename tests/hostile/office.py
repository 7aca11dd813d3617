"""Builders of binary documents for the hostile corpus: workbooks (and zip bombs dressed as workbooks), Parquet
files and small PDFs, all made in memory, deterministically."""

from __future__ import annotations

import io
import struct
import zipfile
from collections.abc import Callable, Sequence
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from openpyxl import Workbook


def xlsx(rows: Sequence[Sequence[Any]], sheets: Sequence[str] = ("Data",)) -> bytes:
    """A workbook with the same rows on every sheet."""
    wb = Workbook()
    first = wb.active
    assert first is not None
    first.title = sheets[0]
    for title in sheets[1:]:
        wb.create_sheet(title)
    for ws in wb.worksheets:
        for row in rows:
            ws.append(list(row))
    out = io.BytesIO()
    wb.save(out)
    return out.getvalue()


def rewrite_zip(data: bytes, change: Callable[[str, bytes], bytes | None], extra: Sequence[tuple[str, bytes]] = ()) -> bytes:
    """The archive with each member passed through ``change`` (None keeps it) and ``extra`` members added."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as src, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            body = src.read(info.filename)
            new = change(info.filename, body)
            dst.writestr(info.filename, body if new is None else new)
        for name, body in extra:
            dst.writestr(name, body)
    return out.getvalue()


def huge_dimension(rows: Sequence[Sequence[Any]]) -> bytes:
    """A workbook whose sheet declares the largest dimension Excel allows (A1:XFD1048576)."""

    def change(name: str, body: bytes) -> bytes | None:
        if not name.startswith("xl/worksheets/sheet"):
            return None
        start = body.index(b"<dimension ref=")
        end = body.index(b"/>", start) + 2
        return body[:start] + b'<dimension ref="A1:XFD1048576"/>' + body[end:]

    return rewrite_zip(xlsx(rows), change)


def _streamed_member(base: bytes, member: str, head: bytes, block: bytes, blocks: int, tail: bytes) -> bytes:
    """``base`` with ``member`` replaced by ``head + block * blocks + tail``, streamed (never held whole)."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(base)) as src, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as dst:
        for info in src.infolist():
            if info.filename != member:
                dst.writestr(info.filename, src.read(info.filename))
        with dst.open(member, "w", force_zip64=True) as fh:
            fh.write(head)
            for _ in range(blocks):
                fh.write(block)
            fh.write(tail)
    return out.getvalue()


def shared_strings_bomb(inflated: int = 80 << 20) -> bytes:
    """A workbook whose shared strings inflate to ``inflated`` bytes (one enormous string), a few hundred KiB
    on disk."""
    head = (b'<sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" count="2" uniqueCount="2">'
            b"<si><t>id</t></si><si><t>")  # fmt: skip
    return _streamed_member(xlsx([["id", "name"], [1, "a"]]), "xl/sharedStrings.xml", head, b"A" * (1 << 20),
                            inflated >> 20, b"</t></si></sst>")  # fmt: skip


def sheet_bomb(inflated: int = 48 << 20) -> bytes:
    """A workbook whose worksheet inflates about 1,000-fold to ``inflated`` bytes of identical rows."""
    row = b'<row r="2"><c r="A2" t="n"><v>1</v></c></row>'
    head = b'<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>'
    return _streamed_member(xlsx([["id"], [1]]), "xl/worksheets/sheet1.xml", head, row * ((1 << 20) // len(row)),
                            inflated >> 20, b"</sheetData></worksheet>")  # fmt: skip


def lying_sizes(data: bytes, member: str, size: int = 0xFFFFFFF0) -> bytes:
    """The archive with ``member``'s uncompressed size in the central directory set to ``size``."""
    buf = bytearray(data)
    name = member.encode()
    pos = 0
    while (pos := buf.find(b"PK\x01\x02", pos)) >= 0:
        n_len = struct.unpack_from("<H", buf, pos + 28)[0]
        if bytes(buf[pos + 46 : pos + 46 + n_len]) == name:
            struct.pack_into("<I", buf, pos + 24, size)
            return bytes(buf)
        pos += 4
    raise ValueError(f"{member} not in the archive")


def many_members(count: int = 10_001) -> bytes:
    return rewrite_zip(xlsx([["id"], [1]]), lambda n, b: None, [(f"xl/media/m{i}.bin", b"x") for i in range(count)])


def parquet(columns: dict[str, list[Any]]) -> bytes:
    out = io.BytesIO()
    pq.write_table(pa.table(columns), out, row_group_size=50)
    return out.getvalue()


def deep_struct_parquet(depth: int, rows: int) -> bytes:
    value: Any = "leaf"
    for _ in range(depth):
        value = {"a": value}
    out = io.BytesIO()
    pq.write_table(pa.table({"id": list(range(rows)), "deep": [value] * rows}), out)
    return out.getvalue()


def pdf(pages: Sequence[str]) -> bytes:
    """A minimal valid PDF with one line of Helvetica text per page (correct xref offsets)."""
    objs: list[bytes] = []
    n = len(pages)
    kids = " ".join(f"{3 + 2 * i} 0 R" for i in range(n))
    objs.append(b"<< /Type /Catalog /Pages 2 0 R >>")
    objs.append(f"<< /Type /Pages /Kids [{kids}] /Count {n} >>".encode())
    font = 3 + 2 * n
    for i, text in enumerate(pages):
        content = f"BT /F1 18 Tf 72 720 Td ({text}) Tj ET".encode()
        objs.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents {4 + 2 * i} 0 R "
            f"/Resources << /Font << /F1 {font} 0 R >> >> >>".encode()
        )
        objs.append(b"<< /Length %d >>\nstream\n" % len(content) + content + b"\nendstream")
    objs.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for num, body in enumerate(objs, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % num + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objs) + 1)
    out += b"".join(b"%010d 00000 n \n" % off for off in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objs) + 1, xref)
    return bytes(out)
