"""The drop folder's producer: record messages to Kafka through librdkafka (confluent-kafka).

A file load sends every row as one message. Through Faust's aiokafka producer each one cost the worker's event
loop a future, a pure-Python partitioner call and its share of pure-Python batching and compression (about a
tenth of the worker's CPU in a TPC-H load). librdkafka does batching, lz4 compression, retries and the network
in its own threads; ``send`` only hands it the bytes.

It partitions like every other producer of ``esc.records`` (Faust/aiokafka, ``esc push``, Java clients):
``murmur2_random`` is Kafka's murmur2 of the key, so a record keeps its partition (and its order and compaction)
whichever producer sent it. Delivery is acknowledged by all in-sync replicas, idempotent; ``flush`` waits for
every message sent so far and raises if any was not delivered, so a caller checkpoints only what Kafka holds.

A flush that sees no delivery for ``STALL_SECONDS`` gives the librdkafka producer up: its queue is purged, a new
one takes its place, and the flush raises, so the caller sends its messages again (the drop folder delivers the
file again; record ids are deterministic). Seen in CI: a Kafka outage while a file's records were being sent left
the producer with 30,396 messages that it never delivered after the broker was back (the flush ran out its
120 s); the folder task ended on that error, and the rest of the file never reached Kafka. A producer that has hit
a fatal error (idempotence) is replaced the same way.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Iterable
from typing import Any

from confluent_kafka import KafkaError, KafkaException, Message, Producer

POLL_EVERY = 1000  # serve delivery reports every this many sends
FULL_WAIT_SECONDS = 0.01  # librdkafka's queue is full: wait this long for it to drain, then retry
FLUSH_TIMEOUT_SECONDS = 120.0
STALL_SECONDS = 30.0  # a flush with messages left and none delivered for this long gives the producer up
FLUSH_SLICE_SECONDS = 1.0


class RecordProducer:
    def __init__(
        self, bootstrap: str, max_message_bytes: int = 32 << 20, stall: float | None = None, **config: Any
    ) -> None:
        self._config: dict[str, Any] = {
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
        self._producer = Producer(self._config)
        self.stall = STALL_SECONDS if stall is None else stall
        self._lock = threading.Lock()
        self._failed: list[str] = []
        self._fatal = False
        self._sent = 0
        self._reported = 0  # delivery reports served (delivered or failed)
        self.replaced = 0  # producers given up (stalled or fatally failed) and replaced

    def _report(self, err: KafkaError | None, msg: Message) -> None:
        self._reported += 1  # (progress for the stall check: librdkafka's queue length also counts its log events)
        if err is not None:
            with self._lock:
                self._failed.append(f"{msg.topic()}: {err.str()}")
                self._fatal = self._fatal or err.fatal()

    async def send(
        self, topic: str, key: bytes, value: bytes | None, headers: list[tuple[str, str | bytes | None]] | None = None
    ) -> None:
        """Queue one message (``value=None``: a tombstone). Waits only while librdkafka's queue is full; full for
        ``stall`` seconds (nothing delivered), the producer is replaced and this raises, as ``flush`` does."""
        full_since: float | None = None
        while True:
            try:
                if headers:
                    self._producer.produce(topic, value=value, key=key, headers=headers, on_delivery=self._report)
                else:
                    self._producer.produce(topic, value=value, key=key, on_delivery=self._report)
                break
            except BufferError:
                now = time.monotonic()
                full_since = now if full_since is None else full_since
                if now - full_since >= self.stall:
                    self._replace()
                    self._raise_undelivered(-1, 0.0)
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
        self._raise_undelivered(self._flush(FLUSH_TIMEOUT_SECONDS), FLUSH_TIMEOUT_SECONDS)
        return keys

    async def flush(self, timeout: float = FLUSH_TIMEOUT_SECONDS) -> None:
        """Wait until every message sent so far is delivered; raise if one was not (or the wait timed out)."""
        self._raise_undelivered(await asyncio.to_thread(self._flush, timeout), timeout)

    def _flush(self, timeout: float) -> int:
        """librdkafka's flush in slices, watching delivery: the messages left once every one is delivered or
        failed, the timeout is over, or none was delivered for ``stall`` seconds (the producer is then replaced;
        -1 says so)."""
        now = time.monotonic()
        deadline, moved, reported = now + timeout, now, self._reported
        left = len(self._producer)
        while left and now < deadline:
            left = self._producer.flush(min(FLUSH_SLICE_SECONDS, deadline - now))
            now = time.monotonic()
            if self._reported != reported:
                moved, reported = now, self._reported
            if left and now - moved >= self.stall:
                self._replace()
                return -1
        return left

    def _replace(self) -> None:
        """Give the producer up: its queued and in-flight messages purged (never acknowledged: the caller sends
        them again), a new producer in its place."""
        old = self._producer
        old.purge()
        old.flush(0)  # serves the purge's delivery reports
        self._producer = Producer(self._config)
        with self._lock:
            self._failed, self._fatal = [], False
        self.replaced += 1

    def _raise_undelivered(self, left: int, timeout: float) -> None:
        if left < 0:
            raise KafkaException(
                f"record messages not delivered: none acknowledged for {self.stall:.0f} s; the producer was "
                "replaced (what it held is sent again)"
            )
        with self._lock:
            failed, self._failed = self._failed, []
            fatal = self._fatal
        if fatal:
            self._replace()
        if failed:
            raise KafkaException(f"{len(failed)} record message(s) not delivered, first: {failed[0]}")
        if left:
            raise KafkaException(f"{left} record message(s) still undelivered after {timeout:.0f} s")

    def close(self) -> None:
        self._producer.flush(10.0)
