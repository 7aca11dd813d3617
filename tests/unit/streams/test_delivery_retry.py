"""A drop-folder delivery that fails is tried again instead of ending the folder task (delivery_retry.py), and
the librdkafka producer that stops delivering is given up and replaced (record_producer.py). In CI a Kafka outage
in the middle of a file's send ended the folder task: the rest of the file never reached Kafka."""

from __future__ import annotations

import asyncio
import json
import logging
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import KafkaException

from esc.streams.connectors import delivery_retry
from esc.streams.connectors.delivery_retry import until_done
from esc.streams.connectors.file_watcher import FileWatcher
from esc.streams.runtime.record_producer import RecordProducer

NOBODY = "127.0.0.1:9"  # the discard port: no broker answers there


@pytest.fixture(autouse=True)
def _short_waits(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(delivery_retry, "FIRST_WAIT_SECONDS", 0.01)
    monkeypatch.setattr(delivery_retry, "MOST_WAIT_SECONDS", 0.04)


def test_a_failing_step_runs_again_until_it_goes_through_with_a_few_log_lines(caplog: pytest.LogCaptureFixture) -> None:
    calls = [0]

    async def step() -> None:
        calls[0] += 1
        if calls[0] <= 6:
            raise ConnectionError("broker gone")

    with caplog.at_level(logging.WARNING, logger=delivery_retry.__name__):
        failures = asyncio.run(until_done(step, "a delivery"))
    assert failures == 6 and calls[0] == 7
    lines = [r.getMessage() for r in caplog.records]
    assert lines[0].startswith("a delivery failed (ConnectionError: broker gone)")
    assert lines[-1] == "a delivery went through after 6 failed attempts"
    assert len(lines) < 7  # not a line per attempt: once the pause is at its longest (0.01, 0.02, 0.04, 0.04...)


def test_cancelling_the_task_is_not_a_failure_to_retry() -> None:
    async def step() -> None:
        await asyncio.sleep(10)

    async def main() -> None:
        task = asyncio.create_task(until_done(step, "a delivery"))
        await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())


def test_a_watcher_whose_sends_fail_for_a_while_delivers_every_file_once_they_work(tmp_path: Path) -> None:
    """``FileWatcher.run``: the first scan's sends fail (an outage); the scan is tried again and every record and
    completion goes out, the manifest naming each file only once that happened. Fails without the retry: the
    task ends with the first ConnectionError."""
    data, state = tmp_path / "drop", tmp_path / "state"
    data.mkdir()
    for i in range(3):
        (data / f"s{i}.csv").write_text(f"id,v\n{i}1,a\n{i}2,b\n", "utf-8")
    sent: list[str] = []
    done: list[str] = []
    failing = [5]  # the first five sends fail

    async def emit(msg: Any) -> None:
        if failing[0] > 0:
            failing[0] -= 1
            raise ConnectionError("broker gone")
        sent.append(msg.key.decode())

    async def dead(_d: Any) -> None:
        raise AssertionError("no dead letters here")

    async def flush() -> None:
        return None

    async def completed(batch: list[Any]) -> None:
        done.extend(c.file for c in batch)

    w = FileWatcher(data, state, emit, dead, flush, settle=0.01, completed=completed)

    async def main() -> None:
        task = asyncio.create_task(w.run())
        for _ in range(500):
            if len(set(done)) == 3:
                break
            await asyncio.sleep(0.02)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    assert sorted(set(done)) == ["s0.csv", "s1.csv", "s2.csv"]
    assert len(set(sent)) == 6  # every record, some of them twice (sent again: idempotent downstream)
    manifest = json.loads((state / "connector" / "manifest.json").read_text("utf-8"))
    assert sorted(manifest) == ["s0.csv", "s1.csv", "s2.csv"]


def test_a_flush_with_nothing_delivered_for_the_stall_gives_the_producer_up() -> None:
    producer = RecordProducer(NOBODY, stall=0.5)
    first = producer._producer

    async def main() -> None:
        for i in range(10):
            await producer.send("t", f"k{i}".encode(), b"v")
        with pytest.raises(KafkaException, match="none acknowledged for 0 s; the producer was replaced"):
            await producer.flush(timeout=30)

    asyncio.run(main())
    assert producer.replaced == 1 and producer._producer is not first  # the caller sends its messages again


def test_a_send_into_a_queue_full_for_the_stall_gives_the_producer_up() -> None:
    producer = RecordProducer(NOBODY, stall=0.3, **{"queue.buffering.max.messages": 5})
    first = producer._producer

    async def main() -> int:
        sent = 0
        with pytest.raises(KafkaException, match="none acknowledged"):
            for i in range(10):
                await producer.send("t", f"k{i}".encode(), b"v")
                sent += 1
        return sent

    assert asyncio.run(main()) == 5
    assert producer.replaced == 1 and producer._producer is not first


def test_a_send_from_the_profiling_process_that_fails_says_why_in_a_picklable_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``file_sender.send_file`` runs in the profiling child: its failure crosses a process boundary. librdkafka's
    KafkaException does not pickle (the worker logged a PicklingError in its place); the error that does says
    what failed."""
    import pickle

    from esc.streams.readers import SourceFile
    from esc.streams.runtime import record_producer
    from esc.streams.runtime.file_sender import send_file

    monkeypatch.setattr(record_producer, "STALL_SECONDS", 0.3)
    f = tmp_path / "planes.csv"
    f.write_text("tail,seats\n" + "".join(f"N{i},{100 + i}\n" for i in range(20)), encoding="utf-8")
    with pytest.raises(ConnectionError) as err:
        send_file(SourceFile(path=f, rel="planes.csv", format="csv", source="planes"), "h1", NOBODY, "t", None)
    back = pickle.loads(pickle.dumps(err.value))
    assert "records not delivered from the profiling process" in str(back) and "none acknowledged" in str(back)
