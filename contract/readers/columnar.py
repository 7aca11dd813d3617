"""Columnar fast path for large CSV/TSV files: Arrow parses, :mod:`contract.profile_arrow` profiles.

The file's encoding and dialect are sniffed like the record reader does; a sample of rows decides how each
column is parsed (int64, decimal text, or text). Anything the fast path is not sure to read exactly like the
record reader (a legacy encoding, a row with the wrong number of cells, a value that does not parse as the
sample promised) makes it decline with a reason, and the caller reads the file record by record instead.
Known approximation: a value after the sample that Arrow still parses as the sampled kind (``+5`` or ``007``
in an int column) is counted as that kind, where the record path would call it a string.
"""

from __future__ import annotations

import csv
import io

import pyarrow as pa
import pyarrow.csv as pacsv

from contract.field_profile import Caps
from contract.profile import SourceProfile
from contract.profile_arrow import ColumnKind, profile_batch
from contract.readers.base import SourceFile, unique_names
from contract.readers.sniff import sniff_dialect, sniff_encoding
from contract.records import Rejected
from contract.semantic import physical_of

SAMPLE_BYTES = 1 << 20
SAMPLE_ROWS = 2000  # rows of the sample that decide how each column is parsed
BLOCK_BYTES = 32 << 20


def _decline(sf: SourceFile, why: str) -> list[Rejected]:
    return [Rejected(file=sf.rel, reason=f"columnar fast path declined ({why}); read record by record")]


def _kind(values: list[str]) -> ColumnKind:
    types = {physical_of(v) for v in set(values) if v != ""}
    if types == {"int"}:
        return "int"
    if types and types <= {"int", "decimal"}:
        return "decimal"
    return "string"


def profile_csv_columnar(sf: SourceFile, caps: Caps) -> SourceProfile | list[Rejected]:
    try:
        with sf.path.open("rb") as fh:
            head = fh.read(SAMPLE_BYTES)
    except OSError as exc:
        return _decline(sf, f"cannot open: {exc}")
    enc = sniff_encoding(head, whole=len(head) < SAMPLE_BYTES)
    if enc is None or enc.name not in ("utf-8", "utf-8-sig"):
        return _decline(sf, f"encoding {enc.name if enc else 'unknown'}")
    text = head.decode("utf-8", errors="replace").lstrip("\ufeff")
    if len(head) == SAMPLE_BYTES:
        text = text[: text.rfind("\n") + 1]
    dialect = sniff_dialect(text, prefer="\t" if sf.format == "tsv" else ",")
    rows = [r for r in csv.reader(io.StringIO(text, newline=""), delimiter=dialect.delimiter) if r]
    if len(rows) < 2:
        return _decline(sf, "too few rows in the sample")
    header = unique_names(rows[0])
    if any(len(r) != len(header) for r in rows[1:]):
        return _decline(sf, "ragged rows in the sample")
    multiline = any("\n" in c or "\r" in c for r in rows for c in r)
    sample = rows[1:SAMPLE_ROWS]
    kinds: dict[str, ColumnKind] = {h: _kind([r[i] for r in sample]) for i, h in enumerate(header)}
    arrow_types = {h: (pa.int64() if k == "int" else pa.string()) for h, k in kinds.items()}
    try:
        reader = pacsv.open_csv(
            sf.path,
            read_options=pacsv.ReadOptions(
                block_size=BLOCK_BYTES, column_names=header, skip_rows=1, encoding="utf8", use_threads=True
            ),
            parse_options=pacsv.ParseOptions(
                delimiter=dialect.delimiter, quote_char='"', double_quote=True, newlines_in_values=multiline
            ),
            convert_options=pacsv.ConvertOptions(
                column_types=arrow_types,
                null_values=[""],
                strings_can_be_null=True,
                quoted_strings_can_be_null=True,
            ),
        )
        prof: SourceProfile | None = None
        for batch in reader:
            part = profile_batch(sf.source, batch, kinds, caps)
            prof = part if prof is None else prof.merge(part)
    except (pa.ArrowInvalid, pa.ArrowTypeError, OSError, ValueError) as exc:
        return _decline(sf, str(exc).splitlines()[0][:200])
    if prof is None:
        return _decline(sf, "no rows")
    return SourceProfile(prof.name, prof.records, prof.fields, prof.combos, None, (sf.format,))
