"""The pure parts of the Faust runtime's shared state (streams/runtime/seen_table.py, deferred_table.py):
sightings over a mapping any index can provide, staged seen-marks that survive a restart, and the keys of the
deferred-sources marks."""

from __future__ import annotations

import contextlib
from pathlib import Path
from types import SimpleNamespace

import pytest

from esc.agents.stores.seen import SeenRecords, content_hash, sightings
from esc.streams.runtime.deferred_table import mark_key, parse_key, source_of, worker_id
from esc.streams.runtime.seen_table import unfinished_not_acked


def test_sightings_over_a_shared_mapping() -> None:
    known = {b"s\x1f1": content_hash(b'{"a":1}')}
    flags, pairs = sightings([(b"s\x1f1", b'{"a":1}'), (b"s\x1f1", b'{"a":2}'), (b"s\x1f2", b"{}"), (b"s\x1f2", b"{}")], known)
    assert flags == [False, True, True, False]  # seen elsewhere; changed; new; twice in one batch
    assert [k for k, _ in pairs] == [b"s\x1f1", b"s\x1f1", b"s\x1f2", b"s\x1f2"]


def test_staged_marks_survive_a_restart_until_sent(tmp_path: Path) -> None:
    path = tmp_path / "seen.sqlite"
    s = SeenRecords(path)
    s.stage((), [(b"src", b"delta")], [(2, b"src\x1f1", b"h"), (3, b"src\x1f2", None)])
    s.close()
    again = SeenRecords(path)
    marks = again.staged_marks()
    assert [m for _, m in marks] == [(2, b"src\x1f1", b"h"), (3, b"src\x1f2", None)]
    assert [(k, v) for _, k, v in again.staged()] == [(b"src", b"delta")]
    again.marks_sent([i for i, _ in marks])
    assert again.staged_marks() == []
    assert again.first_sightings([(b"src\x1f1", b"x")]) == [True]  # marks are not this file's seen-index


def test_deferred_mark_keys_round_trip() -> None:
    me = worker_id("/state/a")
    assert me != worker_id("/state/b") and me == worker_id("/state/a")
    key = mark_key(3, "film.actor\x1e", me)
    assert parse_key(key) == (3, "film.actor\x1e", me)
    assert source_of(b"customer.payment\x1f17") == "customer.payment"


def test_a_batch_cut_short_is_never_acknowledged() -> None:
    events = [SimpleNamespace(message=SimpleNamespace(acked=False)) for _ in range(3)]
    with pytest.raises(RuntimeError), unfinished_not_acked(events):
        raise RuntimeError("stopped")
    assert all(e.message.acked for e in events)  # Faust's ack skips a message marked acked: nothing committed
    done = [SimpleNamespace(message=SimpleNamespace(acked=False))]
    with contextlib.suppress(Exception), unfinished_not_acked(done):
        pass
    assert not done[0].message.acked
