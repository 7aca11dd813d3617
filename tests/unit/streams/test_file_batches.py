"""Files delivered in batches (streams/connectors/file_batch.py): one flush and one send of completions per batch,
in the order that keeps a crash safe; a failed batch leaves its files undelivered in the manifest."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from esc.streams.connectors.file_watcher import FileWatcher


def _drop(data: Path, files: int) -> None:
    data.mkdir()
    for i in range(files):
        (data / f"s{i:02d}.csv").write_text(f"id{i},v\n1,a\n2,b\n")


def _watcher(data: Path, state: Path, events: list[Any], fail_at: int | None = None) -> FileWatcher:
    emitted = [0]

    async def emit(msg: Any) -> None:
        emitted[0] += 1
        if fail_at is not None and emitted[0] > fail_at:
            raise ConnectionError("broker gone")
        events.append(("record", msg.source))

    async def dead(d: Any) -> None:
        events.append(("dead", d.reason))

    async def flush() -> None:
        events.append(("flush", None))

    async def completed(done: list[Any]) -> None:
        events.append(("complete", [c.file for c in done]))

    return FileWatcher(data, state, emit, dead, flush, settle=0.01, completed=completed)


def test_a_batch_flushes_once_then_sends_its_completions_then_writes_the_manifest(tmp_path: Path) -> None:
    data, state, events = tmp_path / "drop", tmp_path / "state", []  # type: list[Any]
    _drop(data, 5)
    w = _watcher(data, state, events)

    async def run() -> None:
        async with w.batched(files=3):
            for p in sorted(data.iterdir()):
                await w.process(p)

    asyncio.run(run())
    kinds = [k for k, _ in events]
    assert kinds.count("flush") == 2 and kinds.count("complete") == 2  # 3 files, then 2
    first_complete = kinds.index("complete")
    assert kinds[first_complete - 1] == "flush" and kinds[:first_complete - 1].count("record") == 6
    assert [files for k, files in events if k == "complete"] == [["s00.csv", "s01.csv", "s02.csv"],
                                                                  ["s03.csv", "s04.csv"]]  # fmt: skip
    manifest = json.loads((state / "connector" / "manifest.json").read_text("utf-8"))
    assert sorted(manifest) == [f"s{i:02d}.csv" for i in range(5)]


def test_a_failed_batch_leaves_its_files_to_be_delivered_again(tmp_path: Path) -> None:
    data, state, events = tmp_path / "drop", tmp_path / "state", []  # type: list[Any]
    _drop(data, 5)
    w = _watcher(data, state, events, fail_at=7)  # the 4th file's second record fails (batches of 2 files)

    async def run() -> None:
        async with w.batched(files=2):
            for p in sorted(data.iterdir()):
                await w.process(p)

    with pytest.raises(ConnectionError):
        asyncio.run(run())
    assert [files for k, files in events if k == "complete"] == [["s00.csv", "s01.csv"]]
    assert sorted(w.manifest.hashes) == ["s00.csv", "s01.csv"]  # s02 was delivered but its completion not sent
    manifest = json.loads((state / "connector" / "manifest.json").read_text("utf-8"))
    assert sorted(manifest) == ["s00.csv", "s01.csv"]
    events.clear()
    again = _watcher(data, state, events)
    asyncio.run(again.scan_once())  # a restart delivers what the failed batch held
    assert [f for k, files in events if k == "complete" for f in files] == ["s02.csv", "s03.csv", "s04.csv"]
