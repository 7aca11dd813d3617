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
import itertools
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.csv as pacsv

from esc.contract.field_profile import Caps, FieldProfile
from esc.contract.profile import SourceProfile
from esc.contract.profile_arrow import ColumnKind, profile_batch
from esc.contract.records import Rejected
from esc.contract.semantic import physical_of
from esc.streams.readers.base import SourceFile, unique_names
from esc.streams.readers.sniff import sniff_dialect, sniff_encoding

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


@dataclass(frozen=True)
class CsvPlan:
    """How to parse one CSV file column by column, and where its data rows start and end (bytes)."""

    header: list[str]
    kinds: dict[str, ColumnKind]
    delimiter: str
    multiline: bool
    data_start: int
    size: int


def plan_csv(sf: SourceFile, *, max_fields: int | None = None) -> CsvPlan | list[Rejected]:
    """Sniff encoding, dialect, header and column kinds from a prefix; decline what the fast path can't read
    (a header wider than ``max_fields``, too: only the record readers fill the overflow field)."""
    try:
        with sf.path.open("rb") as fh:
            head = fh.read(SAMPLE_BYTES)
            size = sf.path.stat().st_size
    except OSError as exc:
        return _decline(sf, f"cannot open: {exc}")
    enc = sniff_encoding(head, whole=len(head) < SAMPLE_BYTES)
    if enc is None or enc.name not in ("utf-8", "utf-8-sig") or enc.skip:
        return _decline(sf, f"encoding {enc.name if enc else 'unknown'}")
    bom = 3 if head.startswith(b"\xef\xbb\xbf") else 0
    text = head[bom:].decode("utf-8", errors="replace")
    if len(head) == SAMPLE_BYTES:
        text = text[: text.rfind("\n") + 1]
    dialect = sniff_dialect(text, prefer="\t" if sf.format == "tsv" else ",")
    rows = [r for r in csv.reader(io.StringIO(text, newline=""), delimiter=dialect.delimiter) if r]
    if len(rows) < 2:
        return _decline(sf, "too few rows in the sample")
    header = unique_names(rows[0])
    if max_fields is not None and len(header) > max_fields:
        return _decline(sf, f"{len(header)} columns, over the field cap of {max_fields}")
    if any(len(r) != len(header) for r in rows[1:]):
        return _decline(sf, "ragged rows in the sample")
    first_nl = head.find(b"\n")
    if first_nl < 0 or any("\n" in h or "\r" in h for h in rows[0]):
        return _decline(sf, "header does not end on the first line")
    multiline = any("\n" in c or "\r" in c for r in rows for c in r)
    sample = rows[1:SAMPLE_ROWS]
    kinds: dict[str, ColumnKind] = {h: _kind([r[i] for r in sample]) for i, h in enumerate(header)}
    return CsvPlan(header, kinds, dialect.delimiter, multiline, first_nl + 1, size)


def split_ranges(sf: SourceFile, plan: CsvPlan, parts: int) -> list[tuple[int, int]]:
    """Byte ranges of the data rows cut at line ends (one range when values may span lines)."""
    if parts <= 1 or plan.multiline:
        return [(plan.data_start, plan.size)]
    cuts = [plan.data_start]
    with sf.path.open("rb") as fh:
        for k in range(1, parts):
            fh.seek(plan.data_start + (plan.size - plan.data_start) * k // parts)
            fh.readline()
            pos = fh.tell()
            if cuts[-1] < pos < plan.size:
                cuts.append(pos)
    cuts.append(plan.size)
    return list(itertools.pairwise(cuts))


class _Range(io.RawIOBase):
    """A read-only view of bytes [start, end) of a file."""

    def __init__(self, path: Path, start: int, end: int) -> None:
        self._fh = path.open("rb")
        self._fh.seek(start)
        self._left = end - start

    def readable(self) -> bool:
        return True

    def readinto(self, buf: Any) -> int:
        n = min(len(buf), self._left)
        if n <= 0:
            return 0
        got = self._fh.readinto(memoryview(buf)[:n])
        self._left -= got or 0
        return got or 0

    def close(self) -> None:
        self._fh.close()
        super().close()


def profile_csv_range(
    sf: SourceFile, plan: CsvPlan, start: int, end: int, caps: Caps
) -> SourceProfile | list[Rejected]:
    """Profile of the data rows in bytes [start, end) of a planned CSV file."""
    arrow_types = {h: (pa.int64() if k == "int" else pa.string()) for h, k in plan.kinds.items()}
    try:
        with io.BufferedReader(_Range(sf.path, start, end), buffer_size=1 << 20) as stream:
            reader = pacsv.open_csv(
                stream,
                read_options=pacsv.ReadOptions(
                    block_size=BLOCK_BYTES, column_names=plan.header, encoding="utf8", use_threads=True
                ),
                parse_options=pacsv.ParseOptions(
                    delimiter=plan.delimiter,
                    quote_char='"',
                    double_quote=True,
                    newlines_in_values=plan.multiline,
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
                part = profile_batch(sf.source, batch, plan.kinds, caps)
                prof = part if prof is None else prof.merge(part)
    except (pa.ArrowInvalid, pa.ArrowTypeError, OSError, ValueError) as exc:
        return _decline(sf, str(exc).splitlines()[0][:200])
    if prof is None:
        return SourceProfile(
            sf.source, 0, {h: FieldProfile.empty(h, h, i, caps) for i, h in enumerate(plan.header)}
        )
    return SourceProfile(prof.name, prof.records, prof.fields, prof.combos, None, (sf.format,))


def profile_csv_columnar(sf: SourceFile, caps: Caps) -> SourceProfile | list[Rejected]:
    """Profile of a whole CSV file through the fast path (one range, this process)."""
    plan = plan_csv(sf)
    if isinstance(plan, list):
        return plan
    out = profile_csv_range(sf, plan, plan.data_start, plan.size, caps)
    if isinstance(out, SourceProfile) and out.records == 0:
        return _decline(sf, "no rows")
    return out
