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


def _fact_rows(n: int, dense: int, sparse: int, seed: int = 7) -> list[dict[str, Any]]:
    """Rows of a statement with two folded edge kinds: ``e[0]`` among ``sparse`` ends, ``e[1]`` among ``dense``."""
    import random

    rnd = random.Random(seed)
    return [
        {"key": [i], "sid": f"s\x1f{i}", "e": [[rnd.randrange(sparse)], [rnd.randrange(dense)]]}
        for i in range(n)
    ]


def test_split_rows_keeps_the_densest_ends_in_one_lane_and_the_rows_order() -> None:
    from esc.agents.stores.neo4j_lanes import split_rows

    rows = _fact_rows(5000, dense=50, sparse=4000)
    parts = split_rows(rows, folded=2)
    assert len(parts) == 2
    assert sorted(r["key"][0] for p in parts for r in p) == list(range(5000))  # every row once
    for p in parts:
        keys = [r["key"][0] for r in p]
        assert keys == sorted(keys)  # a lane keeps the rows' order
        assert 0.4 * 5000 <= len(p) <= 0.6 * 5000  # balanced
    dense_ends = [{tuple(r["e"][1]) for r in p} for p in parts]
    assert not dense_ends[0] & dense_ends[1]  # no dense end in both lanes
    sparse_ends = [{tuple(r["e"][0]) for r in p} for p in parts]
    assert sparse_ends[0] & sparse_ends[1]  # the sparse kind was not used: it would have joined everything


def test_split_rows_keeps_a_node_and_a_source_record_in_one_lane() -> None:
    from esc.agents.stores.neo4j_lanes import split_rows

    rows = _fact_rows(3000, dense=30, sparse=3000)
    rows[2500]["key"] = [7]  # row 7's node again, with another dense end
    rows[2600]["sid"] = rows[11]["sid"]  # one source record, two rows
    parts = split_rows(rows, folded=2)
    assert len(parts) == 2
    lane = {id(r): k for k, p in enumerate(parts) for r in p}
    assert lane[id(rows[2500])] == lane[id(rows[7])]
    assert lane[id(rows[2600])] == lane[id(rows[11])]


def test_split_rows_gives_one_lane_when_a_split_does_not_pay_or_cannot_be_kept_apart() -> None:
    from esc.agents.stores.neo4j_lanes import split_rows

    small = _fact_rows(500, dense=10, sparse=400)
    assert split_rows(small, folded=2) == [small]  # below SPLIT_MIN_ROWS
    assert split_rows(_fact_rows(5000, 50, 4000), folded=2, parts=1)[0] == _fact_rows(5000, 50, 4000)
    one_end = [{"key": [i], "sid": str(i), "e": [[0], [1]]} for i in range(2000)]  # every row links the same ends
    assert split_rows(one_end, folded=2) == [one_end]  # the ends are too few to keep apart: both lanes would wait
    two_ends = [{"key": [i], "sid": str(i), "e": [[i], [i % 3 == 0]]} for i in range(2000)]  # a 2-valued kind
    assert split_rows(two_ends, folded=2) == [two_ends]
    unused_kind = [{**r, "e": [None, *r["e"]]} for r in one_end]  # a kind no row has does not count as kept apart
    assert split_rows(unused_kind, folded=3) == [unused_kind]
    same_node = [{"key": [0], "sid": str(i), "e": [None, None]} for i in range(2000)]  # one node written 2000 times
    assert split_rows(same_node, folded=2) == [same_node]


class _LaneDriver:
    """Sessions whose transactions record the rows they commit; the first ``deadlocks`` runs are aborted as a
    deadlock's victim (Neo4j's TransientError), ``other`` (if set) is raised by every run."""

    def __init__(self, deadlocks: int = 0, other: Exception | None = None) -> None:
        import threading

        self.committed: list[list[Any]] = []
        self.sent_types: list[type] = []  # the type of each list handed to ``run``
        self.deadlocks = deadlocks
        self.other = other
        self.lock = threading.Lock()

    def session(self, **kw: Any) -> Any:
        import contextlib

        import neo4j.exceptions

        drv = self

        class Tx:
            def __init__(self) -> None:
                self.rows: list[Any] = []

            def run(self, query: str, rows: list[Any]) -> Any:
                with drv.lock:
                    drv.sent_types.append(type(rows))
                    if drv.other is not None:
                        raise drv.other
                    if drv.deadlocks:
                        drv.deadlocks -= 1
                        raise neo4j.exceptions.TransientError._hydrate_neo4j(
                            code="Neo.TransientError.Transaction.DeadlockDetected", message="deadlock")
                self.rows = list(rows)
                return type("R", (), {"consume": lambda _self: None})()

            def commit(self) -> None:
                with drv.lock:
                    drv.committed.append(self.rows)

        class Session:
            @contextlib.contextmanager
            def begin_transaction(self) -> Any:
                yield Tx()

            def __enter__(self) -> Any:
                return self

            def __exit__(self, *a: Any) -> None:
                return None

        return Session()


def _lane_store(monkeypatch: pytest.MonkeyPatch, drv: Any) -> Any:
    pytest.importorskip("neo4j")
    from tests.unit.agents.test_neo4j_batches import make_store

    s, _ = make_store(monkeypatch, batch=1000, drv=drv)
    return s


def test_a_split_statement_writes_every_row_once_and_retries_a_deadlock(monkeypatch: pytest.MonkeyPatch) -> None:
    from esc.agents import metrics

    drv = _LaneDriver(deadlocks=2)
    s = _lane_store(monkeypatch, drv)
    rows = _fact_rows(5000, dense=50, sparse=4000)
    before = metrics.NEO4J_DEADLOCKS._value.get()
    s._write_split("UNWIND $rows AS row ...", rows, 2)
    assert sorted(r["key"][0] for c in drv.committed for r in c) == list(range(5000))
    assert max(len(c) for c in drv.committed) <= 1000  # each lane in transactions of at most WRITE_BATCH rows
    assert metrics.NEO4J_DEADLOCKS._value.get() - before == 2
    assert rows[0]["key"] == [0]  # the caller's rows are left as they were (only the copies sent are emptied)


def test_a_split_statement_raises_other_errors_and_a_deadlock_that_keeps_coming(monkeypatch: pytest.MonkeyPatch) -> None:
    import neo4j.exceptions

    from esc.agents.stores import neo4j as store

    rows = _fact_rows(2000, dense=50, sparse=4000)
    s = _lane_store(monkeypatch, _LaneDriver(other=neo4j.exceptions.ServiceUnavailable("gone")))
    with pytest.raises(neo4j.exceptions.ServiceUnavailable):  # the store's resilient layer retries the batch
        s._write_split("UNWIND $rows AS row ...", rows, 2)
    s = _lane_store(monkeypatch, _LaneDriver(deadlocks=10 * (store.DEADLOCK_RETRIES + 1)))
    with pytest.raises(neo4j.exceptions.TransientError):
        s._write_split("UNWIND $rows AS row ...", rows, 2)
