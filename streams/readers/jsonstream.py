"""Incremental splitting of a JSON text into top-level values, element by element, in bounded memory.

``json.JSONDecoder.raw_decode`` parses one value starting at an offset of a buffer. The buffer is refilled from
the text stream in chunks and trimmed as values are consumed, so a huge top-level array is parsed one element at
a time and at most about one element (plus a chunk) is ever held. A value that does not parse is skipped up to
the next top-level ``,`` or ``]`` by a small string-aware bracket scanner, so one bad element costs one element.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, TextIO

CHUNK_CHARS = 1 << 16
_DECODER = json.JSONDecoder()
_NON_WS = re.compile(r"[^ \t\r\n]")
_IN_STRING = re.compile(r'["\\]')
_STRUCTURE = re.compile(r'["\[\]{},]')


class CharBuffer:
    """A sliding window over a text stream. ``pos`` is the next unread character of ``buf``."""

    def __init__(self, stream: TextIO, chunk: int | None = None) -> None:
        self.stream = stream
        self.chunk = chunk or CHUNK_CHARS
        self.buf = ""
        self.pos = 0
        self.eof = False
        self.dropped = 0  # characters discarded before buf[0]

    def fill(self, size: int | None = None) -> bool:
        """Append more text (dropping what was consumed). False at end of stream. Decode errors propagate."""
        if self.eof:
            return False
        if self.pos:
            self.dropped += self.pos
            self.buf = self.buf[self.pos :]
            self.pos = 0
        data = self.stream.read(size or self.chunk)
        if not data:
            self.eof = True
            return False
        self.buf += data
        return True

    def peek(self) -> str | None:
        """Skip whitespace; the next character (not consumed), or None at end of stream."""
        while True:
            m = _NON_WS.search(self.buf, self.pos)
            if m is not None:
                self.pos = m.start()
                return self.buf[self.pos]
            self.pos = len(self.buf)
            if not self.fill():
                return None

    def ensure(self, size: int) -> None:
        """Make at least ``size`` unread characters available, unless the stream ends first."""
        while len(self.buf) - self.pos < size and self.fill():
            pass

    @property
    def offset(self) -> int:
        """Character offset of ``pos`` in the whole stream."""
        return self.dropped + self.pos


class _Skipper:
    """Finds where a (possibly malformed) top-level array element ends: the next ``,`` or ``]`` at depth 0.

    Keeps its state between chunks, so an element of any size can be skipped without holding it.
    """

    def __init__(self) -> None:
        self.depth = 0
        self.in_string = False
        self.escaped = False

    def find(self, s: str, i: int) -> int | None:
        n = len(s)
        if self.escaped and i < n:
            self.escaped = False
            i += 1
        while i < n:
            if self.in_string:
                m = _IN_STRING.search(s, i)
                if m is None:
                    return None
                i = m.end()
                if m.group() == "\\":
                    if i < n:
                        i += 1
                    else:
                        self.escaped = True
                        return None
                else:
                    self.in_string = False
                continue
            m = _STRUCTURE.search(s, i)
            if m is None:
                return None
            c, j, i = m.group(), m.start(), m.end()
            if c == '"':
                self.in_string = True
            elif c in "[{":
                self.depth += 1
            elif c in "]}":
                if self.depth == 0:
                    if c == "]":
                        return j
                    continue  # a stray '}' at depth 0 is part of the junk
                self.depth -= 1
            elif self.depth == 0:  # ','
                return j
        return None


@dataclass
class Parsed:
    """Outcome of reading one value: ``kind`` is ok, bad (malformed, skipped), big (over the limit, skipped
    unless asked not to) or eof (the stream ended inside the value)."""

    kind: str
    value: Any = None
    size: int = 0
    reason: str = ""
    raw: str = ""


def parse_value(cb: CharBuffer, max_chars: int, *, skip_big: bool = True) -> Parsed:
    """Parse the value at ``cb.pos`` and move past it. On failure, skip to the next top-level ``,``/``]``."""
    while True:
        try:
            value, end = _DECODER.raw_decode(cb.buf, cb.pos)
        except json.JSONDecodeError as exc:
            # keep only the message: the exception holds the whole buffer and, via its traceback, a cycle
            error = exc.msg
            if cb.eof:
                break
            if len(cb.buf) - cb.pos > max_chars:
                break
            cb.fill(max(cb.chunk, len(cb.buf) - cb.pos))
            continue
        if end == len(cb.buf) and not cb.eof and not isinstance(value, dict | list | str):
            cb.fill()  # a number or literal at the end of the buffer may go on in the next chunk
            continue
        size = end - cb.pos
        if size > max_chars:
            raw = cb.buf[cb.pos : cb.pos + 200]
            cb.pos = end
            return Parsed(
                "big", size=size, reason=f"record is over the limit ({size} > {max_chars} bytes)", raw=raw
            )
        cb.pos = end
        return Parsed("ok", value=value, size=size)
    return _recover(cb, max_chars, error, skip_big)


def _recover(cb: CharBuffer, max_chars: int, error: str, skip_big: bool) -> Parsed:
    skipper = _Skipper()
    start = cb.pos
    end = skipper.find(cb.buf, start)
    if end is not None:
        raw = cb.buf[start:end]
        cb.pos = end
        return Parsed("bad", reason=f"malformed JSON: {error}", raw=raw, size=end - start)
    if cb.eof:
        raw = cb.buf[start:]
        cb.pos = len(cb.buf)
        return Parsed("eof", reason=f"unexpected end of file inside a value: {error}", raw=raw)
    # Over the limit and not finished: skip the rest of the element chunk by chunk.
    raw = cb.buf[start : start + 200]
    if not skip_big:
        return Parsed("big", reason="record is over the limit", raw=raw)
    skipped = len(cb.buf) - start
    cb.pos = len(cb.buf)
    while cb.fill():
        end = skipper.find(cb.buf, 0)
        if end is not None:
            skipped += end
            cb.pos = end
            return Parsed(
                "big",
                size=skipped,
                reason=f"record is over the limit ({skipped} > {max_chars} bytes)",
                raw=raw,
            )
        skipped += len(cb.buf)
        cb.pos = len(cb.buf)
    return Parsed(
        "eof", reason=f"unexpected end of file inside a value over the limit ({skipped} bytes)", raw=raw
    )
