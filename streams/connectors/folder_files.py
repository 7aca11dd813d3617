"""The files of a drop folder: which entries to read (regular files; links and special files are refused, never
opened), their content hash, the order a bulk drop is delivered in, and the manifest of files delivered."""

from __future__ import annotations

import hashlib
import json
import logging
import os
import stat
from collections.abc import Iterable
from pathlib import Path

from esc.contract.labels import printable
from esc.streams.local_files import write_atomic

log = logging.getLogger(__name__)


class NotRegularFile(OSError):
    """The path is a FIFO, socket, device or folder: never read as data."""


def regular_file(path: Path) -> bool:
    """True for a regular file (a symbolic link is followed); FIFOs, sockets and devices are not (never opened:
    ``stat`` does not open; opening a FIFO blocks until a writer comes)."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


def file_name(root: Path, path: Path) -> str | None:
    """The name a file goes by (relative to ``root``, posix); None for a hidden one (under a ``.`` name), never read.
    Printable (contract/labels.py), not normalized: the name every record id, dead letter and manifest entry
    carries; two files whose names differ only in Unicode normalization stay two files."""
    rel = printable(path.relative_to(root).as_posix() if path.is_relative_to(root) else path.name)
    return None if any(part.startswith(".") for part in Path(rel).parts) else rel


def drop_files(root: Path) -> list[Path]:
    """Every entry under ``root`` that is not a folder, sorted: regular files and links to read, special files
    (FIFOs, sockets, devices) and dangling links to refuse. Hidden entries are left out, and links to folders are
    not walked. Never opens a file."""
    out: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames[:] = [d for d in dirnames if not d.startswith(".")]
        here = Path(dirpath)
        out.extend(here / f for f in filenames if not f.startswith("."))
    return sorted(out)


def file_sha256(path: Path) -> str:
    """The content hash, read in 1 MiB chunks. Opened without blocking and checked to be a regular file, so a
    FIFO put in place of a file after it was listed raises :class:`NotRegularFile` instead of hanging."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise NotRegularFile(f"not a regular file: {path}")
        h = hashlib.sha256()
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def delivery_order(paths: Iterable[Path]) -> list[Path]:
    """Deletions first, then files from the smallest up (then by name). In a bulk drop the small reference
    tables then settle before the large tables that point at them, so a large table's foreign keys are already
    known when it settles and its records are written once, instead of once more per late foreign key."""

    def key(p: Path) -> tuple[int, int, str]:
        try:
            return (1, p.stat().st_size, p.as_posix())
        except FileNotFoundError:
            return (0, 0, p.as_posix())

    return sorted(paths, key=key)


class Manifest:
    """Content hashes of files fully delivered, persisted as JSON (written atomically)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.hashes: dict[str, str] = {}
        if path.exists():
            try:
                self.hashes = json.loads(path.read_text("utf-8"))
            except (OSError, ValueError):
                log.warning("manifest %s unreadable; starting empty (downstream writes are idempotent)", path)

    def save(self) -> None:
        write_atomic(self.path, json.dumps(self.hashes, sort_keys=True, indent=0))
