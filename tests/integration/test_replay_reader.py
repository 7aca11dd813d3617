"""A backfill's replay read by librdkafka in a thread (streams/runtime/replay_reader.py): exactly the records of the
asked sources, tombstones left out, every partition to the end it had when the read began, in bounded batches."""

from __future__ import annotations

import asyncio
import os
import uuid
from types import SimpleNamespace
from typing import Any

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from esc.streams.runtime.replay_reader import (
    FETCH_BYTES,
    PARTITION_FETCH_BYTES,
    read_source_values,
    scan_values,
)
from esc.streams.runtime.source_offsets import OPEN, SourceOffsets

pytestmark = pytest.mark.integration


def _topic(bootstrap: str, partitions: int = 3) -> str:
    name = f"rr{uuid.uuid4().hex[:8]}.records"
    admin = AdminClient({"bootstrap.servers": bootstrap})
    for fut in admin.create_topics([NewTopic(name, num_partitions=partitions, replication_factor=1)]).values():
        fut.result(30)
    return name


def _produce(bootstrap: str, topic: str, items: list[tuple[bytes, bytes | None]]) -> None:
    prod = Producer({"bootstrap.servers": bootstrap})
    for key, value in items:
        prod.produce(topic, key=key, value=value)
    assert prod.flush(30) == 0


def test_the_replay_reads_exactly_the_asked_sources_records(kafka_bootstrap: str) -> None:
    topic = _topic(kafka_bootstrap)
    items: list[tuple[bytes, bytes | None]] = []
    for i in range(40):
        items.append((f"a\x1f{i}".encode(), f"a{i}".encode()))
        items.append((f"ab\x1f{i}".encode(), f"ab{i}".encode()))  # a source whose name starts like another's
        items.append((f"b\x1f{i}".encode(), f"b{i}".encode()))
    items.append((b"a\x1f0", None))  # a tombstone: nothing to replay
    _produce(kafka_bootstrap, topic, items)

    batches = list(scan_values(kafka_bootstrap, topic, {"a", "b"}, batch=7))
    got = [v for b in batches for v in b]
    assert sorted(got) == sorted([f"a{i}".encode() for i in range(40)] + [f"b{i}".encode() for i in range(40)])
    assert all(0 < len(b) <= 7 for b in batches)

    async def via_loop() -> list[bytes]:
        return [v async for chunk in read_source_values(kafka_bootstrap, topic, {"ab"}) for v in chunk]

    assert sorted(asyncio.run(via_loop())) == sorted(f"ab{i}".encode() for i in range(40))


def test_an_empty_or_missing_topic_replays_nothing(kafka_bootstrap: str) -> None:
    assert list(scan_values(kafka_bootstrap, _topic(kafka_bootstrap), {"a"})) == []
    assert list(scan_values(kafka_bootstrap, f"missing{uuid.uuid4().hex[:6]}", {"a"})) == []


def test_records_written_after_the_replay_began_are_not_waited_for(kafka_bootstrap: str) -> None:
    topic = _topic(kafka_bootstrap, partitions=1)
    _produce(kafka_bootstrap, topic, [(f"a\x1f{i}".encode(), b"old") for i in range(5)])
    it = scan_values(kafka_bootstrap, topic, {"a"}, batch=2)
    first = next(it)  # the end offsets are taken: what comes now is not part of this replay
    _produce(kafka_bootstrap, topic, [(f"a\x1f{i}".encode(), b"new") for i in range(5, 9)])
    rest = [v for b in it for v in b]
    assert first + rest == [b"old"] * 5


def test_a_replay_reads_the_spans_where_the_worker_saw_the_sources_records(kafka_bootstrap: str) -> None:
    """The index built from the offsets Kafka gave the records (``b`` in two stretches far apart, ``a`` around
    them): the replay returns what a whole scan returns, seeking over the stretch between; and it does read only
    the spans (told that ``b``'s records lie elsewhere, it finds none of them)."""
    topic = _topic(kafka_bootstrap, partitions=1)
    items: list[tuple[bytes, bytes | None]] = [(f"a\x1f{i}".encode(), b"a") for i in range(100)]
    items += [(f"b\x1f{i}".encode(), f"b{i}".encode()) for i in range(10)]
    items += [(f"a\x1f{i}".encode(), b"a") for i in range(100, 9000)]
    items += [(f"b\x1f{i}".encode(), f"b{i}".encode()) for i in range(10, 15)]
    items += [(f"a\x1f{i}".encode(), b"a") for i in range(9000, 9050)]
    _produce(kafka_bootstrap, topic, items)

    idx = SourceOffsets(gap=1000)
    consumer = Consumer({"bootstrap.servers": kafka_bootstrap, "group.id": uuid.uuid4().hex})
    consumer.assign([TopicPartition(topic, 0, 0)])
    msgs: list[Any] = []
    while len(msgs) < len(items):  # what the records agent would see: every message of the partition, in order
        msgs += [m for m in consumer.consume(1000, 1.0) if m.error() is None]
    consumer.close()
    idx.observe(SimpleNamespace(message=SimpleNamespace(partition=0, offset=m.offset(), key=m.key())) for m in msgs)
    known = idx.snapshot({"b"})
    assert known[0][1][:2] == [(100, 110), (9010, 9015)]

    want = sorted(f"b{i}".encode() for i in range(15))
    assert sorted(v for b in scan_values(kafka_bootstrap, topic, {"b"}) for v in b) == want
    assert sorted(v for b in scan_values(kafka_bootstrap, topic, {"b"}, batch=4, known=known) for v in b) == want
    elsewhere = {0: (0, [(0, 100), (200, 300), (idx.upto[0], OPEN)])}
    assert list(scan_values(kafka_bootstrap, topic, {"b"}, known=elsewhere)) == []


def test_a_record_larger_than_the_fetch_sizes_is_replayed(kafka_bootstrap: str) -> None:
    """The replay's fetches are small (1 MB a partition, 8 MB a fetch) to bound its memory; a record larger than
    both (the broker allows 32 MB) still comes back whole, with the small records around it."""
    topic = _topic(kafka_bootstrap, partitions=1)
    big = os.urandom(PARTITION_FETCH_BYTES * 3)  # incompressible
    huge = os.urandom(FETCH_BYTES + PARTITION_FETCH_BYTES)
    prod = Producer({"bootstrap.servers": kafka_bootstrap, "message.max.bytes": 32 << 20})
    prod.produce(topic, key=b"a\x1f0", value=b"small0")
    prod.produce(topic, key=b"a\x1f1", value=big)
    prod.produce(topic, key=b"b\x1f1", value=b"other")
    prod.produce(topic, key=b"a\x1f2", value=huge)
    prod.produce(topic, key=b"a\x1f3", value=b"small3")
    assert prod.flush(60) == 0
    got = [v for b in scan_values(kafka_bootstrap, topic, {"a"}) for v in b]
    assert [len(v) for v in got] == [6, len(big), len(huge), 6]
    assert got[1] == big and got[2] == huge
