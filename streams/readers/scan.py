"""Scanning a drop folder into the units to read: single files, and corpus directories.

Hidden files and folders (name starting with ``.``) are skipped; symlinked folders are not followed. A file
whose format is neither known from its extension nor sniffable from its content is left out and reported as a
Rejected. Source names are file stems (corpus: the directory name); when two units would share a name, each of
them is named by its path relative to the root instead (``a/x.csv``, ``b/x.csv``), so names stay unique and do
not depend on scan order.
"""

from __future__ import annotations

import os
import stat
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from esc.contract.field_cap import MAX_FIELDS_PER_SOURCE, FieldCap
from esc.contract.labels import printable, source_label
from esc.contract.records import Location, Record, Rejected
from esc.streams.readers.base import DEFAULT_MAX_RECORD_BYTES, ReadContext, SourceFile
from esc.streams.readers.corpus import is_corpus
from esc.streams.readers.dispatch import read_file
from esc.streams.readers.sniff import format_for


def scan(root: Path, *, corpus_min_files: int = 50, corpus_similarity: float = 0.8) -> list[SourceFile]:
    """The sources under ``root``, sorted by relative path."""
    return scan_with_errors(root, corpus_min_files=corpus_min_files, corpus_similarity=corpus_similarity)[0]


def scan_with_errors(root: Path, **kw: Any) -> tuple[list[SourceFile], list[Rejected]]:
    """Like ``scan``, plus a Rejected for every file left out (unknown format, unreadable directory)."""
    min_files: int = kw.get("corpus_min_files", 50)
    threshold: float = kw.get("corpus_similarity", 0.8)
    root = Path(root).resolve()
    errors: list[Rejected] = []
    if not root.is_dir():
        if root.is_file():
            fmt = format_for(root)
            if fmt is None:
                return [], [_unknown(root.name, root)]
            return [SourceFile(root, printable(root.name), fmt, source_label(root.stem))], []
        return [], [Rejected(file=str(root), reason="not a file or directory")]

    units: list[SourceFile] = []
    for dirpath, files in _walk(root, errors):
        by_format: dict[str, list[Path]] = defaultdict(list)
        for path in files:
            rel = path.relative_to(root).as_posix()
            fmt = format_for(path)
            if fmt is None:
                errors.append(_unknown(rel, path))
                continue
            by_format[fmt].append(path)
        corpora = {
            fmt: paths
            for fmt, paths in by_format.items()
            if is_corpus(paths, fmt, min_files=min_files, threshold=threshold)
        }
        dir_rel = dirpath.relative_to(root).as_posix()
        dir_name = dirpath.name
        for fmt, paths in sorted(by_format.items()):
            if fmt in corpora:
                name = dir_name if len(corpora) == 1 else f"{dir_name}.{fmt}"
                units.append(
                    SourceFile(dirpath, printable(dir_rel), fmt, source_label(name), is_corpus=True, members=tuple(paths))
                )
            else:
                units.extend(
                    SourceFile(p, printable(p.relative_to(root).as_posix()), fmt, source_label(p.stem)) for p in paths
                )
    return _dedupe_names(units), errors


def _walk(root: Path, errors: list[Rejected]) -> Iterator[tuple[Path, list[Path]]]:
    def on_error(exc: OSError) -> None:
        where = Path(exc.filename).relative_to(root).as_posix() if exc.filename else "."
        errors.append(Rejected(file=where, reason=f"cannot list directory: {exc.strerror or exc}"))

    resolved = root.resolve()
    for dirpath, dirnames, filenames in os.walk(root, onerror=on_error, followlinks=False):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        here = Path(dirpath)
        files = [here / f for f in sorted(filenames) if not f.startswith(".")]
        inside = []
        for p in files:
            why = _refusal(p, resolved)
            if why is not None:
                if why:
                    errors.append(Rejected(file=printable(p.relative_to(root).as_posix()), reason=f"refused: {why}"))
                continue
            inside.append(p)
        yield here, inside


def _refusal(path: Path, root: Path) -> str | None:
    """Why ``path`` is never opened (empty: skipped without a word), or None when it is a regular file inside
    ``root``. Only ``stat`` is used: opening a FIFO would block until someone writes to it."""
    try:
        if not path.resolve().is_relative_to(root):  # a symbolic link out of the folder: never read
            return "a symbolic link to a file outside the folder"
        mode = os.stat(path).st_mode
    except (OSError, RuntimeError):  # a dangling link, or a loop of links
        return "a symbolic link that leads nowhere (a missing target or a loop of links)" if path.is_symlink() else ""
    if stat.S_ISDIR(mode):
        return ""  # a link to a folder inside: its files are listed under their own paths
    if not stat.S_ISREG(mode):
        return "not a regular file (a FIFO, socket or device file is never opened)"
    return None


def _unknown(rel: str, path: Path) -> Rejected:
    ext = path.suffix or "(none)"
    return Rejected(
        file=rel, reason=f"unknown format: extension {ext} is not known and the content is not recognised"
    )


def _dedupe_names(units: list[SourceFile]) -> list[SourceFile]:
    counts: dict[str, int] = defaultdict(int)
    for u in units:
        counts[u.source] += 1
    out = []
    for u in units:
        if counts[u.source] > 1 and u.rel != ".":
            u = SourceFile(u.path, u.rel, u.format, source_label(u.rel), u.is_corpus, u.members)
        out.append(u)
    return sorted(out, key=lambda u: (u.rel, u.source))


def read(
    sf: SourceFile,
    *,
    max_record_bytes: int = DEFAULT_MAX_RECORD_BYTES,
    max_fields: int = MAX_FIELDS_PER_SOURCE,
) -> Iterator[Record | Rejected]:
    """Records and rejections of one unit; a corpus yields its members' records, all under the corpus name.

    Records of nested children (``<source>.<key>``) and of Excel sheets (``<source>.<sheet>``) carry their own
    source names: callers group by ``Record.source``, not by ``SourceFile.source``. Each source gets at most
    ``max_fields`` fields, the rest of a record's values go to its overflow field (``contract.field_cap``).
    """
    cap = FieldCap(max_fields)
    for item in _read_unit(sf, max_record_bytes):
        yield cap.apply(item) if isinstance(item, Record) else item


def _read_unit(sf: SourceFile, max_record_bytes: int) -> Iterator[Record | Rejected]:
    if not sf.is_corpus:
        yield from read_file(ReadContext(sf.path, sf.rel, sf.source, sf.format, max_record_bytes))
        return
    root = sf.path
    for _ in Path(sf.rel).parts:
        root = root.parent
    for member in sf.members:
        rel = member.relative_to(root).as_posix()
        yield from read_file(ReadContext(member, rel, sf.source, sf.format, max_record_bytes))


def read_path(
    path: Path,
    root: Path | None = None,
    *,
    max_record_bytes: int = DEFAULT_MAX_RECORD_BYTES,
    max_fields: int = MAX_FIELDS_PER_SOURCE,
) -> Iterator[Record | Rejected]:
    """Read one file as source ``<stem>``; its location is relative to ``root`` (default: its folder)."""
    path = Path(path).resolve()
    base = Path(root).resolve() if root is not None else path.parent
    try:
        rel = path.relative_to(base).as_posix()
    except ValueError:
        rel = path.name
    if not path.is_file():
        yield Rejected(file=rel, reason="not a file", location=Location(file=rel))
        return
    fmt = format_for(path)
    if fmt is None:
        yield _unknown(rel, path)
        return
    yield from read(SourceFile(path, rel, fmt, path.stem), max_record_bytes=max_record_bytes, max_fields=max_fields)
