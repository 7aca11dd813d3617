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

from dataclasses import dataclass, field

from esc.agents.contract_agent import SourceComplete

FILES_PER_BATCH = 64
"""Files delivered before their completions go out (bounds what a crash re-delivers and how long a source of an
early file waits for its completion)."""


@dataclass
class FileBatch:
    """What the files delivered since the last settle still owe: completions to send, scan state and manifest
    to write."""

    limit: int = FILES_PER_BATCH
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
