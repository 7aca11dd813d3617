"""The watch over source partitions that stopped delivering (streams/runtime/stream_watch.py)."""

from __future__ import annotations

import asyncio
import logging
from types import SimpleNamespace
from typing import Any

import pytest

from esc.streams.runtime.stream_watch import StreamWatch, seek_offsets, stuck

P0, P1, P2 = ("records", 0), ("records", 1), ("records", 2)


def test_a_partition_is_stuck_when_its_read_offset_stands_still_with_messages_beyond_and_nothing_buffered() -> None:
    since: dict[Any, tuple[int | None, float]] = {}
    reads = {P0: 6070, P1: 5943, P2: 6083}
    ends = {P0: 6204, P1: 6033, P2: 6084}  # P2 is caught up (6083 is its last message)
    assert stuck(0.0, reads, ends, {}, since, stall=20) == []  # first sight: the clock starts
    assert stuck(19.0, reads, ends, {}, since, stall=20) == []
    assert stuck(20.0, reads, ends, {P1: True}, since, stall=20) == [P0]  # P1's messages wait in a buffer
    assert stuck(30.0, reads, ends, {}, since, stall=20) == [P0]  # P1 starts over at 20 s
    assert stuck(40.0, reads, ends, {}, since, stall=20) == [P0, P1]
    # P0 moved: it starts over; a partition no longer assigned is forgotten
    assert stuck(45.0, {P0: 6100, P1: 5943}, ends, {}, since, stall=20) == [P1]
    assert P2 not in since and since[P0] == (6100, 45.0)


def test_nothing_read_since_a_seek_counts_from_the_start_of_the_partition() -> None:
    since: dict[Any, tuple[int | None, float]] = {}
    assert stuck(0.0, {P0: None, P1: None}, {P0: 5, P1: 0}, {}, since, stall=20) == []
    assert stuck(25.0, {P0: None, P1: None}, {P0: 5, P1: 0}, {}, since, stall=20) == [P0]  # P1 is empty


def test_a_stuck_partition_is_read_again_from_its_last_read_offset_else_committed_else_start() -> None:
    got = seek_offsets([P0, P1, P2], {P0: 6070, P1: None, P2: None}, {P1: 5941, P2: None})
    assert got == {P0: 6070, P1: 5941, P2: 0}


class FakeConsumer:
    def __init__(self) -> None:
        self.flow_active = True
        self.sought: list[dict[Any, int]] = []
        self.resumed: list[list[Any]] = []
        self._active_partitions: set[Any] = {P1}  # P0 left out of the fetch set
        self._paused_partitions: set[Any] = set()
        self._buffered_partitions: set[Any] = {P0}
        self._read_offset: dict[Any, int | None] = {P0: 6070, P1: 5943}
        self._committed_offset: dict[Any, int] = {P0: 6068}
        self.ends = {P0: 6204, P1: 5944, ("t-changelog", 0): 99}

    def assignment(self) -> set[Any]:
        return set(self.ends)

    def _is_changelog_tp(self, tp: Any) -> bool:
        return "changelog" in tp[0]

    async def highwaters(self, *tps: Any) -> dict[Any, int]:
        return {tp: self.ends[tp] for tp in tps}

    async def seek_wait(self, offsets: dict[Any, int]) -> None:
        self.sought.append(dict(offsets))
        self._read_offset.update(offsets)

    def resume_partitions(self, tps: list[Any]) -> None:
        self.resumed.append(list(tps))


def fake_app(queued: int = 0) -> Any:
    recovery = SimpleNamespace(in_recovery=False, completed=asyncio.Event())
    recovery.completed.set()
    channel = SimpleNamespace(queue=SimpleNamespace(qsize=lambda: queued))
    return SimpleNamespace(
        tables=SimpleNamespace(recovery=recovery),
        consumer=FakeConsumer(),
        consumer_generation_id=3,
        rebalancing=False,
        topics=SimpleNamespace(_tp_index={P0: [channel]}),
    )


def test_a_stuck_partition_is_sought_resumed_and_logged_once_per_stall(caplog: pytest.LogCaptureFixture) -> None:
    app = fake_app()
    watch = StreamWatch(stall=20)

    async def checks() -> list[list[Any]]:
        return [await watch.check(app, t) for t in (0.0, 10.0, 21.0, 30.0, 41.0)]

    with caplog.at_level(logging.WARNING, logger="esc.streams.runtime.stream_watch"):
        found = asyncio.run(checks())
    # P1 was caught up (5943 is its last message); P0 sought at 21 s, then given a whole stall again
    assert found == [[], [], [P0], [], [P0]]
    assert app.consumer.sought == [{P0: 6070}, {P0: 6070}]
    assert app.consumer.resumed == [[P0], [P0]] and P0 not in app.consumer._buffered_partitions
    assert "'active': False" in caplog.text and "'buffer_full': True" in caplog.text  # what the log tells


@pytest.mark.parametrize("state", ["buffered", "rebalancing", "flow stopped", "recovering", "new generation"])
def test_a_busy_worker_a_rebalance_or_a_recovery_is_left_alone(state: str) -> None:
    app = fake_app(queued=5 if state == "buffered" else 0)
    watch = StreamWatch(stall=20)

    async def checks() -> list[list[Any]]:
        out = [await watch.check(app, 0.0)]
        if state == "rebalancing":
            app.rebalancing = True
        elif state == "flow stopped":
            app.consumer.flow_active = False
        elif state == "recovering":
            app.tables.recovery.in_recovery = True
        elif state == "new generation":
            app.consumer_generation_id = 4
        out.append(await watch.check(app, 25.0))
        return out

    assert asyncio.run(checks()) == [[], []]
    assert app.consumer.sought == [] and app.consumer.resumed == []
