"""Size bounds checked before a compressed container is read: what it would inflate to, from its own directory.

An ``.xlsx`` is a zip archive. Its worksheets are streamed, but every other part (shared strings, styles, the
workbook) is parsed whole, so a small file can still ask for gigabytes (a zip bomb). Python's ``zipfile`` never
inflates a member past the size its central directory declares (and checks the CRC at the end), so checking the
declared sizes before reading bounds what reading can cost. Parquet declares each column chunk's uncompressed
size in its footer; a chunk is decompressed whole, so the same kind of check applies there.

Each check returns the reason to reject the whole file, or None when it may be read.
"""

from __future__ import annotations

import zipfile
from pathlib import Path
from typing import Any

MAX_INFLATED_BYTES = 1 << 30
"""All members of an archive together, inflated (worksheets are streamed: this bounds time, not memory)."""
MAX_PART_BYTES = 64 << 20
"""One archive member that is parsed whole (anything but a worksheet), inflated."""
MAX_RATIO = 200
"""Inflated / compressed size of a member larger than ``RATIO_FLOOR``: XML compresses ~5-30x; more is a bomb."""
RATIO_FLOOR = 16 << 20
MAX_MEMBERS = 10_000
MAX_CHUNK_BYTES = 512 << 20
"""One Parquet column chunk, uncompressed."""


def _mib(n: int) -> str:
    return f"{n / (1 << 20):,.0f} MiB"


def zip_refusal(path: Path, streamed_prefix: str = "xl/worksheets/") -> str | None:
    """Why the archive at ``path`` must not be read (declared sizes over the bounds), or None.

    Members under ``streamed_prefix`` are read as streams; every other member is held whole while parsed.
    """
    try:
        with zipfile.ZipFile(path) as zf:
            infos = zf.infolist()
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as exc:
        return f"not a readable zip archive: {type(exc).__name__}: {exc}"
    if len(infos) > MAX_MEMBERS:
        return f"archive has {len(infos):,} members (at most {MAX_MEMBERS:,} are read)"
    total = sum(i.file_size for i in infos)
    if total > MAX_INFLATED_BYTES:
        return f"archive inflates to {_mib(total)} (over the {_mib(MAX_INFLATED_BYTES)} limit; a zip bomb?)"
    for info in infos:
        size = info.file_size
        if not info.filename.startswith(streamed_prefix) and size > MAX_PART_BYTES:
            return f"member {info.filename} inflates to {_mib(size)} (over the {_mib(MAX_PART_BYTES)} limit)"
        if size > RATIO_FLOOR and size > MAX_RATIO * max(info.compress_size, 1):
            ratio = size // max(info.compress_size, 1)
            return f"member {info.filename} inflates {ratio:,}x to {_mib(size)} (a zip bomb?)"
    return None


def parquet_refusal(metadata: Any) -> str | None:
    """Why a Parquet file with this footer (``pyarrow.parquet.FileMetaData``) must not be read, or None."""
    for g in range(metadata.num_row_groups):
        group = metadata.row_group(g)
        for c in range(group.num_columns):
            size = int(group.column(c).total_uncompressed_size or 0)
            if size > MAX_CHUNK_BYTES:
                name = group.column(c).path_in_schema
                return (
                    f"column {name} of row group {g} decompresses to {_mib(size)} "
                    f"(over the {_mib(MAX_CHUNK_BYTES)} limit)"
                )
    return None
