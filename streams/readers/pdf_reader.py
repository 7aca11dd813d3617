"""PDF: one record per page with pypdf, values ``{"text": ..., "page": n}`` (1-based).

A page whose text cannot be extracted is rejected and the next page is read; a file pypdf cannot open yields
one Rejected. Pages are extracted one at a time.
"""

from __future__ import annotations

from collections.abc import Iterator

from esc.contract.records import Record, Rejected
from esc.streams.readers.base import ReadContext


def read_pdf(ctx: ReadContext) -> Iterator[Record | Rejected]:
    try:
        from pypdf import PdfReader

        reader = PdfReader(ctx.path, strict=False)
        pages = reader.pages
        count = len(pages)
    except Exception as exc:  # pypdf raises PdfReadError, ValueError, KeyError... on broken files
        yield ctx.reject(f"unreadable PDF: {type(exc).__name__}: {exc}")
        return
    if count == 0:
        yield ctx.reject("PDF has no pages")
        return
    for n in range(1, count + 1):
        try:
            text = pages[n - 1].extract_text() or ""
        except Exception as exc:  # pypdf raises many kinds on a broken page: that page goes to the DLQ
            yield ctx.reject(f"cannot extract text of page {n}: {type(exc).__name__}: {exc}", page=n)
            continue
        size = len(text.encode("utf-8"))
        if size > ctx.max_record_bytes:
            yield ctx.reject(
                f"page text is over the record limit ({size} > {ctx.max_record_bytes} bytes)",
                text[:200],
                page=n,
            )
            continue
        yield ctx.record({"text": text, "page": n}, page=n)
