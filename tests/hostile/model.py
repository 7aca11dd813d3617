"""The hostile corpus's vocabulary: a case, what it expects, and the environment its builder writes into.

A case writes one or more files into its own folder (named after its id) of a drop folder; the runner puts a good
file beside them. What a case expects is said by :class:`Expect`, from what the builder wrote (rows written, rows
it broke), never from what an ingest happened to do. Every case is also held to the corpus-wide rules the runner
checks: the ingest does not abort, the good file lands whole, nothing outside the folder (and no FIFO) is opened,
source names are printable, NFC and bounded, and fewer records than rows written means a dead letter says why.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path


def token(case_id: str) -> str:
    """The secret a case keeps outside the drop folder: it must never show up in anything the ingest wrote."""
    return f"SECRET-{case_id}-7f3a"


@dataclass
class Env:
    """Shared by the cases of one run: the folder outside the drop folder, and paths that must never be opened."""

    outside: Path
    never_open: set[str] = field(default_factory=set)  # absolute, resolved

    def secret(self, case_id: str, ext: str = ".csv") -> Path:
        """A file outside the drop folder holding the case's token (a link may point at it; none may read it)."""
        self.outside.mkdir(parents=True, exist_ok=True)
        path = self.outside / f"secret_{case_id}{ext}"
        path.write_text(f"user,password\nroot,{token(case_id)}\n", "utf-8")
        self.forbid(path)
        return path

    def forbid(self, path: str | Path) -> None:
        self.never_open.add(os.path.realpath(path))


@dataclass(frozen=True)
class Expect:
    """What the ingest must make of a case's files (the good file is the runner's): counts are of top-level
    records (nested children not counted) and of dead letters located in the case's folder."""

    rows: int | None = None  # data rows written: at most this many records, all unless a dead letter says why
    records: int | None = None  # exactly this many records
    min_records: int = 0
    dead: int | None = None  # exactly this many dead letters
    min_dead: int = 0
    reason: str | None = None  # a regular expression one of the dead letters' reasons matches
    max_fields: int | None = None  # no source of the case has more fields
    present: tuple[str, ...] = ()  # strings stored verbatim as a field name or value of the case's records
    absent: tuple[str, ...] = ()  # strings found nowhere in what the ingest wrote
    all_or_nothing: bool = False  # all rows, or none and a dead letter
    nodes: bool = False  # each of the case's sources has as many graph nodes as records (nothing deleted)


Build = Callable[[Path, Env], None]


@dataclass(frozen=True)
class Case:
    id: str
    kind: str
    title: str
    build: Build
    expect: Expect
    heavy: bool = False  # run in a group of its own


def write(folder: Path, name: str | bytes, data: str | bytes, encoding: str = "utf-8") -> Path:
    """Write a file whose name may hold any bytes (``bytes`` names are used as they are)."""
    folder.mkdir(parents=True, exist_ok=True)
    raw = data if isinstance(data, bytes) else data.encode(encoding)
    target = os.path.join(os.fsencode(folder), name if isinstance(name, bytes) else os.fsencode(name))
    with open(target, "wb") as fh:
        fh.write(raw)
    return Path(os.fsdecode(target))


def csv_text(cid: str, rows: int, sep: str = ",", start: int = 1) -> str:
    """``id,name,note`` and ``rows`` data rows whose values name the case."""
    lines = [sep.join(("id", "name", "note"))]
    lines += [sep.join((str(i), f"{cid}-name-{i}", f"note {i}")) for i in range(start, start + rows)]
    return "\n".join(lines) + "\n"


class Numbering:
    """Case ids in order of creation: c001, c002, ..."""

    def __init__(self) -> None:
        self.n = 0

    def next(self) -> str:
        self.n += 1
        return f"c{self.n:03d}"
