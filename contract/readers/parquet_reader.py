"""Parquet: streamed in record batches with pyarrow, so memory holds one batch, never the file.

Values keep their Arrow types as Python values (ints, floats, bools, strings); dates, times and decimals become
ISO/exact strings, binary becomes base64. Struct columns flatten to dotted names and lists of structs become
child sources, exactly like nested JSON. ``Location.row`` is the 1-based row in the file.
"""

from __future__ import annotations

from collections.abc import Iterator

from contract.readers.base import ReadContext, plain
from contract.readers.nested import explode
from contract.records import Record, Rejected

BATCH_ROWS = 1024


def read_parquet(ctx: ReadContext) -> Iterator[Record | Rejected]:
    try:
        import pyarrow.parquet as pq

        pf = pq.ParquetFile(ctx.path)
    except Exception as exc:  # pyarrow raises ArrowInvalid, OSError... on a corrupt footer
        yield ctx.reject(f"unreadable Parquet file: {type(exc).__name__}: {exc}")
        return
    row = 0
    try:
        for batch in pf.iter_batches(batch_size=BATCH_ROWS):
            for item in batch.to_pylist():
                row += 1
                yield from explode(ctx, plain(item), location=ctx.loc(row=row))
    except Exception as exc:  # a corrupt row group: what was read stays read
        yield ctx.reject(f"unreadable Parquet data after row {row}: {type(exc).__name__}: {exc}", row=row + 1)
    finally:
        pf.close()
