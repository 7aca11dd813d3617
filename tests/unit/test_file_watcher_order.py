from __future__ import annotations

from pathlib import Path

from esc.streams.connectors.file_watcher import delivery_order


def test_deletions_first_then_small_files_before_large_ones(tmp_path: Path) -> None:
    big = tmp_path / "a_lineitem.csv"
    big.write_text("x" * 5000)
    small = tmp_path / "z_region.csv"
    small.write_text("x" * 10)
    mid = tmp_path / "m_orders.csv"
    mid.write_text("x" * 500)
    gone = tmp_path / "deleted.csv"
    assert delivery_order([big, mid, gone, small]) == [gone, small, mid, big]


def test_a_scan_tags_its_completions_and_is_closed_once_resumed_after_a_crash(tmp_path: Path) -> None:
    import asyncio
    from typing import Any

    from esc.streams.connectors.file_watcher import FileWatcher

    data, state = tmp_path / "drop", tmp_path / "state"
    data.mkdir()
    (data / "a.csv").write_text("id\n1\n2\n")
    (data / "b.csv").write_text("id\n1\n")
    sent: list[Any] = []

    async def emit(msg: Any) -> None:
        pass

    async def dead(d: Any) -> None:
        sent.append(("dead", d))

    async def completed(done: list[Any]) -> None:
        sent.extend(done)

    async def scanned(done: Any) -> None:
        sent.append(done)

    def watcher() -> FileWatcher:
        return FileWatcher(data, state, emit, dead, settle=0.01, completed=completed, scanned=scanned)

    first = watcher()
    first.begin_scan()
    asyncio.run(first.process(data / "a.csv"))  # then the worker dies mid-scan
    again = watcher()
    asyncio.run(again.scan_once())  # resumes the scan: b.csv joins it, a.csv is in the manifest already
    completions = [c for c in sent if hasattr(c, "file")]
    (scan,) = [c for c in sent if hasattr(c, "members")]
    assert [c.file for c in completions] == ["a.csv", "b.csv"]
    assert {c.scan for c in completions} == {scan.scan} and scan.members == 2
    assert all(c.file_hash for c in completions)
    sent.clear()
    asyncio.run(watcher().scan_once())  # nothing changed: no completion, no scan message
    assert sent == []
