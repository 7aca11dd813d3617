"""Plain text and markdown: one record per document, values ``{"text": ..., "title": ...}``.

The title is the first markdown heading (markdown), else the first non-blank line, cut to 200 characters; for an
empty document it is the file stem. A document over the record limit is rejected without being read.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import PurePosixPath

from esc.contract.records import Record, Rejected
from esc.streams.readers.base import ReadContext
from esc.streams.readers.sniff import sniff_encoding

TITLE_CHARS = 200
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.+?)\s*#*\s*$", re.MULTILINE)


def read_text(ctx: ReadContext) -> Iterator[Record | Rejected]:
    try:
        size = ctx.path.stat().st_size
        if size > ctx.max_record_bytes:
            yield ctx.reject(f"document is over the record limit ({size} > {ctx.max_record_bytes} bytes)")
            return
        data = ctx.path.read_bytes()
    except OSError as exc:
        yield ctx.reject(f"cannot read file: {exc}")
        return
    if not data.strip():
        yield ctx.reject("empty file")
        return
    enc = sniff_encoding(data, whole=True)
    if enc is None:
        yield ctx.reject("binary or undecodable content (not text in any known encoding)", data[:200])
        return
    try:
        text = data[enc.skip :].decode(enc.name)
    except (UnicodeDecodeError, LookupError) as exc:
        yield ctx.reject(f"not valid {enc.name}: {exc}", data[:200])
        return
    yield ctx.record({"text": text, "title": title_of(text, ctx.format, PurePosixPath(ctx.rel).stem)})


def title_of(text: str, fmt: str, fallback: str) -> str:
    if fmt == "markdown":
        m = _HEADING.search(text)
        if m:
            return m.group(1)[:TITLE_CHARS]
    for line in text.splitlines():
        if line.strip():
            return line.strip().lstrip("#").strip()[:TITLE_CHARS]
    return fallback
