from __future__ import annotations

import logging

import pytest

from esc.streams.runtime.step_watch import WAITING_FOR_BATCH, StepWatch


def test_a_stalled_step_warns_once_and_shows_in_the_snapshot(caplog: pytest.LogCaptureFixture) -> None:
    now = [100.0]
    watch = StepWatch("contract agent", clock=lambda: now[0])
    assert watch.snapshot() == {"step": WAITING_FOR_BATCH, "seconds": 0.0}
    now[0] += 30
    assert not watch.check(60)
    now[0] += 40
    with caplog.at_level(logging.WARNING):
        assert watch.check(60) and watch.check(60)
    assert [r.getMessage() for r in caplog.records] == [
        f"contract agent: still '{WAITING_FOR_BATCH}' after 70 s"
    ]
    with caplog.at_level(logging.WARNING):
        watch.enter("applying a batch")
    assert "moving again" in caplog.records[-1].getMessage()
    assert watch.snapshot() == {"step": "applying a batch", "seconds": 0.0}
