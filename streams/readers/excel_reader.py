"""Excel ``.xlsx``: one source per sheet, streamed row by row with openpyxl's read-only mode.

A workbook with one sheet is source ``<stem>``; otherwise each sheet is ``<stem>.<sheet>``. The first non-empty
row of a sheet is its header. Cells keep the types Excel stores (numbers, booleans, strings); dates and times
become ISO strings; an empty cell or empty string is None. ``Location.row`` is the sheet's own row number.

Memory stays bounded: the archive's declared sizes are checked before anything is inflated
(``esc.streams.readers.bounds``: a zip bomb is rejected unread), the sheet's declared dimension is ignored (a
declared ``A1:XFD1048576`` would pad every row to 16,384 cells and every gap with empty rows), and a row over
the record limit is rejected like any other record.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from esc.contract.records import Record, Rejected
from esc.streams.readers.base import ReadContext, plain, unique_names
from esc.streams.readers.bounds import zip_refusal


def read_excel(ctx: ReadContext) -> Iterator[Record | Rejected]:
    refusal = zip_refusal(ctx.path)
    if refusal is not None:
        yield ctx.reject(f"unreadable Excel workbook: {refusal}")
        return
    try:
        from openpyxl import load_workbook

        wb = load_workbook(ctx.path, read_only=True, data_only=True)
    except Exception as exc:  # openpyxl raises BadZipFile, KeyError, ValueError, OSError... on corrupt files
        yield ctx.reject(f"unreadable Excel workbook: {type(exc).__name__}: {exc}")
        return
    try:
        sheets = list(wb.worksheets)
        for ws in sheets:
            source = ctx.source if len(sheets) == 1 else f"{ctx.source}.{ws.title}"
            yield from _sheet(ctx, ws, source)
    finally:
        wb.close()


def _sheet(ctx: ReadContext, ws: Any, source: str) -> Iterator[Record | Rejected]:
    header: list[str] | None = None
    try:
        ws.reset_dimensions()  # the cells present, not the declared dimension
        rows = ws.iter_rows(values_only=True)
        for row_no, row in enumerate(rows, start=1):
            cells = [None if c == "" else plain(c) for c in row]
            while cells and cells[-1] is None:
                cells.pop()
            if not cells:
                continue
            if header is None:
                header = unique_names(None if c is None else str(c) for c in cells)
                continue
            if len(cells) > len(header):
                yield ctx.reject(
                    f"row has {len(cells)} cells, header has {len(header)}",
                    repr(cells),
                    sheet=ws.title,
                    row=row_no,
                )
                continue
            size = sum(len(str(c).encode("utf-8", "surrogatepass")) for c in cells if c is not None)
            if size > ctx.max_record_bytes:
                yield ctx.reject(f"record is over the limit ({size} > {ctx.max_record_bytes} bytes)",
                                 repr(cells)[:2000], sheet=ws.title, row=row_no)
                continue
            cells += [None] * (len(header) - len(cells))
            values = dict(zip(header, cells, strict=True))
            yield Record(
                source=source, format=ctx.format, values=values, location=ctx.loc(sheet=ws.title, row=row_no)
            )
    except Exception as exc:  # a corrupt sheet part: report it and go on with the next sheet
        yield ctx.reject(f"unreadable sheet: {type(exc).__name__}: {exc}", sheet=ws.title)
