"""Small local files a connector or runtime keeps (manifests, key lists, scans, state): written atomically."""

from __future__ import annotations

from pathlib import Path


def write_atomic(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` in one rename: a crash leaves the old file or the new one, never half."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(text, "utf-8")
    tmp.replace(path)


def append_line(path: Path, line: bytes) -> None:
    with path.open("ab") as out:
        out.write(line.rstrip(b"\n") + b"\n")
