"""Kafka clients for ESC (aiokafka): topic creation, producing envelopes, replaying and following topics.

Everything that talks to Kafka outside Faust's own agents lives here: the CLI (`esc push`, `esc schema`), the
backfill replay of ``esc.records`` and the contract feed every worker keeps.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from aiokafka.errors import TopicAlreadyExistsError

from esc.settings import Settings
from esc.streams import topics

log = logging.getLogger(__name__)

RECORDS_CONFIG = {"cleanup.policy": "compact", "min.compaction.lag.ms": "60000"}
"""esc.records is compacted by key (source + record id): the latest version of every record is kept forever,
which makes the topic itself the replay log for backfill; a tombstone (null value) retracts a record."""


def _topic_config(spec: topics.TopicSpec) -> dict[str, str]:
    if spec is topics.RECORDS:
        return dict(RECORDS_CONFIG)
    if spec.compacted:
        return {"cleanup.policy": "compact"}
    return {}


async def ensure_topics(
    settings: Settings, specs: Sequence[topics.TopicSpec] = topics.ALL, visible_within: float = 30.0
) -> None:
    """Create ESC's topics with their partitions and cleanup policies if they are missing, and wait until the
    broker's metadata lists every one of them: a consumer subscribing right after a creation the metadata does not
    show yet is assigned nothing of that topic until its next metadata refresh (seen: the profiles topic missing
    for five minutes on a loaded machine, so no contract was published)."""
    names = {spec.name(settings.topic_prefix) for spec in specs}
    admin = AIOKafkaAdminClient(bootstrap_servers=settings.kafka_bootstrap, request_timeout_ms=15000)
    await admin.start()
    try:
        existing = set(await admin.list_topics())
        new = [
            NewTopic(spec.name(settings.topic_prefix), spec.partitions, 1, topic_configs=_topic_config(spec))
            for spec in specs
            if spec.name(settings.topic_prefix) not in existing
        ]
        if new:
            try:
                await admin.create_topics(new)
            except TopicAlreadyExistsError:
                pass
            await _until_listed(admin, names, visible_within)
    finally:
        await admin.close()


async def _until_listed(admin: AIOKafkaAdminClient, names: set[str], within: float) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within
    while missing := names - set(await admin.list_topics()):
        if loop.time() > deadline:
            raise RuntimeError(f"Kafka created but does not list the topics {sorted(missing)} after {within:.0f} s")
        await asyncio.sleep(0.1)


def producer(settings: Settings) -> AIOKafkaProducer:
    return AIOKafkaProducer(
        bootstrap_servers=settings.kafka_bootstrap,
        acks="all",
        enable_idempotence=True,
        linger_ms=5,
        max_request_size=4 << 20,
    )


async def read_topic(
    settings: Settings,
    topic: str,
    *,
    key_filter: Callable[[bytes | None], bool] | None = None,
    follow: bool = False,
    from_beginning: bool = True,
) -> AsyncIterator[Any]:
    """Yield the messages of every partition of ``topic`` without joining a group.

    Without ``follow`` it stops at the end offsets taken when it started (a bounded replay); with ``follow`` it
    keeps waiting for new messages, the way a subscriber tails a topic.
    """
    consumer = AIOKafkaConsumer(
        bootstrap_servers=settings.kafka_bootstrap, enable_auto_commit=False, group_id=None, fetch_max_wait_ms=100
    )
    await consumer.start()
    try:
        tps = [TopicPartition(topic, p) for p in await partitions(settings, topic)]
        if not tps:
            return
        consumer.assign(tps)
        if from_beginning:
            await consumer.seek_to_beginning(*tps)
        else:
            await consumer.seek_to_end(*tps)
        end = await consumer.end_offsets(tps)
        remaining = {tp for tp in tps if end[tp] > await consumer.position(tp)}
        while follow or remaining:
            batches = await consumer.getmany(timeout_ms=200, max_records=2000)
            for tp, msgs in batches.items():
                for msg in msgs:
                    if key_filter is None or key_filter(msg.key):
                        yield msg
                    if not follow and msg.offset >= end[tp] - 1:
                        remaining.discard(tp)
            if not follow:
                for tp in list(remaining):
                    if await consumer.position(tp) >= end[tp]:
                        remaining.discard(tp)
    finally:
        await consumer.stop()


async def partitions(settings: Settings, topic: str) -> list[int]:
    """Partition ids of ``topic`` straight from the cluster (empty if the topic does not exist)."""
    admin = AIOKafkaAdminClient(bootstrap_servers=settings.kafka_bootstrap, request_timeout_ms=15000)
    await admin.start()
    try:
        described = await admin.describe_topics([topic])
    finally:
        await admin.close()
    if not described or described[0].get("error_code"):
        return []
    return sorted(p["partition"] for p in described[0]["partitions"])
