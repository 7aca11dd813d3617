"""The drop folder's producer: record messages to Kafka through librdkafka (confluent-kafka).

A file load sends every row as one message. Through Faust's aiokafka producer each one cost the worker's event
loop a future, a pure-Python partitioner call and its share of pure-Python batching and compression (about a
tenth of the worker's CPU in a TPC-H load). librdkafka does batching, lz4 compression, retries and the network
in its own threads; ``send`` only hands it the bytes.

It partitions like every other producer of ``esc.records`` (Faust/aiokafka, ``esc push``, Java clients):
``murmur2_random`` is Kafka's murmur2 of the key, so a record keeps its partition (and its order and compaction)
whichever producer sent it. Delivery is acknowledged by all in-sync replicas, idempotent; ``flush`` waits for
every message sent so far and raises if any was not delivered, so a caller checkpoints only what Kafka holds.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Iterable
from typing import Any

from confluent_kafka import KafkaError, KafkaException, Message, Producer

POLL_EVERY = 1000  # serve delivery reports every this many sends
FULL_WAIT_SECONDS = 0.01  # librdkafka's queue is full: wait this long for it to drain, then retry
FLUSH_TIMEOUT_SECONDS = 120.0


class RecordProducer:
    def __init__(self, bootstrap: str, max_message_bytes: int = 32 << 20, **config: Any) -> None:
        self._producer = Producer(
            {
                "bootstrap.servers": bootstrap,
                "acks": "all",
                "enable.idempotence": True,
                "partitioner": "murmur2_random",  # Kafka's default (Java, aiokafka): same key, same partition
                "compression.type": "lz4",
                "linger.ms": 5,
                "batch.size": 1 << 20,
                "message.max.bytes": max_message_bytes,
                # librdkafka's own log lines (a connect failure every second while a broker is down) go through
                # Python logging, so streams/runtime/log_limits.py bounds them like the other clients'
                "logger": logging.getLogger("kafka.rdkafka"),
                **config,
            }
        )
        self._lock = threading.Lock()
        self._failed: list[str] = []
        self._sent = 0

    def _report(self, err: KafkaError | None, msg: Message) -> None:
        if err is not None:
            with self._lock:
                self._failed.append(f"{msg.topic()}: {err.str()}")

    async def send(
        self, topic: str, key: bytes, value: bytes | None, headers: list[tuple[str, str | bytes | None]] | None = None
    ) -> None:
        """Queue one message (``value=None``: a tombstone). Waits only while librdkafka's queue is full."""
        while True:
            try:
                if headers:
                    self._producer.produce(topic, value=value, key=key, headers=headers, on_delivery=self._report)
                else:
                    self._producer.produce(topic, value=value, key=key, on_delivery=self._report)
                break
            except BufferError:
                self._producer.poll(0)
                await asyncio.sleep(FULL_WAIT_SECONDS)
        self._sent += 1
        if self._sent % POLL_EVERY == 0:
            self._producer.poll(0)

    def send_all(
        self, topic: str, messages: Iterable[tuple[bytes, bytes]], headers: list[tuple[str, str | bytes | None]]
    ) -> list[bytes]:
        """Queue every message (blocking while librdkafka's queue is full) and wait until all are delivered
        (raising as ``flush`` does): for a process with no event loop (the profiling child). Returns the keys."""
        keys = []
        for key, value in messages:
            while True:
                try:
                    self._producer.produce(topic, value=value, key=key, headers=headers, on_delivery=self._report)
                    break
                except BufferError:
                    self._producer.poll(FULL_WAIT_SECONDS)
            keys.append(key)
            if len(keys) % POLL_EVERY == 0:
                self._producer.poll(0)
        self._raise_undelivered(self._producer.flush(FLUSH_TIMEOUT_SECONDS), FLUSH_TIMEOUT_SECONDS)
        return keys

    async def flush(self, timeout: float = FLUSH_TIMEOUT_SECONDS) -> None:
        """Wait until every message sent so far is delivered; raise if one was not (or the wait timed out)."""
        self._raise_undelivered(await asyncio.to_thread(self._producer.flush, timeout), timeout)

    def _raise_undelivered(self, left: int, timeout: float) -> None:
        with self._lock:
            failed, self._failed = self._failed, []
        if failed:
            raise KafkaException(f"{len(failed)} record message(s) not delivered, first: {failed[0]}")
        if left:
            raise KafkaException(f"{left} record message(s) still undelivered after {timeout:.0f} s")

    def close(self) -> None:
        self._producer.flush(10.0)
