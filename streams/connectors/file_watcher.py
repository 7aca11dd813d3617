"""Drop-folder connector: watches a directory (watchfiles) and emits one envelope per record read.

- Half-written files: a file is read only once its size and mtime have been stable for ``settle`` seconds.
- Re-delivery and restarts: a manifest of content hashes (``<state>/connector/manifest.json``) is updated only
  after every record of the file was acknowledged, so a restart re-sends at most the files in flight; record ids
  are deterministic (file + location), so downstream MERGEs never duplicate.
- Modified and deleted files: the keys a file produced are kept (``<state>/connector/keys/``); keys that a new
  version of the file no longer produces, and all keys of a deleted file, are retracted (tombstones on the
  compacted records topic, which also retract the source records downstream).
- After the last record of a file, one ``SourceComplete`` per source it produced tells the contract agent that
  the source's evidence for that file is complete (keys and foreign keys are inferred over settled sources).
- Big files are streamed by the readers, in batches read off the event loop.
- Only regular files inside the folder are ever opened: a symbolic link that leads out of it, and a FIFO, socket
  or device file (opening a FIFO blocks until someone writes to it) are refused with one dead letter each.
- Each source gets at most ``ESC_MAX_FIELDS`` fields (``contract.field_cap``); the rest of a record's values go to
  its overflow field.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import os
import uuid
from collections import Counter
from collections.abc import Awaitable, Callable, Iterable, Iterator
from functools import partial
from itertools import islice
from pathlib import Path
from typing import Any

from esc.agents.contract_agent import SourceComplete
from esc.agents.scan_groups import ScanComplete
from esc.contract.key_witness import KeyWitness
from esc.contract.labels import record_label, source_label
from esc.contract.records import Record, Rejected
from esc.streams.connectors.base import Emission, Emit, EmitDead, Flush
from esc.streams.connectors.delivery_retry import until_done
from esc.streams.connectors.file_batch import FileBatch
from esc.streams.connectors.file_profiles import FileProfiles, ProfileFile
from esc.streams.connectors.folder_files import (  # noqa: F401  (drop_files, delivery_order: re-exported)
    Manifest,
    NotRegularFile,
    delivery_order,
    drop_files,
    file_name,
    file_sha256,
    regular_file,
)
from esc.streams.connectors.stream_corpus import FILE_FIELD, CorpusDirs
from esc.streams.events import DeadLetter, envelope_for
from esc.streams.limits import max_fields as configured_max_fields
from esc.streams.local_files import write_atomic
from esc.streams.readers import SourceFile, format_for, read

Retract = Callable[[list[str]], Awaitable[None]]
Completed = Callable[[list[SourceComplete]], Awaitable[None]]
Scanned = Callable[[ScanComplete], Awaitable[None]]
Opened = Callable[[str], Awaitable[None]]
Columnar = tuple[list[str], Counter[str], dict[str, dict[str, int]]]  # record keys, records and conflicts per source

log = logging.getLogger(__name__)
BATCH = 500


def emission_for(record: Record, rel: str, file_hash: str, profiled: bool = False) -> Emission | Rejected:
    """The record's message, or a rejection when it cannot be one (a lone surrogate in a value has no UTF-8 form;
    nesting deeper than the JSON encoder's recursion limit): one bad record never stops its file. ``profiled``:
    its file's profile update was sent already (``file_profiles.py``)."""
    try:
        return Emission.of(envelope_for(record, rel, file_hash), profiled)
    except (ValueError, RecursionError) as exc:  # UnicodeEncodeError and pydantic's serialization errors included
        reason = f"record cannot be serialized as JSON: {type(exc).__name__}: {exc}"
        return Rejected(file=rel, reason=reason[:500], location=record.location,
                        raw=repr(record.values)[:2000].encode("utf-8", "backslashreplace").decode("utf-8"))


def dead_letter_for(rej: Rejected) -> DeadLetter:
    return DeadLetter.of(
        rej.reason,
        stage="reader",
        original=rej.raw,
        source=source_label(Path(rej.file).stem),
        location=record_label(rej.location.render() if rej.location else rej.file),
    )


class FileWatcher(FileProfiles):
    def __init__(
        self,
        root: Path,
        state_dir: Path,
        emit: Emit,
        dead_letter: EmitDead,
        flush: Flush | None = None,
        settle: float = 0.5,
        retract: Retract | None = None,
        completed: Completed | None = None,
        scanned: Scanned | None = None,
        max_fields: int | None = None,
        opened: Opened | None = None,
        corpora: CorpusDirs | None = None,
    ) -> None:
        super().__init__(emit, dead_letter, flush)
        self.max_fields = configured_max_fields() if max_fields is None else max_fields
        self.root = root.resolve()
        self.settle = settle
        self.manifest = Manifest(state_dir / "connector" / "manifest.json")
        self.keys_dir = state_dir / "connector" / "keys"
        self.retract = retract
        self.completed = completed
        self.scanned = scanned
        self.opened = opened
        self.corpora = CorpusDirs() if corpora is None else corpora  # corpus detection (stream_corpus.py)
        self.files_done = 0
        self._scan_path = state_dir / "connector" / "scan.json"
        self._scan: dict[str, Any] | None = None  # {"id": ..., "members": [[source, file], ...]} while scanning
        self._announced: str | None = None  # the scan whose opening this process sent
        # The embedded runtime's columnar path (streams/runtime/embedded_columnar.py): delivers a whole file and
        # returns its record keys and records per source, or None when the file must be read record by record.
        self.columnar: Callable[[SourceFile, str], Awaitable[Columnar | None]] | None = None
        self._batch: FileBatch | None = None  # files delivered together (batched)
        # The Faust worker's hook profiling a whole file before its records (streams/connectors/file_profiles.py)
        self.profile_file: ProfileFile | None = None
        # ... and its hook sending the records of a file profiled whole from there (streams/runtime/file_sender.py):
        # the keys sent (all delivered), or None when the file must be read record by record
        self.send_profiled: Callable[[SourceFile, str], Awaitable[list[str] | None]] | None = None
        self._profiled: dict[str, str] = {}
        self._profiled_path = state_dir / "connector" / "profiled.json"

    # -- public --------------------------------------------------------------------------------------------------
    async def run(self) -> None:
        from watchfiles import awatch

        self.root.mkdir(parents=True, exist_ok=True)
        await until_done(self.scan_once, "drop folder: the first scan")  # a failure is retried (delivery_retry.py)
        async for changes in awatch(self.root, debounce=300, step=50, recursive=True):
            paths = {Path(p) for _, p in changes}
            await until_done(partial(self._deliver_changes, paths), "drop folder: delivering changed files")

    async def _deliver_changes(self, paths: set[Path]) -> None:
        self.begin_scan()  # (a retry resumes the scan a failed attempt opened)
        await self._process_all(delivery_order(paths | self.corpora.siblings(paths)))
        await self.end_scan()

    async def scan_once(self) -> int:
        """Deliver every file under root that is new or changed since the manifest; returns files delivered."""
        self.begin_scan()
        delivered = await self._process_all(delivery_order(drop_files(self.root)))
        await self.end_scan()
        return delivered

    async def _process_all(self, paths: list[Path]) -> int:
        """Process paths in order, waiting for their stability once for all of them (a drop of 500 files waited
        ``settle`` seconds per file, one after another)."""
        stable = await self.settle_all([p for p in paths if p.exists() and not p.is_symlink()])
        async with self.batched():
            await self.profile_first(paths, stable)  # profiles and completions of whole files first (if hooked)
            return sum([await self.process(p, settled=p in stable) for p in paths])

    # -- scans: the files of one scan settle together (agents/scan_groups.py) ---------------------------------------
    def begin_scan(self) -> None:
        """Start a scan, or resume the one a crash interrupted (its completions already went out under its id)."""
        if self._scan is not None:
            return
        self.corpora.new_scan()
        try:
            self._scan = json.loads(self._scan_path.read_text("utf-8"))
        except (OSError, ValueError):
            self._scan = {"id": uuid.uuid4().hex, "members": []}

    async def end_scan(self) -> None:
        """Close the scan: tell the contract agent how many (source, file) completions it holds."""
        scan, self._scan = self._scan, None
        if scan is None:
            return
        if (scan["members"] or scan.get("opened")) and self.scanned is not None:
            await self.scanned(ScanComplete(scan=scan["id"], members=len(scan["members"])))
        self._scan_path.unlink(missing_ok=True)

    async def _open_scan(self) -> None:
        """Announce the scan before its first record (durably noted, so a resumed scan announces it again)."""
        if self._scan is None or self.opened is None or self._announced == self._scan["id"]:
            return
        self._scan["opened"] = True
        write_atomic(self._scan_path, json.dumps(self._scan))
        await self.opened(str(self._scan["id"]))
        self._announced = str(self._scan["id"])  # after a restart the open is sent again (idempotent)

    def _scan_members(self, rel: str, sources: Iterable[str]) -> str | None:
        """Add a file's sources to the open scan (durably, before their completions are sent); the scan id."""
        if self._scan is None:
            return None
        members = {tuple(m) for m in self._scan["members"]} | {(s, rel) for s in sources}
        self._scan["members"] = sorted(map(list, members))
        if self._batch is not None:
            self._batch.scan_dirty = True  # written before the batch's completions are sent
        else:
            write_atomic(self._scan_path, json.dumps(self._scan))
        return str(self._scan["id"])

    async def settle_all(self, paths: Iterable[Path]) -> set[Path]:
        """The paths whose size and mtime stay unchanged over one ``settle`` interval, waiting once for all of
        them (a one-shot ingest of 500 small files waited 500 intervals, one per file); a path still changing is
        left to :meth:`process`, which waits for it alone."""
        def stats() -> dict[Path, tuple[int, int] | None]:
            out: dict[Path, tuple[int, int] | None] = {}
            for p in paths:
                try:
                    st = p.stat()
                    out[p] = (st.st_size, st.st_mtime_ns)
                except OSError:
                    out[p] = None
            return out

        paths = list(paths)
        if not paths:
            return set()
        before = await asyncio.to_thread(stats)
        await asyncio.sleep(self.settle)
        after = await asyncio.to_thread(stats)
        return {p for p in paths if before[p] is not None and before[p] == after[p]}

    async def process(self, path: Path, settled: bool = False) -> int:
        """Deliver one file if it is new or changed (``settled``: its size and mtime were seen stable already)."""
        rel = file_name(self.root, path)
        if rel is None:
            return 0
        if not path.exists():
            if path.is_symlink():
                return await self._refuse(path, rel, "dangling", "a symbolic link that leads nowhere (a missing "
                                          "target or a loop of links)")
            if rel in self.manifest.hashes or self._keys_path(rel).exists():
                await self._drop_delivered(rel)
                self.manifest.hashes.pop(rel, None)
                await self._file_done()
            return 0
        try:
            outside = not path.resolve().is_relative_to(self.root)
        except (OSError, RuntimeError):  # a symbolic link loop
            outside = True
        if outside:
            return await self._refuse(path, rel, "outside", "a symbolic link to a file outside the drop folder "
                                      "(its target is not read)")
        if not regular_file(path):
            if path.is_dir():
                return 0  # a link to a folder inside: its files are listed under their own paths
            return await self._refuse(path, rel, "special", "not a regular file (a FIFO, socket or device file "
                                      "is never opened)")
        if not settled and not await self._settled(path):
            return 0
        try:
            digest = await asyncio.to_thread(file_sha256, path)
        except FileNotFoundError:
            return 0  # gone since it was listed: its deletion is the next change
        except OSError as exc:  # unreadable (permissions), or a special file put in its place
            return await self._refuse(path, rel, "unreadable", f"cannot read the file: {exc.strerror or exc}")
        fmt = format_for(path)
        corpus = self.corpora.source_for(path, fmt) if fmt is not None else None
        if self.manifest.hashes.get(rel) == digest and not self._regroup(rel, corpus):
            return 0
        if fmt is None:
            await self.dead_letter(
                DeadLetter.of(f"unsupported file: no reader for '{path.suffix}'", "connector", None, location=rel)
            )
            self.manifest.hashes[rel] = digest
            await self._file_done()
            return 0
        sf = SourceFile(path=path, rel=rel, format=fmt, source=corpus or source_label(path.stem))
        old = self._load_keys(rel)
        keys = await self._deliver(sf, digest, corpus is not None)
        await self._retract(sorted(set(old) - set(keys)))
        await self._gone(rel, self._sources_of(old) - self._sources_of(keys), digest)
        self._save_keys(rel, keys)
        self.manifest.hashes[rel] = digest
        self.files_done += 1
        await self._file_done()
        return 1

    # -- internals -----------------------------------------------------------------------------------------------
    async def _refuse(self, path: Path, rel: str, kind: str, why: str) -> int:
        """A file that is never read: a symbolic link (of the file or of a folder on its way) that leads out of the
        drop folder (``/etc/passwd`` linked into a drop folder must not become a queryable source), a special file,
        or one that cannot be opened. One dead letter per file and kind; the manifest remembers it so a restart
        does not refuse it again."""
        try:
            target = str(path.resolve())
        except (OSError, RuntimeError):
            target = os.fsdecode(os.readlink(path)) if path.is_symlink() else str(path)
        marker = f"refused:{kind}:{target}"
        if self.manifest.hashes.get(rel) == marker:
            return 0
        await self._drop_delivered(rel)  # what an earlier, readable version of the file delivered
        await self.dead_letter(DeadLetter.of(f"refused: {why}", "connector", None, location=rel))
        self.manifest.hashes[rel] = marker
        await self._file_done()
        return 0

    async def _drop_delivered(self, rel: str) -> None:
        """Retract every record the file's last delivered version produced (deleted, or now refused)."""
        old = self._load_keys(rel)
        await self._retract(old)
        await self._gone(rel, self._sources_of(old), None)
        self._keys_path(rel).unlink(missing_ok=True)

    async def _settled(self, path: Path) -> bool:
        """Wait until size and mtime stop changing (a writer still appending is not read half-way)."""
        try:
            last = path.stat()
            for _ in range(600):
                await asyncio.sleep(self.settle)
                now = path.stat()
                if (now.st_size, now.st_mtime_ns) == (last.st_size, last.st_mtime_ns):
                    return True
                last = now
        except FileNotFoundError:
            return False
        return False

    def _regroup(self, rel: str, corpus: str | None) -> bool:
        """An unchanged file delivered under its own name whose directory is a corpus now: deliver it again."""
        return corpus is not None and corpus not in self._sources_of(self._load_keys(rel))

    async def _deliver(self, sf: SourceFile, digest: str, corpus: bool = False) -> list[str]:
        """Emit every record of the file (a corpus member's top-level records name their file in
        ``FILE_FIELD``); returns the record keys it produced."""
        await self._open_scan()
        done = await self.columnar(sf, digest) if self.columnar is not None and not corpus else None
        if done is not None:
            scan = self._scan_members(sf.rel, done[1])
            await self._complete(SourceComplete.for_file(sf.rel, done[1], digest, scan, done[2]))
            return done[0]
        profiled = self.was_profiled(sf.rel, digest)  # its profile and completion went out in the first pass
        if profiled and not corpus and self.send_profiled is not None:
            sent = await self.send_profiled(sf, digest)
            if sent is not None:
                return sent
        items: Iterator[Record | Rejected] = read(sf, max_fields=self.max_fields)
        keys: list[str] = []
        counts: Counter[str] = Counter()
        witnesses: dict[str, KeyWitness] = {}

        def next_batch() -> list[Emission | Rejected]:  # in a thread: read, build and serialize envelopes
            out: list[Emission | Rejected] = []
            rows: dict[str, list[dict[str, Any]]] = {}
            for item in islice(items, BATCH):
                if isinstance(item, Rejected):
                    out.append(item)
                    continue
                if corpus and item.source == sf.source:
                    item.values.setdefault(FILE_FIELD, sf.rel)
                em = emission_for(item, sf.rel, digest, profiled)
                out.append(em)
                if not isinstance(em, Rejected) and not profiled:
                    rows.setdefault(item.source, []).append(item.values)
            for source, values in rows.items():  # exact repeats of key candidates over the whole file
                witnesses.setdefault(source, KeyWitness()).add_records(values)
            return out

        while True:
            batch = await asyncio.to_thread(next_batch)
            if not batch:
                break
            for item in batch:
                if isinstance(item, Rejected):
                    await self.dead_letter(dead_letter_for(item))
                else:
                    keys.append(item.key.decode("utf-8"))
                    counts[item.source] += 1
                    await self.emit(item)
        if self._batch is None:
            await self._flush()
        if self.completed is not None and counts and not profiled:
            scan = self._scan_members(sf.rel, counts)
            found = {s: w.conflicts() for s, w in witnesses.items()}
            await self._complete(SourceComplete.for_file(sf.rel, counts, digest, scan, found))
        return keys

    @staticmethod
    def _sources_of(keys: Iterable[str]) -> set[str]:
        return {k.split("\x1f", 1)[0] for k in keys}

    async def _gone(self, rel: str, sources: set[str], digest: str | None) -> None:
        """Tell the contract agent the file no longer yields these sources (deleted, or its new version lost them):
        a completion of 0 records removes the file's evidence from each source's profile."""
        if sources and self.completed is not None:
            await self._complete(SourceComplete.for_file(rel, dict.fromkeys(sorted(sources), 0), digest))

    async def _retract(self, keys: list[str]) -> None:
        if keys and self.retract is not None:
            await self.retract(keys)
            if self._batch is None:
                await self._flush()

    def _keys_path(self, rel: str) -> Path:
        return self.keys_dir / (hashlib.sha1(rel.encode("utf-8")).hexdigest() + ".keys")

    def _load_keys(self, rel: str) -> list[str]:
        path = self._keys_path(rel)
        if not path.exists():
            return []
        return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line]

    def _save_keys(self, rel: str, keys: list[str]) -> None:
        write_atomic(self._keys_path(rel), "".join(json.dumps(k) + "\n" for k in keys))
