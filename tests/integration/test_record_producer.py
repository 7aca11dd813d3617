"""The drop folder's librdkafka producer on the real broker: every message delivered, tombstones included, and
each key on the partition Kafka's default partitioner (aiokafka, Java, ``esc push``) picks for it."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

from aiokafka import AIOKafkaConsumer
from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from aiokafka.partitioner import DefaultPartitioner

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
