"""Files delivered together (``FileWatcher.batched``): one producer flush, one scan-state write, one send of the
completions and one manifest write per batch of files instead of per file.

A folder of 500 small files cost 500 flushes (each waiting for the broker's acknowledgement; in the embedded
runtime each one ran the whole pipeline once), 500 awaited completion sends and 500 rewrites of a growing scan
state and manifest. The order of what is durable is the same as file by file: a file's records (and tombstones)
are acknowledged before its completion is sent, the scan state naming the file is written before its completion,
and the manifest names the file as done only after its completion was sent. A crash in between re-delivers the
batch's files (record ids are deterministic; the contract agent drops completions it applied).
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from esc.agents.contract_agent import SourceComplete
from esc.streams.connectors.base import Connector
from esc.streams.connectors.folder_files import Manifest
from esc.streams.local_files import write_atomic

FILES_PER_BATCH = 64
"""Files delivered before their completions go out (bounds what a crash re-delivers and how long a source of an
early file waits for its completion)."""


@dataclass
class FileBatch:
    """What the files delivered since the last settle still owe: completions to send, scan state and manifest
    to write."""

    limit: int = FILES_PER_BATCH
    settled: dict[str, str] = field(default_factory=dict)  # the manifest as of the last settle (restored on error)
    files: int = 0
    completions: list[SourceComplete] = field(default_factory=list)
    scan_dirty: bool = False
    manifest_dirty: bool = False

    def full(self) -> bool:
        return self.files >= self.limit

    def clear(self) -> None:
        self.files = 0
        self.completions = []
        self.scan_dirty = self.manifest_dirty = False


class FileBatches(Connector):
    """A connector delivering files in batches (``FileWatcher``: it provides the attributes declared here)."""

    manifest: Manifest
    completed: Callable[[list[SourceComplete]], Awaitable[None]] | None
    _batch: FileBatch | None
    _scan: dict[str, Any] | None
    _scan_path: Path


    @contextlib.asynccontextmanager
    async def batched(self, files: int = FILES_PER_BATCH) -> AsyncIterator[None]:
        """Within: every ``files`` files (and at the end) one flush, one scan-state write, one send of their
        completions and one manifest write. An error leaves the open batch unsent (its files are delivered again)."""
        if self._batch is not None:  # already batching
            yield
            return
        self._batch = FileBatch(files, settled=dict(self.manifest.hashes))
        try:
            yield
            await self._settle_batch()
        except BaseException:
            # files whose completions were not sent are not done: a later manifest write must not say they are
            self.manifest.hashes = self._batch.settled
            raise
        finally:
            self._batch = None

    async def _settle_batch(self) -> None:
        batch = self._batch
        if batch is None:
            return
        await self._flush()  # the batch's records and tombstones are acknowledged first
        if batch.scan_dirty and self._scan is not None:
            write_atomic(self._scan_path, json.dumps(self._scan))
        if batch.completions and self.completed is not None:
            await self.completed(batch.completions)
        if batch.manifest_dirty:
            self.manifest.save()
        batch.clear()
        batch.settled = dict(self.manifest.hashes)

    async def _file_done(self) -> None:
        """A file was delivered (its manifest entry set): in a batch, settle it when full; else save now."""
        if self._batch is None:
            self.manifest.save()
            return
        self._batch.manifest_dirty = True
        self._batch.files += 1
        if self._batch.full():
            await self._settle_batch()

    async def _complete(self, done: list[SourceComplete]) -> None:
        if self.completed is None or not done:
            return
        if self._batch is not None:
            self._batch.completions.extend(done)
        else:
            await self.completed(done)
