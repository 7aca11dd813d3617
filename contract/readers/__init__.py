"""Source readers: turn files and corpus directories into ``Record``s and ``Rejected``s, streaming.

Used by ``esc discover`` and the file watcher. One module per format; ``scan`` finds the units to read,
``read`` reads one. Nothing here raises for bad data: problems come out as ``Rejected`` with a reason and a
location, and reading goes on with the rest of the file where possible.

Formats: CSV/TSV (``csv_reader``), JSON and JSONL (``json_reader``, streamed by ``jsonstream``, nesting split by
``nested``), Excel (``excel_reader``), Parquet (``parquet_reader``), text and markdown (``text_reader``), PDF
(``pdf_reader``). Corpus detection is in ``corpus``, format/encoding/dialect sniffing in ``sniff``.
"""

from __future__ import annotations

from contract.readers.base import DEFAULT_MAX_RECORD_BYTES, SourceFile
from contract.readers.scan import read, read_path, scan, scan_with_errors
from contract.readers.sniff import format_for

__all__ = [
    "DEFAULT_MAX_RECORD_BYTES",
    "SourceFile",
    "format_for",
    "read",
    "read_path",
    "scan",
    "scan_with_errors",
]
