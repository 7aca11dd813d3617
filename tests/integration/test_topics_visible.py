"""A worker's topics are in the broker's metadata before its consumer subscribes.

CI caught the cause of a five-minute stall: the profiles topic, created by Faust a few milliseconds before the
consumer subscribed, was missing from the consumer's first metadata ("Ignoring missing topic"), so the contract agent
had no partition until the next metadata refresh (5 minutes by default) and no contract was published. The fix: the
worker creates its own topics (profiles included) before Faust starts and waits until the broker lists them; the
consumer's metadata refresh is short for the topics Faust still creates itself (table changelogs)."""

from __future__ import annotations

import asyncio
import uuid

import pytest
from aiokafka import AIOKafkaConsumer

from esc.settings import Settings
from esc.streams import topics
from esc.streams.runtime.kafka_io import ensure_topics

pytestmark = pytest.mark.integration


def test_every_worker_topic_is_in_a_new_consumers_metadata_once_ensured(
    stack_settings: Settings, kafka_bootstrap: str
) -> None:
    prefix = f"tv{uuid.uuid4().hex[:8]}"
    settings = stack_settings.model_copy(update={"app_id": prefix, "topic_prefix": prefix})
    names = {spec.name(prefix) for spec in topics.WORKER}
    assert f"{prefix}.profiles" in names

    async def run() -> set[str]:
        await ensure_topics(settings, topics.WORKER)
        consumer = AIOKafkaConsumer(bootstrap_servers=kafka_bootstrap)  # a fresh client: its first metadata
        await consumer.start()
        try:
            return set(await consumer.topics())
        finally:
            await consumer.stop()

    assert names <= asyncio.run(run())


def test_the_worker_refreshes_its_metadata_within_seconds() -> None:
    """A topic Faust itself creates right before subscribing (a table's changelog) can still miss the first
    metadata; the consumer must find it within seconds, not after aiokafka's default five minutes."""
    from esc.streams.runtime.faust_app import build_app

    app = build_app(Settings(app_id=f"tv{uuid.uuid4().hex[:8]}"), None)
    assert app.conf.consumer_metadata_max_age_ms <= 15_000
