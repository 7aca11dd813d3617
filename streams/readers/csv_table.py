"""A whole CSV/TSV file as one Arrow table of text cells, exactly as the record reader would read it — or a reason
why not (issue 15.3: the embedded runtime's columnar path; ``streams/runtime/embedded_columnar.py``).

The record reader (``csv_reader.py``) yields one record per data row: cells as strings, an empty cell as None,
location ``<file>:row=<n>:line=<m>``. This reads the same file in one Arrow pass and promises the same cells and
the same locations, so it declines (and the caller reads the file record by record) whenever it cannot be sure:
a legacy encoding or a byte-order mark, invalid UTF-8 or a NUL byte, a lone ``\\r`` line end, a blank line
(line numbers would shift), a value spanning lines, a row wider than the record limit, more columns than the field
cap, a ragged row (the record path rejects just that row, with its location), a delimiter the record reader would
sniff differently. Nothing is approximated: every cell stays text; typing is the profiler's job.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv

from esc.streams.readers.base import DEFAULT_MAX_RECORD_BYTES, SourceFile
from esc.streams.readers.columnar import plan_csv
from esc.streams.readers.sniff import DIALECT_SAMPLE_CHARS, sniff_dialect

MAX_TABLE_BYTES = 256 << 20
"""Files larger than this take the record path (the table is held in memory until the contract covers it)."""


@dataclass(frozen=True)
class CsvTable:
    """The data rows of one file: ``table`` has one string column per header name (None for an empty cell);
    row ``i`` (0-based) is the record at ``row=i+1``, ``line=i+2``."""

    table: pa.Table
    header: list[str]
    delimiter: str


def read_csv_table(
    sf: SourceFile, *, max_fields: int | None = None, max_record_bytes: int = DEFAULT_MAX_RECORD_BYTES
) -> CsvTable | str:
    """The file as a table, or why the columnar path declines it."""
    if sf.format not in ("csv", "tsv"):
        return f"format {sf.format}"
    plan = plan_csv(sf, max_fields=max_fields)
    if isinstance(plan, list):
        return plan[0].reason
    if plan.multiline:
        return "values span lines"
    try:
        if sf.path.stat().st_size > MAX_TABLE_BYTES:
            return "file over the columnar size limit"
        data = sf.path.read_bytes()
    except OSError as exc:
        return f"cannot read: {exc}"
    if data.startswith(b"\xef\xbb\xbf"):
        return "byte-order mark"
    if b"\x00" in data:
        return "NUL byte"
    if data.count(b"\r") != data.count(b"\r\n"):
        return "lone carriage return"
    if data.startswith((b"\n", b"\r\n")) or b"\n\n" in data or b"\n\r\n" in data:
        return "blank line"
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return "invalid UTF-8"
    sample = data[: DIALECT_SAMPLE_CHARS * 4].decode("utf-8", errors="replace")
    dialect = sniff_dialect(sample, prefer="\t" if sf.format == "tsv" else ",")
    if dialect.delimiter != plan.delimiter:
        return "delimiter sniffed differently on the record reader's sample"
    ends = np.flatnonzero(np.frombuffer(data, dtype=np.uint8) == 10)
    lines = len(ends) + (0 if data.endswith(b"\n") else 1)
    if len(ends) and int(np.diff(ends, prepend=-1).max()) > max_record_bytes:
        return "a row over the record size limit"
    try:
        table = pacsv.read_csv(
            pa.BufferReader(data),
            read_options=pacsv.ReadOptions(column_names=plan.header, skip_rows=1, use_threads=True),
            parse_options=pacsv.ParseOptions(
                delimiter=plan.delimiter, quote_char='"', double_quote=True, newlines_in_values=True
            ),
            convert_options=pacsv.ConvertOptions(
                column_types=dict.fromkeys(plan.header, pa.string()),
                null_values=[""],
                strings_can_be_null=True,
                quoted_strings_can_be_null=True,
            ),
        )
    except (pa.ArrowInvalid, pa.ArrowTypeError, ValueError) as exc:
        return f"arrow: {str(exc).splitlines()[0][:200]}"
    if table.num_rows != lines - 1:
        return "row count differs from line count (a value spans lines)"
    return CsvTable(table.combine_chunks(), list(plan.header), plan.delimiter)
