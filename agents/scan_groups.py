"""Sources of one scan of a drop folder settle together, so keys never depend on the order files were read in.

Keys and foreign keys are inferred over settled sources, and a key once in the contract stays (add-only). Sources
settling one by one made the contract depend on delivery order: ``film_category`` read before ``film`` settled
while no foreign key into ``film`` was known yet, so it was keyed on ``film_id`` alone (unique in the data), where
a run that read ``film`` first found the association table's composite key. The file connector therefore tags the
end-of-file of every file of one scan (a start-up scan, one batch of watched changes, one ``esc ingest``) with the
scan's id and, after the last file, announces the scan closed with the number of (source, file) completions it
holds. A source with a completion in an open scan settles only once the scan is closed, all its completions have
arrived, and every source in it has all its records profiled: then they settle in the same step and are inferred
together, whatever the order of files, partitions and batches.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel


class ScanComplete(BaseModel):
    """Sent by a file connector after the last file of a scan: ``members`` (source, file) completions carry
    ``scan``."""

    scan: str
    members: int


@dataclass
class _Scan:
    members: set[tuple[str, str]] = field(default_factory=set)
    expected: int | None = None  # None: not closed yet


class ScanGroups:
    def __init__(self) -> None:
        self._scans: dict[str, _Scan] = {}

    def open(self, scan: str) -> None:
        """A connector started delivering the scan (sent before its first record): while any scan is open, the
        contract agent holds back versions that would only show pending file sources."""
        self._scans.setdefault(scan, _Scan())

    def any_open(self) -> bool:
        """Some scan is open, or closed but not released yet (see :meth:`holding`)."""
        return bool(self._scans)

    def note(self, scan: str, source: str, file: str) -> None:
        self._scans.setdefault(scan, _Scan()).members.add((source, file))

    def close(self, done: ScanComplete) -> None:
        self._scans.setdefault(done.scan, _Scan()).expected = done.members

    def holding(self, ready: Callable[[str], bool]) -> set[str]:
        """Sources that may not settle yet: members of a scan that is open, incomplete, or has a member source
        ``ready`` says is not done. Scans that are ready are forgotten (their sources settle now)."""
        out: set[str] = set()
        for scan_id, scan in sorted(self._scans.items()):
            sources = {s for s, _ in scan.members}
            if scan.expected is not None and len(scan.members) >= scan.expected and all(map(ready, sources)):
                del self._scans[scan_id]
            else:
                out |= sources
        return out

    def to_dict(self) -> dict[str, Any]:
        return {k: {"members": sorted(map(list, s.members)), "expected": s.expected}
                for k, s in sorted(self._scans.items())}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> ScanGroups:
        out = cls()
        for k, s in d.items():
            out._scans[k] = _Scan({(str(a), str(b)) for a, b in s["members"]}, s.get("expected"))
        return out
