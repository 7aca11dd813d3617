"""The drop folder's librdkafka producer on the real broker: every message delivered, tombstones included, and
each key on the partition Kafka's default partitioner (aiokafka, Java, ``esc push``) picks for it."""

from __future__ import annotations

import asyncio
import json
import uuid
from pathlib import Path
from typing import Any

from aiokafka import AIOKafkaConsumer
from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from aiokafka.partitioner import DefaultPartitioner

from esc.streams.connectors.file_profiles import PROFILED_HEADER, PROFILED_VALUE
from esc.streams.connectors.file_watcher import emission_for
from esc.streams.readers import SourceFile, read
from esc.streams.runtime.file_sender import send_file
from esc.streams.runtime.record_producer import RecordProducer

PARTITIONS = 4


async def _round_trip(bootstrap: str, topic: str, keys: list[bytes]) -> list[Any]:
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        await admin.create_topics([NewTopic(topic, num_partitions=PARTITIONS, replication_factor=1)])
        producer = RecordProducer(bootstrap)
        for i, key in enumerate(keys):
            await producer.send(topic, key, None if i % 10 == 9 else f'{{"n": {i}}}'.encode())
        await producer.flush()
        producer.close()
        consumer = AIOKafkaConsumer(topic, bootstrap_servers=bootstrap, auto_offset_reset="earliest",
                                    enable_auto_commit=False)
        await consumer.start()
        got: list[Any] = []
        try:
            while len(got) < len(keys):
                batch = await asyncio.wait_for(consumer.getmany(timeout_ms=1000), 30)
                got.extend(m for msgs in batch.values() for m in msgs)
        finally:
            await consumer.stop()
        return got
    finally:
        await admin.delete_topics([topic])
        await admin.close()


def test_every_record_delivered_on_the_default_partitioners_partition(kafka_bootstrap: str) -> None:
    topic = f"esc.it.producer.{uuid.uuid4().hex[:8]}"
    keys = [f"src\x1f{i}".encode() for i in range(500)]
    got = asyncio.run(_round_trip(kafka_bootstrap, topic, keys))

    assert sorted(m.key for m in got) == sorted(keys)  # each exactly once
    partitioner = DefaultPartitioner()
    every = list(range(PARTITIONS))
    assert all(m.partition == partitioner(m.key, every, every) for m in got)
    assert len({m.partition for m in got}) == PARTITIONS
    tombstones = [m for m in got if m.value is None]
    assert len(tombstones) == 50 and all(int(m.key.split(b"\x1f")[1]) % 10 == 9 for m in tombstones)
    by_key = {m.key: m.value for m in got}
    assert by_key[b"src\x1f0"] == b'{"n": 0}'


async def _read_all(bootstrap: str, topic: str, n: int) -> list[Any]:
    consumer = AIOKafkaConsumer(topic, bootstrap_servers=bootstrap, auto_offset_reset="earliest",
                                enable_auto_commit=False)  # fmt: skip
    await consumer.start()
    got: list[Any] = []
    try:
        while len(got) < n:
            batch = await asyncio.wait_for(consumer.getmany(timeout_ms=1000), 30)
            got.extend(m for msgs in batch.values() for m in msgs)
    finally:
        await consumer.stop()
    return got


def test_a_profiled_file_sent_from_columns_carries_the_record_paths_messages(
    kafka_bootstrap: str, tmp_path: Path
) -> None:
    """``file_sender.send_file`` (run in the profiling child by the worker; here in-process): every row delivered
    once Kafka has it, under the record path's key and partition, its message the record path's JSON with the
    header that says its file was profiled; a file the columnar reader declines sends nothing."""
    topic = f"esc.it.sender.{uuid.uuid4().hex[:8]}"
    f = tmp_path / "planes.csv"
    f.write_text("tail,model,seats\n" + "".join(f"N{i},A3{i % 7}0,{100 + i}\n" for i in range(300)), encoding="utf-8")
    sf = SourceFile(path=f, rel="planes.csv", format="csv", source="planes")

    async def create() -> None:
        admin = AIOKafkaAdminClient(bootstrap_servers=kafka_bootstrap)
        await admin.start()
        await admin.create_topics([NewTopic(topic, num_partitions=PARTITIONS, replication_factor=1)])
        await admin.close()

    asyncio.run(create())
    keys = send_file(sf, "h1", kafka_bootstrap, topic, None)
    assert not isinstance(keys, str)
    got = asyncio.run(_read_all(kafka_bootstrap, topic, 300))

    expected = [emission_for(rec, "planes.csv", "h1", profiled=True) for rec in read(sf)]
    assert keys == [e.key for e in expected]
    assert sorted(m.key for m in got) == sorted(keys)  # each exactly once
    by_key = {m.key: m for m in got}
    for e in expected:
        m = by_key[e.key]
        ours, theirs = json.loads(m.value), json.loads(e.value)
        assert ours.pop("event_time") and theirs.pop("event_time")
        assert ours == theirs
        assert dict(m.headers) == {PROFILED_HEADER: PROFILED_VALUE}
    every = list(range(PARTITIONS))
    assert all(m.partition == DefaultPartitioner()(m.key, every, every) for m in got)

    ragged = tmp_path / "ragged.csv"
    ragged.write_text("a,b\n1,2\n3\n", encoding="utf-8")
    declined = send_file(SourceFile(path=ragged, rel="ragged.csv", format="csv", source="ragged"), "h2",
                         kafka_bootstrap, topic, None)  # fmt: skip
    assert isinstance(declined, str)
