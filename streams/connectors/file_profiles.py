"""Files profiled before their records are sent (the Faust worker's drop folder; issue 15.2).

A record path file load reads every record, sends it, reads it back, profiles it and — since no contract covers a
source before its scan settled — defers it, then writes it in a backfill: every record was handled twice, and the
first contract came only after the whole load (~120 s of 230 s for TPC-H SF 0.05). Here a scan goes in two passes:

1. every new or changed CSV/TSV file the columnar reader takes (``streams/readers/csv_table.py``) is read and
   profiled whole, in the profiling child (``agents/file_profile.py``); its profile update and completion go to
   the contract agent before any of its records. When every file of the scan was taken, the scan ends here: its
   sources settle and the contract covers them while the records are still to be sent;
2. the files are delivered as before; the records of a profiled file carry ``PROFILED_HEADER``, so the workers
   extract them (under the contract, when it is already there) without profiling them again.

A profile update is sent at most once per file version: its watermark offset is chosen when the version is first
profiled and kept in ``<state>/connector/profiled.json`` (written before the update is sent), so a crash that
re-delivers the file sends an update the contract agent drops as already applied. A file the columnar reader
declines, and any file in a scan that holds one, is read record by record as before; its records are profiled by
the workers.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from esc.agents.contract_agent import SourceComplete
from esc.contract.labels import source_label
from esc.streams.connectors.file_batch import FileBatches
from esc.streams.connectors.folder_files import Manifest, file_name, file_sha256, regular_file
from esc.streams.connectors.stream_corpus import CorpusDirs
from esc.streams.local_files import write_atomic
from esc.streams.readers import SourceFile, format_for

PROFILED_HEADER = "esc-profiled"
"""A record message header: its file was profiled whole (value ``file``); workers extract it without profiling."""

PROFILED_VALUE = b"file"

ProfileFile = Callable[[SourceFile, str, int], Awaitable[tuple[int, dict[str, int]] | None]]
"""Profile a file and send its profile update, awaited until it is durable: ``(records, key conflicts)``, or
None when the file must go record by record (the runtime's hook; arguments: file, content hash, watermark offset)."""

COLUMNAR_FORMATS = ("csv", "tsv")
FILES_AT_ONCE = 2
"""Files of a scan profiled at once (the Faust runtime's profiling pool has as many processes): TPC-H SF 0.1's
lineitem alone takes ~10 s of the ~14 s its eight files take one after another."""


class FileProfiles(FileBatches):
    """The first pass of a scan (mixed into ``FileWatcher``, which provides the attributes declared here)."""

    root: Path
    manifest: Manifest
    corpora: CorpusDirs
    profile_file: ProfileFile | None
    _profiled: dict[str, str]  # file -> the version profiled in this scan's first pass
    _profiled_path: Path

    async def _open_scan(self) -> None: ...
    def _scan_members(self, rel: str, sources: list[str]) -> str | None: ...
    async def end_scan(self) -> None: ...

    async def profile_first(self, paths: list[Path], stable: set[Path]) -> None:
        """Pass 1 over a scan's paths (within ``batched``); ends the scan when every changed file was profiled."""
        self._profiled = {}
        if self.profile_file is None:
            return
        todo: list[tuple[SourceFile, str]] = []
        whole = True  # every path is unchanged or profiled
        for path in paths:
            candidate = await self._candidate(path, path in stable)
            if candidate is None:
                whole = False
            elif not isinstance(candidate, str):
                todo.append(candidate)
        if not todo:
            return
        offsets = self._offsets({sf.rel: digest for sf, digest in todo})
        await self._open_scan()
        hook, gate = self.profile_file, asyncio.Semaphore(FILES_AT_ONCE)

        async def profiled(sf: SourceFile, digest: str) -> tuple[int, dict[str, int]] | None:
            async with gate:
                return await hook(sf, digest, offsets[sf.rel])

        # the largest files start first (the gate lets them in in this order; the paths come smallest first,
        # ``folder_files.delivery_order``), so the scan waits for the longest one alone instead of it after the
        # others; completions go out in the scan's order
        runs = {sf.rel: asyncio.ensure_future(profiled(sf, d)) for sf, d in reversed(todo)}
        try:
            for sf, digest in todo:
                got = await runs[sf.rel]
                if got is None:
                    whole = False
                    continue
                records, conflicts = got
                self._profiled[sf.rel] = digest
                scan = self._scan_members(sf.rel, [sf.source])
                done = SourceComplete.for_file(sf.rel, {sf.source: records}, digest, scan, {sf.source: conflicts})
                await self._complete(done)
        finally:
            for run in runs.values():
                run.cancel()
            await asyncio.gather(*runs.values(), return_exceptions=True)
        await self._settle_batch()  # the completions go out now, not after the records
        if whole:
            await self.end_scan()

    async def _candidate(self, path: Path, settled: bool) -> tuple[SourceFile, str] | str | None:
        """``(file, content hash)`` to profile, ``"unchanged"``, or None when ``process`` must decide alone."""
        rel = file_name(self.root, path)
        if rel is None:
            return "unchanged"  # never read
        if path.is_dir() and not path.is_symlink():
            return "unchanged"  # a folder (a change event names a new one): its files are paths of their own
        if not settled or not path.exists() or path.is_symlink() or not regular_file(path):
            return None
        try:
            if not path.resolve().is_relative_to(self.root):
                return None
            digest = await asyncio.to_thread(file_sha256, path)
        except (OSError, RuntimeError):
            return None
        fmt = format_for(path)
        if fmt is None or self.corpora.source_for(path, fmt) is not None:
            return None
        if self.manifest.hashes.get(rel) == digest:
            return "unchanged"
        if fmt not in COLUMNAR_FORMATS:
            return None
        return SourceFile(path=path, rel=rel, format=fmt, source=source_label(path.stem)), digest

    def _offsets(self, versions: dict[str, str]) -> dict[str, int]:
        """The watermark offset of each file version: the one kept for it, else a new one (saved before use)."""
        try:
            kept: dict[str, Any] = json.loads(self._profiled_path.read_text("utf-8"))
        except (OSError, ValueError):
            kept = {}
        out: dict[str, int] = {}
        base = time.time_ns()
        for i, (rel, digest) in enumerate(sorted(versions.items())):
            old = kept.get(rel)
            if isinstance(old, list) and len(old) == 2 and old[0] == digest:
                out[rel] = int(old[1])
            else:
                out[rel] = base + i
                kept[rel] = [digest, out[rel]]
        write_atomic(self._profiled_path, json.dumps(kept, sort_keys=True))
        return out

    def was_profiled(self, rel: str, digest: str) -> bool:
        """Whether pass 1 sent this file version's profile and completion (its records go unprofiled)."""
        return self._profiled.get(rel) == digest
