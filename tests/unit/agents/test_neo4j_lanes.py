"""Statements of independent entity types run at once (agents/stores/neo4j_lanes.py); linked ones never do."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from esc.agents.stores.neo4j_lanes import lanes, run_lanes


def test_lanes_join_statements_that_share_anything() -> None:
    touches: list[set[Any]] = [{"A", ("sid", 1)}, {"B", ("sid", 2)}, {"C", ("sid", 1)}, {"D"}, {"B", ("sid", 3)}]
    assert lanes(touches) == [[0, 2], [1, 4], [3]]
    assert lanes([]) == []


def test_run_lanes_runs_lanes_at_once_and_each_lane_in_order() -> None:
    running, peak, order = [0], [0], []
    lock = threading.Lock()

    def job(i: int) -> Any:
        def run() -> int:
            with lock:
                running[0] += 1
                peak[0] = max(peak[0], running[0])
            time.sleep(0.05)
            with lock:
                running[0] -= 1
                order.append(i)
            return i * 10

        return run

    touches: list[set[Any]] = [{"A"}, {"B"}, {"A"}, {"C"}, {"A"}]
    assert run_lanes([job(i) for i in range(5)], touches, writers=3) == [0, 10, 20, 30, 40]
    assert peak[0] >= 2  # lanes overlapped
    lane_a = [i for i in order if i in (0, 2, 4)]
    assert lane_a == [0, 2, 4]  # one lane: in order, never two of its statements at once


def test_run_lanes_raises_the_first_error_after_every_lane_stopped() -> None:
    done: list[int] = []

    def ok(i: int) -> Any:
        return lambda: done.append(i)

    def bad() -> None:
        raise RuntimeError("server gone")

    with pytest.raises(RuntimeError, match="server gone"):
        run_lanes([ok(0), bad, ok(2)], [{"A"}, {"B"}, {"C"}], writers=2)
    assert sorted(done) == [0, 2]


def test_neo4j_upsert_of_many_types_writes_every_row_and_constraint_once(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("neo4j")
    from tests.unit.agents.test_neo4j_batches import entity, make_store, written_rows

    s, drv = make_store(monkeypatch, batch=100)
    rows = [entity(i, f"T{i % 7}") for i in range(70)]
    assert s.upsert_entities(rows) == 70
    assert sorted(r["key"][0] for w in written_rows(drv) for r in w) == list(range(70))
    constraints = [q for q, _ in drv.calls if q.startswith("CREATE CONSTRAINT")]
    assert len(constraints) == len(set(constraints)) == 7
