"""Shared pieces of the source readers: the unit to read, the read context, field naming and value plumbing."""

from __future__ import annotations

import base64
import datetime as _dt
import decimal
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from esc.contract.records import Location, Record, Rejected

DEFAULT_MAX_RECORD_BYTES = 1 << 20
RAW_LIMIT = 2000  # characters of offending input kept on a Rejected


@dataclass(frozen=True)
class SourceFile:
    """One unit to read: a file, or a corpus directory whose member files form one source."""

    path: Path  # absolute
    rel: str  # relative to the scanned root (posix)
    format: str  # contract.typing.SourceFormat value
    source: str  # source name: file stem, or corpus directory name
    is_corpus: bool = False
    members: tuple[Path, ...] = ()  # files of a corpus


@dataclass(frozen=True)
class ReadContext:
    """What one reader needs to know about the one file it reads."""

    path: Path
    rel: str  # the file, relative to the scanned root: goes into every Location
    source: str
    format: str
    max_record_bytes: int = DEFAULT_MAX_RECORD_BYTES

    def loc(self, **coords: Any) -> Location:
        return Location(file=self.rel, **coords)

    def reject(self, reason: str, raw: str | bytes | None = None, **coords: Any) -> Rejected:
        location = Location(file=self.rel, **coords) if coords else None
        return Rejected(file=self.rel, reason=reason, location=location, raw=truncate(raw))

    def record(self, values: dict[str, Any], **coords: Any) -> Record:
        return Record(source=self.source, format=self.format, values=values, location=self.loc(**coords))


Item = Record | Rejected
Items = Iterator[Item]


def truncate(raw: str | bytes | None, limit: int = RAW_LIMIT) -> str | None:
    """The offending input as text, cut to ``limit`` characters (bytes are decoded leniently)."""
    if raw is None:
        return None
    if isinstance(raw, bytes | bytearray):
        raw = bytes(raw[: limit * 4]).decode("utf-8", errors="replace")
    if len(raw) > limit:
        return raw[:limit] + f"...[{len(raw) - limit} more chars]"
    return raw


def unique_names(raw: Iterable[str | None]) -> list[str]:
    """Field names made usable but kept recognisable, deterministically.

    A blank name becomes ``col_<1-based position>``; the second and later copies of a name become
    ``<name>__2``, ``<name>__3``... (skipping any suffix that is already taken). Other names are kept verbatim,
    quotes, backticks and newlines included: escaping for a database happens where the database is.
    """
    names = [None if r is None or not str(r).strip() else str(r) for r in raw]
    blank_filled = [n if n is not None else f"col_{i}" for i, n in enumerate(names, start=1)]
    taken = set(blank_filled)
    seen: set[str] = set()
    out: list[str] = []
    for name in blank_filled:
        if name not in seen:
            seen.add(name)
            out.append(name)
            continue
        k = 2
        while f"{name}__{k}" in taken or f"{name}__{k}" in seen:
            k += 1
        new = f"{name}__{k}"
        seen.add(new)
        taken.add(new)
        out.append(new)
    return out


def plain(value: Any) -> Any:
    """A typed value from a binary format (Excel, Parquet) as a JSON-friendly value.

    Numbers, booleans, strings, lists and dicts stay as they are; dates and times become ISO strings; decimals
    become their exact string; bytes become base64 text. No other coercion happens in readers.
    """
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, _dt.datetime | _dt.date | _dt.time):
        return value.isoformat()
    if isinstance(value, _dt.timedelta):
        return value.total_seconds()
    if isinstance(value, decimal.Decimal):
        return str(value)
    if isinstance(value, bytes | bytearray | memoryview):
        return base64.b64encode(bytes(value)).decode("ascii")
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    return str(value)
