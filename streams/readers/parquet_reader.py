"""Parquet: streamed in record batches with pyarrow, so memory holds one batch, never the file.

Values keep their Arrow types as Python values (ints, floats, bools, strings); dates, times and decimals become
ISO/exact strings, binary becomes base64. Struct columns flatten to dotted names and lists of structs become
child sources, exactly like nested JSON. ``Location.row`` is the 1-based row in the file. A file whose footer
declares a column chunk too large to decompress is rejected unread (``esc.streams.readers.bounds``), and a row over
the record limit is rejected like any other record.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

from esc.contract.records import Record, Rejected
from esc.streams.readers.base import ReadContext, plain
from esc.streams.readers.bounds import parquet_refusal
from esc.streams.readers.nested import explode

BATCH_ROWS = 1024


def read_parquet(ctx: ReadContext) -> Iterator[Record | Rejected]:
    try:
        import pyarrow.parquet as pq

        pf = pq.ParquetFile(ctx.path)
    except Exception as exc:  # pyarrow raises ArrowInvalid, OSError... on a corrupt footer
        yield ctx.reject(f"unreadable Parquet file: {type(exc).__name__}: {exc}")
        return
    refusal = parquet_refusal(pf.metadata)
    if refusal is not None:
        pf.close()
        yield ctx.reject(f"unreadable Parquet file: {refusal}")
        return
    row = 0
    try:
        for batch in pf.iter_batches(batch_size=BATCH_ROWS):
            for item in batch.to_pylist():
                row += 1
                value = plain(item)
                size = _size(value)
                if size > ctx.max_record_bytes:
                    yield ctx.reject(f"record is over the limit ({size} > {ctx.max_record_bytes} bytes)", row=row)
                    continue
                yield from explode(ctx, value, location=ctx.loc(row=row))
    except Exception as exc:  # a corrupt row group: what was read stays read
        yield ctx.reject(f"unreadable Parquet data after row {row}: {type(exc).__name__}: {exc}", row=row + 1)
    finally:
        pf.close()


def _size(value: object) -> int:
    """The row's size as JSON text in bytes (0 when it cannot be JSON: whoever serializes it rejects it, saying why)."""
    try:
        return len(json.dumps(value, ensure_ascii=False, default=str).encode("utf-8", "surrogatepass"))
    except (RecursionError, ValueError):
        return 0
