"""Files profiled before their records (streams/connectors/file_profiles.py): the drop folder's first pass sends each
CSV file's profile update and completion before any record, ends the scan when every file was profiled, marks the
records it then sends as profiled, and sends one profile update per file version across a crash."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from esc.agents.contract_agent import ContractAgent
from esc.agents.file_profile import FILE_STREAM, profile_file
from esc.agents.pipeline import profile_messages
from esc.streams.connectors.base import Emission
from esc.streams.connectors.file_watcher import FileWatcher
from esc.streams.readers import SourceFile

ORDERS = "order_id,customer_id,total\n" + "".join(f"{i},{i % 7},{i}.50\n" for i in range(1, 301))
CUSTOMERS = "customer_id,name\n" + "".join(f"{i},Customer {i}\n" for i in range(7))


class Recorder:
    """The connector's callbacks, recording what it sends in order; ``profile_file`` is the runtime's hook."""

    def __init__(self, data: Path, state: Path, fail_after: int | None = None) -> None:
        self.sent: list[tuple[str, Any]] = []
        self.fail_after = fail_after
        self.watcher = FileWatcher(data, state, self.emit, self.dead, settle=0.01, completed=self.completed,
                                   scanned=self.scanned)  # fmt: skip
        self.watcher.profile_file = self.profile

    async def profile(self, sf: SourceFile, digest: str, offset: int) -> tuple[int, dict[str, int]] | None:
        got = profile_file(sf, digest, offset, 500)
        if isinstance(got, str):
            return None
        self.sent.append(("profile", got.delta))
        return got.delta.records, got.conflicts

    async def emit(self, msg: Emission) -> None:
        if self.fail_after is not None and len(self.records()) >= self.fail_after:
            raise RuntimeError("the worker dies")
        self.sent.append(("record", msg))

    async def dead(self, d: Any) -> None:
        self.sent.append(("dead", d))

    async def completed(self, done: list[Any]) -> None:
        self.sent.extend(("complete", c) for c in done)

    async def scanned(self, done: Any) -> None:
        self.sent.append(("scan", done))

    def kinds(self) -> list[str]:
        out: list[str] = []
        for kind, _ in self.sent:
            if not out or out[-1] != kind:
                out.append(kind)
        return out

    def records(self) -> list[Emission]:
        return [m for k, m in self.sent if k == "record"]


def _drop(tmp_path: Path, **files: str) -> tuple[Path, Path]:
    data, state = tmp_path / "drop", tmp_path / "state"
    data.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (data / name).write_text(text)
    return data, state


def test_profiles_completions_and_the_scan_end_go_before_any_record(tmp_path: Path) -> None:
    data, state = _drop(tmp_path, **{"orders.csv": ORDERS, "customers.csv": CUSTOMERS})
    rec = Recorder(data, state)
    asyncio.run(rec.watcher.scan_once())
    assert rec.kinds() == ["profile", "complete", "scan", "record"]
    assert len(rec.records()) == 307 and all(m.profiled for m in rec.records())
    completions = {c.source: c.records for k, c in rec.sent if k == "complete"}
    assert completions == {"orders": 300, "customers": 7}
    (scan,) = [s for k, s in rec.sent if k == "scan"]
    assert scan.members == 2
    deltas = [d for k, d in rec.sent if k == "profile"]
    assert {d.watermark.stream for d in deltas} == {FILE_STREAM}


def test_a_file_the_columnar_reader_declines_keeps_the_scan_open_and_is_profiled_by_the_workers(
    tmp_path: Path,
) -> None:
    data, state = _drop(tmp_path, **{"orders.csv": ORDERS, "notes.json": '[{"id": 1, "text": "a note"}]'})
    rec = Recorder(data, state)
    asyncio.run(rec.watcher.scan_once())
    kinds = rec.kinds()
    assert kinds[:2] == ["profile", "complete"] and kinds[-1] == "scan"  # the scan ends after every record
    by_source = {m.source: m.profiled for m in rec.records()}
    assert by_source == {"orders": True, "notes": False}
    completions = sorted((c.source, c.records) for k, c in rec.sent if k == "complete")
    assert completions == [("notes", 1), ("orders", 300)]


def test_a_crash_after_the_profiles_sends_the_same_update_again_which_the_agent_drops(tmp_path: Path) -> None:
    data, state = _drop(tmp_path, **{"orders.csv": ORDERS, "customers.csv": CUSTOMERS})
    first = Recorder(data, state, fail_after=100)
    with pytest.raises(RuntimeError):
        asyncio.run(first.watcher.scan_once())
    again = Recorder(data, state)
    asyncio.run(again.watcher.scan_once())  # the manifest does not name the files yet: both are delivered again
    assert len(again.records()) == 307
    one = sorted((d.source, d.watermark.offset) for k, d in first.sent if k == "profile")
    two = sorted((d.source, d.watermark.offset) for k, d in again.sent if k == "profile")
    assert one == two  # the same version, the same mark
    agent = ContractAgent()
    deltas = [d for k, d in first.sent + again.sent if k == "profile"]
    agent.apply(deltas, [c for k, c in first.sent + again.sent if k == "complete"])
    assert agent.dropped == 2 and agent.sources["orders"].profile.records == 300
    (data / "orders.csv").write_text(ORDERS + "301,3,1.00\n")  # a new version gets a new mark
    third = Recorder(data, state)
    asyncio.run(third.watcher.scan_once())
    (delta,) = [d for k, d in third.sent if k == "profile"]
    assert delta.source == "orders" and delta.watermark.offset not in dict(two).values()
    assert [m.source for m in third.records()] == ["orders"] * 301


def test_a_whole_file_profile_is_the_record_paths_profile(tmp_path: Path) -> None:
    """The contract agent sees the same evidence: the update equals the record path's for a file-sized batch."""
    data, state = _drop(tmp_path, **{"orders.csv": ORDERS})
    rec = Recorder(data, state)
    rec.watcher.profile_file = None  # the record path
    asyncio.run(rec.watcher.scan_once())
    values: list[bytes | None] = [m.value for m in rec.records()]
    (want,) = profile_messages(values, "r/0", 0, len(values) - 1)
    sf = SourceFile(path=data / "orders.csv", rel="orders.csv", format="csv", source="orders")
    digest = json.loads(rec.records()[0].value)["file_hash"]
    got = profile_file(sf, digest, 1, 500)
    assert not isinstance(got, str)
    assert got.delta.profile == want.profile
    assert got.delta.meta == want.meta and got.delta.records == want.records == 300


def test_a_profiled_files_records_go_through_the_runtimes_sender_and_a_refusal_falls_back(tmp_path: Path) -> None:
    """The Faust worker sends a profiled file's records from its profiling child (``send_profiled``): the
    connector then emits none of them itself and records the keys the sender returns; when the sender gives
    up (None), the file goes record by record as before. No completion is sent twice either way."""
    data, state = _drop(tmp_path, **{"orders.csv": ORDERS, "customers.csv": CUSTOMERS})
    rec = Recorder(data, state)
    sent: dict[str, list[str]] = {}

    async def send_profiled(sf: SourceFile, digest: str) -> list[str] | None:
        if sf.source == "customers":
            return None  # e.g. the child died: record by record
        keys = [f"{sf.source}\x1f{sf.rel}:row={i + 1}:line={i + 2}" for i in range(300)]
        sent[sf.rel] = keys
        return keys

    rec.watcher.send_profiled = send_profiled
    asyncio.run(rec.watcher.scan_once())
    assert list(sent) == ["orders.csv"]
    assert {m.source for m in rec.records()} == {"customers"} and len(rec.records()) == 7
    completions = sorted((c.source, c.records) for k, c in rec.sent if k == "complete")
    assert completions == [("customers", 7), ("orders", 300)]
    assert rec.watcher._load_keys("orders.csv") == sent["orders.csv"]  # what a later deletion retracts


def test_a_scans_files_are_profiled_two_at_a_time_the_largest_first(tmp_path: Path) -> None:
    from esc.streams.connectors.file_profiles import FILES_AT_ONCE

    others = "customer_id,name\n" + "".join(f"{i},Other {i}\n" for i in range(5))
    data, state = _drop(tmp_path, **{"a.csv": CUSTOMERS, "b.csv": ORDERS, "c.csv": others})
    rec = Recorder(data, state)
    started: list[str] = []
    running: list[int] = [0, 0]  # now, at most

    async def hook(sf: SourceFile, digest: str, offset: int) -> tuple[int, dict[str, int]] | None:
        started.append(sf.rel)
        running[0] += 1
        running[1] = max(running)
        try:
            await asyncio.sleep(0.05)  # the child's work: the next file may start meanwhile
            return await rec.profile(sf, digest, offset)
        finally:
            running[0] -= 1

    rec.watcher.profile_file = hook
    asyncio.run(rec.watcher.scan_once())
    assert started[0] == "b.csv" and running[1] == FILES_AT_ONCE == 2  # the largest first, two at once, not three
    assert sorted(c.file for kind, c in rec.sent if kind == "complete") == ["a.csv", "b.csv", "c.csv"]
    assert rec.kinds() == ["profile", "complete", "scan", "record"]
    assert len(rec.records()) == 7 + 300 + 5 and all(m.profiled for m in rec.records())


def test_a_new_folder_among_the_changed_paths_still_ends_the_scan_before_any_record(tmp_path: Path) -> None:
    # Files dropped into a running worker's folder in a new subfolder: the change events name the folder too.
    # It is not a file to profile; the scan must still end after the profiles, not after every record was sent
    # (then each record was deferred until the contract came, and written again in a backfill).
    data, state = _drop(tmp_path)
    rec = Recorder(data, state)
    sub = data / "tables"
    sub.mkdir()
    (sub / "orders.csv").write_text(ORDERS)
    (sub / "customers.csv").write_text(CUSTOMERS)
    asyncio.run(rec.watcher._deliver_changes({sub, sub / "orders.csv", sub / "customers.csv"}))
    assert rec.kinds() == ["profile", "complete", "scan", "record"]
    assert len(rec.records()) == 307 and all(m.profiled for m in rec.records())
