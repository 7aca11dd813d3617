from __future__ import annotations

from pathlib import Path

from agents.stores.seen import SeenRecords


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
