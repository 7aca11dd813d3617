"""Corpus detection in the stream (issue 13, point 6): similar files arriving over time become one source.

The rule is the contract core's (``streams.readers.corpus``): the files of one format directly inside one directory
are a corpus when there are at least ``min_files`` of them (``ESC_CORPUS_MIN_FILES``, default 50) and their
structures are at least ``threshold`` similar. The file connector asks it once per scan and directory, over the
files the directory holds *now* (not only the new ones): when a directory becomes a corpus, its files are delivered
under the directory's name, each record with a ``file_name`` field naming its file; files delivered earlier under
their own stems are delivered again under the corpus (their old records are retracted: the connector retracts
keys a file no longer produces), and a file arriving later joins the corpus. Sources of one scan settle and
reach the contract together, so a corpus is one version, not one per file.
"""

from __future__ import annotations

from pathlib import Path

from esc.contract.labels import source_label
from esc.settings import load
from esc.streams.readers import format_for
from esc.streams.readers.corpus import is_corpus

FILE_FIELD = "file_name"
MIN_FILES = 50
THRESHOLD = 0.8


def configured_min_files() -> int:
    """``ESC_CORPUS_MIN_FILES`` (default 50, the paper's)."""
    return load().corpus_min_files


class CorpusDirs:
    def __init__(self, min_files: int | None = None, threshold: float = THRESHOLD) -> None:
        self.min_files = configured_min_files() if min_files is None else min_files
        self.threshold = threshold
        self._known: dict[tuple[Path, str], list[Path] | None] = {}  # (dir, format) -> members if a corpus

    def new_scan(self) -> None:
        """Forget the decisions of the last scan (a directory may have grown into a corpus)."""
        self._known.clear()

    def members(self, directory: Path, fmt: str) -> list[Path] | None:
        """The files of a corpus of ``fmt`` in ``directory`` (sorted), or None when they are not one."""
        key = (directory, fmt)
        if key not in self._known:
            try:
                files = sorted(p for p in directory.iterdir()
                               if not p.name.startswith(".") and p.is_file() and not p.is_symlink())  # fmt: skip
            except OSError:
                files = []
            same = [p for p in files if format_for(p) == fmt]
            found = is_corpus(same, fmt, min_files=self.min_files, threshold=self.threshold) if same else False
            self._known[key] = same if found else None
        return self._known[key]

    def source_for(self, path: Path, fmt: str) -> str | None:
        """The corpus source name for ``path`` (its directory's name, as ``esc discover`` names it), or None."""
        if self.members(path.parent, fmt) is None:
            return None
        return source_label(path.parent.name)

    def siblings(self, paths: set[Path]) -> set[Path]:
        """The other members of the corpora ``paths`` are in (a directory that became a corpus is delivered whole,
        under its new name)."""
        out: set[Path] = set()
        for p in paths:
            fmt = format_for(p) if p.is_file() else None
            members = self.members(p.parent, fmt) if fmt is not None else None
            out |= set(members or ())
        return out - paths
