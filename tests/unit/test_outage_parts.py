"""The parts of outage handling that need no server: the log filter's budgets, the retrying call, readiness."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from esc.agents.backfill import BackfillTracker
from esc.agents.stores.resilient import Dependency, call
from esc.streams.runtime.log_limits import RepeatFilter
from esc.streams.runtime.readiness import readiness


class Clock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


def record(name: str, msg: str, level: int = logging.ERROR) -> logging.LogRecord:
    return logging.LogRecord(name, level, __file__, 1, msg, None, None)


def test_a_servers_clients_share_one_budget_per_window_and_the_next_line_says_how_many_were_held() -> None:
    clock = Clock()
    flt = RepeatFilter(window=60, clock=clock, burst=3)
    names = [
        "aiokafka.conn",
        "aiokafka.cluster",
        "aiokafka.consumer.fetcher",
        "kafka.rdkafka",
        "aiokafka.producer",
    ]
    shown = [flt.filter(record(n, f"{n} failed: connection {i} closed")) for i, n in enumerate(names * 4)]
    assert sum(shown) == 3
    clock.t += 61
    later = record("aiokafka.conn", "Unable connect to node with id 1")
    assert flt.filter(later)
    assert "17 similar lines" in later.getMessage()


def test_esc_lines_always_pass_and_client_lines_are_held_while_the_dependency_is_reported_down() -> None:
    down = {"kafka"}
    flt = RepeatFilter(window=60, clock=Clock(), down=lambda d: d in down)
    assert all(
        flt.filter(record("esc.agents.stores.resilient", f"kafka still unreachable {i}")) for i in range(50)
    )
    assert not any(flt.filter(record("aiokafka.conn", f"connect {i} failed")) for i in range(50))
    assert flt.held_while_down == 50
    assert flt.filter(record("neo4j.io", "a neo4j line while only kafka is down"))


def test_a_repeated_info_template_passes_once_per_window_but_different_info_lines_pass() -> None:
    flt = RepeatFilter(window=60, clock=Clock())
    assert flt.filter(
        record("aiokafka.consumer.group_coordinator", "Joined group g1 (generation 3)", logging.INFO)
    )
    assert not flt.filter(record("aiokafka.consumer.group_coordinator", "Joined group g1 (generation 4)",
                                 logging.INFO))  # fmt: skip
    assert flt.filter(record("aiokafka.consumer.group_coordinator", "Discovered coordinator 1", logging.INFO))


def test_the_faust_producers_drain_lines_count_as_kafka_client_lines_but_other_faust_lines_pass() -> None:
    down = {"kafka"}
    flt = RepeatFilter(window=60, clock=Clock(), down=lambda d: d in down, burst=3)
    drain = [
        record("faust.transport.producer", f"producer buffer full size {n}", logging.WARNING)
        for n in range(50)
    ]
    assert not any(flt.filter(r) for r in drain)  # held while Kafka is reported down
    down.clear()
    flushes = [
        record("faust.transport.producer", f"producer flush took 0.0{n}", logging.INFO) for n in range(50)
    ]
    assert sum(flt.filter(r) for r in flushes) == 1  # one template, once per window
    fulls = [
        record("faust.transport.producer", f"producer buffer full size {n}", logging.WARNING)
        for n in range(50)
    ]
    assert sum(flt.filter(r) for r in fulls) == 3  # the kafka clients' budget
    assert all(
        flt.filter(record("faust.agents.agent", f"Agent crashed {n}")) for n in range(5)
    )  # not a client


def test_call_retries_transient_errors_marks_the_dependency_and_raises_others_at_once() -> None:
    dep = Dependency("neo4j-test")
    attempts = {"n": 0}

    def flaky() -> str:
        attempts["n"] += 1
        if attempts["n"] < 3:
            raise ConnectionError("refused")
        return "done"

    assert call(dep, lambda e: isinstance(e, ConnectionError), flaky) == "done"
    assert attempts["n"] == 3 and dep.up

    def wrong() -> None:
        raise ValueError("a bad query")

    with pytest.raises(ValueError):
        call(dep, lambda e: isinstance(e, ConnectionError), wrong)
    assert dep.up  # the call's own fault says nothing about the server


def test_reads_give_up_after_a_few_attempts_and_leave_the_dependency_down_until_a_call_succeeds() -> None:
    dep = Dependency("weaviate-test")

    def down() -> None:
        raise ConnectionError("refused")

    with pytest.raises(ConnectionError):
        call(dep, lambda e: True, down, forever=False)
    assert not dep.up and dep.failures >= 2
    assert readiness({"weaviate-test": dep})["ready"] is False
    call(dep, lambda e: True, lambda: None)
    assert dep.up and readiness({"weaviate-test": dep})["ready"] is True


def test_a_backfill_that_stops_moving_makes_the_worker_not_ready_unless_an_outage_explains_it() -> None:
    from esc.agents.backfill import ReplayPlan

    clock = Clock()
    tracker = BackfillTracker(clock=clock)
    assert tracker.stalled_for() == 0.0
    tracker.start(ReplayPlan(version=2, replay={"S"}))
    clock.t += 10_000
    dep = Dependency("kafka-test")
    report = readiness({"kafka-test": dep}, None, tracker)
    assert not report["ready"] and "backfill made no progress" in report["reasons"][0]
    dep.failed(ConnectionError("down"))
    assert all("backfill" not in r for r in readiness({"kafka-test": dep}, None, tracker)["reasons"])
    tracker.progress("S", 5)
    dep.ok()
    assert readiness({"kafka-test": dep}, None, tracker)["ready"]


def test_a_record_seen_by_two_handlers_is_decided_once_and_formats_cleanly() -> None:
    clock = Clock()
    flt = RepeatFilter(window=60, clock=clock, burst=1)
    assert flt.filter(record("aiokafka.conn", "first", logging.ERROR))
    for _ in range(3):
        assert not flt.filter(record("aiokafka.producer", "Got error %s", logging.WARNING))
    clock.t += 61
    rec = logging.LogRecord("aiokafka.producer", logging.WARNING, __file__, 1, "Got error %s", ("x",), None)
    assert flt.filter(rec) and flt.filter(rec)  # the second handler sees the same verdict, not a second line
    assert (
        logging.Formatter("%(message)s").format(rec)
        == "Got error x (3 similar lines in the last 60 s not shown)"
    )


def test_a_blip_flips_readiness_but_logs_nothing_and_an_outage_logs_once_each_way(
    caplog: pytest.LogCaptureFixture,
) -> None:
    clock = Clock()
    dep = Dependency("neo4j-blip", clock=clock)
    with caplog.at_level(logging.WARNING, logger="esc.agents.stores.resilient"):
        dep.failed(ConnectionError("refused"))  # a server going down: one call fails, the next one succeeds
        assert not dep.up and readiness({"neo4j-blip": dep})["ready"] is False
        clock.t += 0.5
        dep.ok()
        assert dep.up and caplog.records == []
        dep.failed(ConnectionError("refused"))  # a real outage: failures for longer than BLIP_SECONDS
        clock.t += 1.0
        dep.failed(ConnectionError("refused"))
        assert caplog.records == []
        clock.t += 1.5
        dep.failed(ConnectionError("refused"))
        for _ in range(5):
            clock.t += 1.0
            dep.failed(ConnectionError("refused"))
        dep.ok()
    assert [r.getMessage().split(" (")[0] for r in caplog.records] == [
        "neo4j-blip is unreachable",
        "neo4j-blip is reachable again after 8 s",
    ]


def test_a_weaviate_shard_unloading_at_shutdown_is_an_outage_and_a_bad_request_is_not() -> None:
    """The outage test stopped Weaviate while vectors were written: the batch delete failed with gRPC UNKNOWN "no
    read replica found" (its shards unloading), which was logged as a write failure with a traceback each retry."""
    import grpc
    import weaviate.exceptions as e

    from esc.streams.runtime.stores import weaviate_transient

    shutting = e.WeaviateDeleteManyError("Query call with protocol GRPC delete failed with message [UNKNOWN] batch "
                                         "delete: cannot find objects: no read replica found.")  # fmt: skip
    assert weaviate_transient(shutting)
    assert not weaviate_transient(e.WeaviateDeleteManyError("[UNKNOWN] invalid filter: no such property 'x'"))

    class Rpc(grpc.RpcError):
        def code(self) -> grpc.StatusCode:
            return grpc.StatusCode.UNKNOWN

    # as the client raises it (CI): from the gRPC error, whose code (UNKNOWN) alone says nothing
    try:
        try:
            raise Rpc("batch delete: cannot find objects: no read replica found")
        except Rpc as rpc:
            raise shutting from rpc
    except e.WeaviateDeleteManyError as raised:
        assert weaviate_transient(raised)
    try:
        try:
            raise Rpc("invalid filter")
        except Rpc as rpc:
            raise e.WeaviateDeleteManyError("[UNKNOWN] invalid filter: no such property 'x'") from rpc
    except e.WeaviateDeleteManyError as raised:
        assert not weaviate_transient(raised)


def test_idle_work_that_fails_logs_one_line_until_it_works_again(caplog: pytest.LogCaptureFixture) -> None:
    """The mention linker runs when the outbox is empty and the graph idle; a store outage made it log a traceback
    every round (agents/vector_outbox.run_writer)."""
    import asyncio
    from types import SimpleNamespace

    from esc.agents.vector_outbox import run_writer

    calls = {"n": 0}

    def idle_work() -> None:
        calls["n"] += 1
        if calls["n"] < 5:
            raise ConnectionError("nothing accepts connections at 127.0.0.1:7687")

    writer = SimpleNamespace(drain_once=lambda _step: 0, outbox=SimpleNamespace(pending=lambda: 0))

    async def scenario() -> None:
        task = asyncio.create_task(run_writer(writer, lambda: False, idle_work))  # type: ignore[arg-type]
        while calls["n"] < 6:
            await asyncio.sleep(0.05)
        task.cancel()

    with caplog.at_level(logging.WARNING, logger="esc.agents.vector_outbox"):
        asyncio.run(scenario())
    lines = [r for r in caplog.records if "idle work" in r.getMessage()]
    assert len(lines) == 1 and lines[0].exc_info is None and "ConnectionError" in lines[0].getMessage()


def test_a_write_waiting_out_an_outage_keeps_the_worker_busy() -> None:
    """Written behind its planning (streams/runtime/write_behind.py), a batch that waits for Neo4j to come back
    is no recent batch any more: the write itself must keep the mention linker and example queries away."""
    import asyncio
    import time
    from types import SimpleNamespace

    from esc.agents.extraction import ExtractionWorker

    async def nothing(sources: set[str]) -> Any:
        yield []

    worker = ExtractionWorker(SimpleNamespace(ingested=set()), nothing)  # type: ignore[arg-type]
    worker.last_batch = time.monotonic() - 60  # the last batch came a minute ago

    async def scenario() -> tuple[bool, bool]:
        async with worker._lock:  # what _apply holds while the store call retries
            during = worker.busy()
        return during, worker.busy()

    assert asyncio.run(scenario()) == (True, False)


def test_a_worker_is_not_ready_until_it_has_started_consuming() -> None:
    dep = Dependency("kafka-start")
    starting = readiness({"kafka-start": dep}, started=False)
    assert starting["ready"] is False and starting["reasons"][0].startswith("starting:")
    assert readiness({"kafka-start": dep}, started=True) == {**starting, "ready": True, "reasons": []}
