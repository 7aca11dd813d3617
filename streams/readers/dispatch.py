"""Format -> reader function, and the safety net every read goes through."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from esc.contract.records import Record, Rejected
from esc.streams.readers.base import ReadContext
from esc.streams.readers.csv_reader import read_csv
from esc.streams.readers.excel_reader import read_excel
from esc.streams.readers.json_reader import read_json, read_jsonl
from esc.streams.readers.parquet_reader import read_parquet
from esc.streams.readers.pdf_reader import read_pdf
from esc.streams.readers.text_reader import read_text

Reader = Callable[[ReadContext], Iterator[Record | Rejected]]

READERS: dict[str, Reader] = {
    "csv": read_csv,
    "tsv": read_csv,
    "json": read_json,
    "jsonl": read_jsonl,
    "excel": read_excel,
    "parquet": read_parquet,
    "text": read_text,
    "markdown": read_text,
    "pdf": read_pdf,
}


def read_file(ctx: ReadContext) -> Iterator[Record | Rejected]:
    """Records and rejections of one file. Never raises for bad data: an unexpected reader failure ends the
    file with one Rejected naming it (records already yielded stay yielded)."""
    reader = READERS.get(ctx.format)
    if reader is None:
        yield ctx.reject(f"no reader for format {ctx.format!r}")
        return
    try:
        yield from reader(ctx)
    except (MemoryError, RecursionError) as exc:
        yield ctx.reject(f"reader gave up on this file: {type(exc).__name__}")
    except Exception as exc:  # a reader bug or a library's own error on hostile input: one file, one dead letter
        yield ctx.reject(f"reader failed on this file: {type(exc).__name__}: {exc}")
