"""The watch over a table recovery that stopped receiving its changelogs (streams/runtime/recovery_watch.py)."""

from __future__ import annotations

import asyncio
import logging
import time
from types import SimpleNamespace
from typing import Any

import pytest

from esc.streams.runtime.consumer_state import consumer_state
from esc.streams.runtime.recovery_watch import resume_offsets, stalled, unstick, watch

A, B, C = ("t-changelog", 0), ("t-changelog", 1), ("t-changelog", 2)


def test_only_partitions_still_needed_and_silent_for_the_whole_stall_are_stalled() -> None:
    now = 100.0
    remaining = {A: 50, B: 0, C: 7}
    # A: nothing since the start 20 s ago; B: done; C: a message 3 s ago
    assert stalled(now, 80.0, {C: 97.0}, remaining, {}, stall=15) == [A]
    assert stalled(now, 80.0, {A: 84.0, C: 84.0}, remaining, {}, stall=15) == [A, C]  # both silent 16 s
    assert stalled(now, 90.0, {}, remaining, {}, stall=15) == []  # recovery younger than the stall
    assert stalled(now, None, {}, remaining, {}, stall=15) == []  # no recovery
    assert stalled(now, 80.0, {}, remaining, {A: 95.0}, stall=15) == [C]  # A was sought 5 s ago: give it time


def test_recovery_reads_again_from_its_own_offset() -> None:
    assert resume_offsets({A: 1700, B: -1, C: None}, [A, B, C]) == {A: 1700, B: 0, C: 0}


class FakeConsumer:
    def __init__(self) -> None:
        self.flow_active = True
        self.sought: list[dict[Any, int]] = []
        self.resumed: list[list[Any]] = []
        self._active_partitions: set[Any] = set()
        self._paused_partitions = {A}
        self._buffered_partitions: set[Any] = set()
        self._read_offset = {A: 1750}
        self._committed_offset: dict[Any, int] = {}

    async def seek_wait(self, offsets: dict[Any, int]) -> None:
        self.sought.append(dict(offsets))

    def resume_partitions(self, tps: list[Any]) -> None:
        self.resumed.append(list(tps))


def fake_app(started_at: float) -> Any:
    recovery = SimpleNamespace(
        in_recovery=True,
        signal_recovery_start=asyncio.Event(),
        _recovery_started_at=started_at,
        _active_events_received_at={C: started_at + 19},
        active_offsets={A: 12, B: 40, C: 3},
        active_remaining=lambda: {A: 1688, B: 0, C: 5},
    )
    return SimpleNamespace(tables=SimpleNamespace(recovery=recovery), consumer=FakeConsumer())


def test_a_stalled_partition_is_sought_to_recoverys_offset_and_resumed_once_per_stall(
    caplog: pytest.LogCaptureFixture,
) -> None:
    app = fake_app(started_at=0.0)
    sought_at: dict[Any, float] = {}
    with caplog.at_level(logging.WARNING, logger="esc.streams.runtime.recovery_watch"):
        assert asyncio.run(unstick(app, sought_at, now=20.0, stall=15)) == [A]
    assert app.consumer.sought == [{A: 12}]
    assert app.consumer.resumed == [[A]]
    # the log says what the consumer looked like: A paused, its read offset above where recovery reads
    assert "'paused': True" in caplog.text and "'read_offset': 1750" in caplog.text
    # checked again 5 s later: A was just sought, so it is given another stall
    assert asyncio.run(unstick(app, sought_at, now=25.0, stall=15)) == []
    assert asyncio.run(unstick(app, sought_at, now=35.0, stall=15)) == [A, C]


@pytest.mark.parametrize("state", ["recovery over", "flow stopped", "rebalance again"])
def test_a_rebalance_or_a_finished_recovery_is_left_alone(state: str) -> None:
    app = fake_app(started_at=0.0)
    if state == "recovery over":
        app.tables.recovery.in_recovery = False
    elif state == "flow stopped":
        app.consumer.flow_active = False
    else:
        app.tables.recovery.signal_recovery_start.set()
    assert asyncio.run(unstick(app, {}, now=60.0, stall=15)) == []
    assert app.consumer.sought == [] and app.consumer.resumed == []


def test_the_state_report_never_raises() -> None:
    state = consumer_state(object(), [A])
    assert state["flow_active"] is None
    assert isinstance(state["faust"], str) and isinstance(state["aiokafka"], str)  # what went wrong, as text


def test_a_failing_check_does_not_end_the_watch(caplog: pytest.LogCaptureFixture) -> None:
    app = fake_app(started_at=time.monotonic() - 60)
    calls = {"n": 0}
    seek = app.consumer.seek_wait

    async def flaky_seek(offsets: dict[Any, int]) -> None:
        calls["n"] += 1
        if calls["n"] == 1:
            raise TimeoutError("Kafka is down")
        await seek(offsets)

    app.consumer.seek_wait = flaky_seek

    async def run() -> None:
        task = asyncio.ensure_future(watch(app, every=0.01, stall=15))
        for _ in range(500):
            await asyncio.sleep(0.01)
            if app.consumer.sought:
                break
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)

    with caplog.at_level(logging.WARNING, logger="esc.streams.runtime.recovery_watch"):
        asyncio.run(run())
    assert "the check failed" in caplog.text and app.consumer.sought  # the next check sought A
