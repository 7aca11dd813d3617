from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from esc.agents.stores.seen import SeenRecords


def test_redelivery_is_seen_once_changes_are_new_and_state_survives_reopen(tmp_path: Path) -> None:
    path = tmp_path / "seen.sqlite"
    s = SeenRecords(path)
    items = [(f"src\x1f{i}".encode(), f'{{"v": {i}}}'.encode()) for i in range(1200)]
    assert all(s.first_sightings(items))
    assert all(s.first_sightings(items))  # not remembered until the caller says its results are durable
    s.remember(items)
    assert not any(s.first_sightings(items))  # the same records again: nothing new
    changed = [(items[0][0], b'{"v": "changed"}'), items[1]]
    assert s.first_sightings(changed) == [True, False]
    s.remember(changed)
    s.close()
    reopened = SeenRecords(path)  # a restarted worker remembers
    assert reopened.first_sightings([items[5], (b"src\x1fnew", b"{}")]) == [False, True]
    reopened.forget([items[5][0]])  # retracted: its return is new evidence
    assert reopened.first_sightings([items[5]]) == [True]


def test_duplicates_inside_one_batch_count_once() -> None:
    s = SeenRecords()
    assert s.first_sightings([(b"k", b"a"), (b"k", b"a"), (b"k", b"b")]) == [True, False, True]
    s.remember([(b"k", b"b")])
    assert s.first_sightings([(b"k", b"a"), (b"k", b"b")]) == [True, False]


def test_check_hands_back_the_hashes_to_remember() -> None:
    s = SeenRecords()
    items = [(b"k1", b"a"), (b"k2", b"b")]
    flags, pairs = s.check(items)
    assert flags == [True, True] and [k for k, _ in pairs] == [b"k1", b"k2"]
    s.remember_hashes(pairs)
    assert s.first_sightings(items) == [False, False]
    assert s.check([(b"k1", b"changed")])[0] == [True]


def test_staged_updates_survive_a_crash_with_their_records_remembered(tmp_path: Path) -> None:
    path = tmp_path / "seen.sqlite"
    s = SeenRecords(path)
    items = [(b"src\x1f1", b"a"), (b"src\x1f2", b"b")]
    _, pairs = s.check(items)
    s.stage(pairs, [(b"src", b"delta-1"), (b"src", b"delta-2")])
    s.close()  # a crash after the transaction, before the send
    reopened = SeenRecords(path)
    assert reopened.first_sightings(items) == [False, False]  # never re-profiled ...
    pending = reopened.staged()
    assert [(k, v) for _, k, v in pending] == [(b"src", b"delta-1"), (b"src", b"delta-2")]  # ... but re-sent
    reopened.sent([pending[0][0]])
    assert [v for _, _, v in reopened.staged()] == [b"delta-2"]
    reopened.sent([pending[1][0]])
    assert reopened.staged() == []


def test_a_failed_stage_remembers_nothing() -> None:
    s = SeenRecords()
    _, pairs = s.check([(b"k", b"a")])
    with pytest.raises(sqlite3.IntegrityError):  # v NOT NULL: the transaction fails as a whole
        s.stage(pairs, [(b"src", None)])  # type: ignore[list-item]
    assert s.first_sightings([(b"k", b"a")]) == [True] and s.staged() == []


def test_a_resent_record_with_a_new_event_time_is_not_new_one_of_a_new_file_version_is() -> None:
    """A connector re-sending a file after a crash stamps a new event_time: the row says the same, so it counts
    once. A new file version (file_hash) is evidence of that version, row by row."""
    import json

    def envelope(payload: dict[str, str], sent: str, file_hash: str) -> bytes:
        return json.dumps(
            {
                "source": "T",
                "record_id": "T.csv:row=5",
                "payload": payload,
                "event_time": sent,
                "format": "csv",
                "location": {"file": "T.csv", "row": 5},
                "file_hash": file_hash,
            }
        ).encode()

    s = SeenRecords()
    first = envelope({"id": "5", "name": "a"}, "2026-12-03T05:38:56Z", "aaa")
    s.remember([(b"T\x1fT.csv:row=5", first)])
    again = envelope({"id": "5", "name": "a"}, "2026-12-03T05:39:12Z", "aaa")
    edited = envelope({"id": "5", "name": "b"}, "2026-12-03T05:39:12Z", "aaa")
    new_version = envelope({"id": "5", "name": "a"}, "2026-12-03T05:39:12Z", "bbb")
    key = b"T\x1fT.csv:row=5"
    assert s.first_sightings([(key, again), (key, edited), (key, new_version)]) == [False, True, True]
    assert s.first_sightings([(b"T\x1fT.csv:row=5", b"not json")]) == [True]  # hashed as it is
