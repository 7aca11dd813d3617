"""Source readers: turn files and corpus directories into ``Record``s and ``Rejected``s, streaming.

Used by ``esc discover`` and the file watcher. One module per format; ``scan`` finds the units to read,
``read`` reads one. Nothing here raises for bad data: problems come out as ``Rejected`` with a reason and a
location, and reading goes on with the rest of the file where possible.

Formats: CSV/TSV (``csv_reader``), JSON and JSONL (``json_reader``, streamed by ``jsonstream``, nesting split by
``nested``), Excel (``excel_reader``), Parquet (``parquet_reader``), text and markdown (``text_reader``), PDF
(``pdf_reader``). Corpus detection is in ``corpus``, format/encoding/dialect sniffing in ``sniff``.

Decisions callers rely on:

* ``Record.source`` is the name to group by: one ``SourceFile`` can yield several sources (nested children
  ``<stem>.<key>``, Excel sheets ``<stem>.<sheet>``); a corpus yields all its members under the directory name.
* Values are not coerced: CSV cells are strings (empty field = None), JSON keeps its native types, Excel and
  Parquet keep numbers/booleans and turn dates into ISO strings.
* ``Location.file`` is relative to the scanned root; ``row`` (tables, 1-based, header excluded; Excel: sheet row),
  ``line`` (JSONL, and the first physical line of a CSV row), ``page`` (PDF), ``json_path`` (JSON) say where.
* ``max_record_bytes`` (default 1 MiB) bounds every record, line and document; over it: Rejected, reading goes on.
* A corpus is the files of one format directly inside one directory: >= 50 of them, structures >= 0.8 similar
  (text/markdown/PDF documents of one format always are). See ``corpus``.
"""

from __future__ import annotations

from esc.streams.readers.base import DEFAULT_MAX_RECORD_BYTES, SourceFile
from esc.streams.readers.scan import read, read_path, scan, scan_with_errors
from esc.streams.readers.sniff import format_for

__all__ = [
    "DEFAULT_MAX_RECORD_BYTES",
    "SourceFile",
    "format_for",
    "read",
    "read_path",
    "scan",
    "scan_with_errors",
]
