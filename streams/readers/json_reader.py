"""JSON and JSONL readers. JSON keeps its native types; nested data is split by ``nested.explode``.

JSON top level:

* an array: each element is a record of source ``<stem>`` at ``$[i]``, streamed element by element;
* an object with a single member whose value is an array of objects (``{"data": [...]}``): the array's
  elements are the records of ``<stem>``, at ``$.data[i]`` (streamed too, even when the file is huge);
* any other object: the whole object is one record of ``<stem>`` at ``$``;
* a scalar: rejected (not a source of records).

Non-object elements become ``{"value": element}``. JSONL: one value per line, blank lines skipped, a line that
does not parse is rejected with its line number and the next line is read.
"""

from __future__ import annotations

import codecs
import io
import json
import re
from collections.abc import Generator, Iterator
from typing import Any, BinaryIO

from esc.contract.records import Record, Rejected
from esc.streams.readers.base import ReadContext
from esc.streams.readers.jsonstream import CharBuffer, Parsed, parse_value
from esc.streams.readers.lines import Encoding, Lines, open_text
from esc.streams.readers.nested import explode

_WRAPPER = re.compile(r'\{\s*("(?:[^"\\]|\\.)*")\s*:\s*\[')

Items = Iterator[Record | Rejected]
Steps = Generator[Record | Rejected, None, bool]  # yields items, returns False when reading must stop


def _open(ctx: ReadContext) -> tuple[BinaryIO, Encoding] | Rejected:
    """The file opened in binary with its sniffed encoding, or why it cannot be read."""
    try:
        fh = ctx.path.open("rb")
    except OSError as exc:
        return ctx.reject(f"cannot open file: {exc}")
    enc = open_text(ctx, fh)
    if isinstance(enc, Rejected):
        fh.close()
        return enc
    return fh, enc


def read_jsonl(ctx: ReadContext) -> Items:
    opened = _open(ctx)
    if isinstance(opened, Rejected):
        yield opened
        return
    fh, enc = opened
    with fh:
        lines = Lines(fh, enc, ctx)
        for text in lines:
            yield from lines.pending
            lines.pending.clear()
            if not text.strip():
                continue
            lineno = lines.lineno
            try:
                value = json.loads(text)
            except ValueError as exc:
                yield ctx.reject(f"malformed JSON line: {exc}", text, line=lineno)
                continue
            yield from explode(ctx, value, location=ctx.loc(line=lineno))
        yield from lines.pending


def read_json(ctx: ReadContext) -> Items:
    opened = _open(ctx)
    if isinstance(opened, Rejected):
        yield opened
        return
    fh, enc = opened
    with fh:
        name = "utf-8" if enc.name == "utf-8-sig" else enc.name
        if enc.skip:
            fh.seek(enc.skip)
        elif name == "utf-8" and fh.read(3) != codecs.BOM_UTF8:
            fh.seek(0)
        stream = io.TextIOWrapper(fh, encoding=name, errors="strict", newline="")
        cb = CharBuffer(stream)
        try:
            yield from _top_level(ctx, cb)
        except UnicodeDecodeError as exc:
            yield ctx.reject(
                f"not valid {name} near character {cb.offset}: {exc.reason}; the rest of the file is not read",
                cb.buf[cb.pos : cb.pos + 200],
            )


def _top_level(ctx: ReadContext, cb: CharBuffer) -> Items:
    c = cb.peek()
    if c is None:
        yield ctx.reject("empty file")
        return
    if c == "[":
        cb.pos += 1
        if not (yield from _elements(ctx, cb, "$")):
            return
    elif c == "{":
        if not (yield from _object(ctx, cb)):
            return
    else:
        parsed = parse_value(cb, ctx.max_record_bytes)
        if parsed.kind == "ok":
            yield ctx.reject(
                f"top-level JSON is a {type(parsed.value).__name__}, not an array or object",
                json.dumps(parsed.value)[:200],
            )
        else:
            yield ctx.reject(f"not JSON: {parsed.reason}", parsed.raw)
        return
    if cb.peek() is not None:
        yield ctx.reject(
            f"extra data after the top-level value at character {cb.offset}; it is not read",
            cb.buf[cb.pos : cb.pos + 200],
        )


def _object(ctx: ReadContext, cb: CharBuffer) -> Steps:
    """A top-level object: one record, or the records of its single array member. False: stop reading."""
    parsed = parse_value(cb, ctx.max_record_bytes, skip_big=False)
    if parsed.kind == "ok":
        obj: dict[str, Any] = parsed.value
        if len(obj) == 1:
            ((key, items),) = obj.items()
            if isinstance(items, list) and all(isinstance(x, dict) for x in items):
                for i, item in enumerate(items):
                    yield from explode(
                        ctx, item, location=ctx.loc(json_path=f"$.{key}[{i}]"), records_path=f"$.{key}[*]"
                    )
                return True
        yield from explode(ctx, obj, location=ctx.loc(json_path="$"))
        return True
    if parsed.kind == "big":
        cb.ensure(4096)
        m = _WRAPPER.match(cb.buf, cb.pos)
        if m is not None:
            key = json.loads(m.group(1))
            cb.pos = m.end()
            if not (yield from _elements(ctx, cb, f"$.{key}")):
                return False
            if cb.peek() == "}":
                cb.pos += 1
                return True
            yield ctx.reject(
                f"top-level object has more members after the array {key!r}; it is over the record limit, "
                "so only that array was read",
                cb.buf[cb.pos : cb.pos + 200],
            )
            return False
        yield ctx.reject(
            f"top-level object is over the record limit ({ctx.max_record_bytes} bytes) and is not a "
            '{"key": [records]} wrapper',
            parsed.raw,
        )
        return False
    yield ctx.reject(parsed.reason, parsed.raw, json_path="$")
    return False


def _elements(ctx: ReadContext, cb: CharBuffer, prefix: str) -> Steps:
    """The elements of an array whose ``[`` was consumed, then its ``]``. False: the file ended early."""
    records_path = f"{prefix}[*]"
    c = cb.peek()
    if c == "]":
        cb.pos += 1
        return True
    i = 0
    while True:
        if c is None:
            yield ctx.reject(f"unexpected end of file: array {prefix} is not closed after {i} elements")
            return False
        path = f"{prefix}[{i}]"
        parsed: Parsed = parse_value(cb, ctx.max_record_bytes)
        if parsed.kind == "ok":
            yield from explode(ctx, parsed.value, location=ctx.loc(json_path=path), records_path=records_path)
        elif parsed.kind == "eof":
            yield ctx.reject(parsed.reason, parsed.raw, json_path=path)
            return False
        else:
            yield ctx.reject(parsed.reason, parsed.raw, json_path=path)
        i += 1
        c = cb.peek()
        if c == ",":
            cb.pos += 1
            c = cb.peek()
            if c == "]":  # trailing comma: tolerated
                cb.pos += 1
                return True
            continue
        if c == "]":
            cb.pos += 1
            return True
        if c is not None:
            yield ctx.reject(
                f"expected ',' or ']' after element {path}", cb.buf[cb.pos : cb.pos + 200], json_path=path
            )
