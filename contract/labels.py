"""Names that come from the outside world (file names, sheet names, keys of nested objects) made safe to carry.

A drop folder can hold a file whose name has a control character, bytes that are not UTF-8 (Python hands them over
as lone surrogates), a different Unicode normalization of another file's name, or 250 characters. None of that may
stop an ingest: such names become printable and bounded here (source names also NFC), deterministically (the same name
always gives the same label, so record ids stay stable across runs and restarts).
"""

from __future__ import annotations

import hashlib
import re
import unicodedata

MAX_SOURCE_LEN = 200
MAX_RECORD_ID_LEN = 512

_UNPRINTABLE = re.compile(r"[\x00-\x1f\x7f\ud800-\udfff]")


def _escape(m: re.Match[str]) -> str:
    c = ord(m.group())
    return f"\\x{c - 0xDC00:02x}" if 0xDC80 <= c <= 0xDCFF else f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}"


def printable(text: str) -> str:
    """Control characters and lone surrogates written as ``\\xNN`` (an undecodable byte of a file name is shown as
    that byte, as ``os.fsencode`` would give it back). Not normalized: two files whose names differ only in Unicode
    normalization are two files (their record ids must differ)."""
    return _UNPRINTABLE.sub(_escape, text) if _UNPRINTABLE.search(text) else text


def bounded(text: str, limit: int) -> str:
    """``text`` if it fits in ``limit`` characters, else its head plus ``~`` and a hash of the whole (unique)."""
    if len(text) <= limit:
        return text
    digest = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=5).hexdigest()
    return f"{text[: limit - len(digest) - 1]}~{digest}"


def source_label(name: str) -> str:
    """A source name any topic, graph label and contract can carry; NFC, so ``Café`` typed either way is one source."""
    return bounded(printable(unicodedata.normalize("NFC", name)), MAX_SOURCE_LEN) or "_"


def record_label(record_id: str) -> str:
    return bounded(printable(record_id), MAX_RECORD_ID_LEN)
