"""CSV and TSV: encoding and dialect sniffed from a prefix, rows streamed through the csv module.

Cells are strings; an empty field is None (a CSV file cannot tell an empty string from a NULL). The first
non-blank row is the header; blank and duplicate header names are made unique (``col_3``, ``Name__2``). A row
with more or fewer cells than the header is rejected with its location, and reading goes on. Lines may end in
``\n``, ``\r\n`` or a lone ``\r`` (old Mac files, and files mixing the three).
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterable, Iterator
from typing import BinaryIO

from esc.contract.records import Record, Rejected
from esc.streams.readers.base import ReadContext, unique_names
from esc.streams.readers.lines import Lines, open_text
from esc.streams.readers.sniff import DIALECT_SAMPLE_CHARS, Dialect, sniff_dialect

_LONE_CR = re.compile(r"(?<=\r)(?!\n)")


def _cr_lines(lines: Iterable[str]) -> Iterator[str]:
    """Each line cut after every lone ``\r``: the csv module ends a row there, but only at the end of a line it
    was given (inside one it fails with "new-line character seen in unquoted field")."""
    for line in lines:
        if "\r" in line[:-1] and _LONE_CR.search(line, 0, len(line) - 1):
            yield from (part for part in _LONE_CR.split(line) if part)
        else:
            yield line


def _raise_field_limit(limit: int) -> None:
    # The csv module's field limit is process-wide; only ever raise it, never lower what someone else set.
    if csv.field_size_limit() < limit:
        csv.field_size_limit(limit)


def read_csv(ctx: ReadContext) -> Iterator[Record | Rejected]:
    try:
        fh = ctx.path.open("rb")
    except OSError as exc:
        yield ctx.reject(f"cannot open file: {exc}")
        return
    with fh:
        yield from _read(ctx, fh)


def _read(ctx: ReadContext, fh: BinaryIO) -> Iterator[Record | Rejected]:
    enc = open_text(ctx, fh)
    if isinstance(enc, Rejected):
        yield enc
        return
    sample = fh.read(DIALECT_SAMPLE_CHARS * 4)
    fh.seek(0)
    dialect = sniff_dialect(
        sample[enc.skip :].decode(enc.name, errors="replace").lstrip("\ufeff"),
        prefer="\t" if ctx.format == "tsv" else ",",
    )
    _raise_field_limit(ctx.max_record_bytes + 1)
    lines = Lines(fh, enc, ctx)
    rows = csv.reader(_cr_lines(lines), delimiter=dialect.delimiter, quotechar='"', doublequote=True, strict=False)
    header: list[str] | None = None
    row_no = 0
    while True:
        lines.start_record()
        start_line = lines.lineno + 1
        start_bytes = lines.bytes_read - lines.bytes_skipped
        try:
            cells = next(rows)
        except StopIteration:
            yield from _drain(lines)
            return
        except csv.Error as exc:
            yield from _drain(lines)
            row_no += 1 if header is not None else 0
            yield ctx.reject(
                f"malformed CSV: {exc}", "".join(lines.sample), row=row_no or None, line=start_line
            )
            continue
        yield from _drain(lines)
        if not cells or (len(cells) == 1 and not cells[0].strip()):
            continue  # blank line
        if header is None:
            header = unique_names(cells)
            continue
        row_no += 1
        size = lines.bytes_read - lines.bytes_skipped - start_bytes
        if size > ctx.max_record_bytes:
            yield ctx.reject(
                f"record is over the limit ({size} > {ctx.max_record_bytes} bytes)",
                "".join(lines.sample),
                row=row_no,
                line=start_line,
            )
            continue
        if len(cells) != len(header):
            yield ctx.reject(
                f"row has {len(cells)} cells, header has {len(header)} ({_delim_name(dialect)}-delimited)",
                "".join(lines.sample),
                row=row_no,
                line=start_line,
            )
            continue
        values = {name: (cell if cell != "" else None) for name, cell in zip(header, cells, strict=True)}
        yield ctx.record(values, row=row_no, line=start_line)


def _drain(lines: Lines) -> Iterator[Rejected]:
    if lines.pending:
        yield from lines.pending
        lines.pending.clear()


def _delim_name(d: Dialect) -> str:
    return {",": "comma", ";": "semicolon", "\t": "tab", "|": "pipe"}.get(d.delimiter, repr(d.delimiter))
