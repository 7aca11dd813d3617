"""The records of some sources, read back from the records topic for a backfill, by librdkafka in a thread.

A backfill replays a source's records from the records topic, which holds every source's records: nothing says
where one source's are, so the whole topic is read and the keys (``source \\x1f record id``) filtered. Read with
aiokafka, on the worker's event loop, that was every message decoded in Python: at TPC-H SF 0.1 (866,602 records)
a replay of the 25 ``nation`` records took 1-3 s of the loop, and the schema diffs of new fields, each of which
sets off one, came 0.55 s after their record instead of 0.15 s at SF 0.01. Here librdkafka fetches and decodes,
the key filter runs in a worker thread, and the loop only receives the matching values, a batch at a time.

The read stops at the end offsets taken when it starts (a bounded replay); partitions that compaction left with
gaps end on librdkafka's end-of-partition event. Where the worker knows in which stretches of a partition the
sources' records are (``source_offsets.py``), only those are read.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections import deque
from collections.abc import AsyncIterator, Generator, Mapping
from typing import Any

from confluent_kafka import Consumer, KafkaError, KafkaException, TopicPartition
from tenacity import retry, retry_if_exception, stop_after_attempt, wait_exponential_jitter

from esc.streams.runtime.gc_tuning import trim_malloc
from esc.streams.runtime.source_offsets import SEP, Spans, scan_spans

CONSUME_BATCH = 5000
POLL_SECONDS = 0.5
FETCH_BYTES = 8 << 20
PARTITION_FETCH_BYTES = 1 << 20
WATERMARK_TRIES = 8


def _consumer(bootstrap: str) -> Any:
    return Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"esc-replay-{uuid.uuid4().hex}",  # never joined (assign, no commits): librdkafka wants one
            "enable.auto.commit": False,
            "enable.partition.eof": True,
            "auto.offset.reset": "earliest",
            # Small fetches: a fetch is decompressed whole in librdkafka's memory, and a replay that seeks over
            # stretches (source_offsets.py) throws away what it fetched ahead. With 32 MB per partition a full
            # read of 600,000 records peaked at ~470 MB of RSS, and the worker's heap grew to ~1 GB over a burst of
            # back-to-back replays (20 schema diffs at TPC-H SF 0.05); 1 MB per partition peaked at ~170 MB.
            # A record larger than these is still fetched: the broker returns a first batch over the limit so
            # that a consumer makes progress (KIP-74), and librdkafka grows its fetch size for it.
            "fetch.max.bytes": FETCH_BYTES,
            "max.partition.fetch.bytes": PARTITION_FETCH_BYTES,
            # librdkafka prefetches up to 100,000 messages per partition (64 MB) by default: a replay of a large
            # source held hundreds of MB ahead of the backfill, which takes a batch at a time
            "queued.min.messages": 4 * CONSUME_BATCH,
            "queued.max.messages.kbytes": 8 << 10,
            # with small fetches the queue refills often: librdkafka's default pause of 1 s once it is full
            # made a read of 600,000 records take 8.6 s instead of 2.2 s
            "fetch.queue.backoff.ms": 10,
            # librdkafka's lines (a failed connect every second while the broker is down) through Python logging,
            # bounded like the other clients' (streams/runtime/log_limits.py), as the record producer's
            "logger": logging.getLogger("kafka.rdkafka"),
        }
    )


def scan_values(
    bootstrap: str,
    topic: str,
    sources: set[str],
    batch: int = CONSUME_BATCH,
    known: Mapping[int, tuple[int, Spans]] | None = None,
) -> Generator[list[bytes], None, None]:
    """Values of the records of ``sources`` (tombstones left out), every partition from its start to the end it
    had when the scan began, in lists of at most ``batch``. Blocking: run it in a thread. ``known``: where the
    worker read the sources' records (``SourceOffsets.snapshot``): of the partitions it covers only those spans
    are read (the consumer sought over the stretches between them)."""
    prefixes = tuple(s.encode("utf-8") + SEP for s in sources)
    consumer = _consumer(bootstrap)
    try:
        meta = consumer.list_topics(topic, timeout=15).topics.get(topic)
        if meta is None or meta.error is not None:
            return
        ends: dict[int, int] = {}
        spans: dict[int, deque[tuple[int, int]]] = {}
        start: list[TopicPartition] = []
        for p in sorted(meta.partitions):
            low, high = _watermarks(consumer, TopicPartition(topic, p))
            todo = scan_spans(p, low, high, known)
            if todo:
                ends[p] = todo[-1][1]
                spans[p] = deque(todo)
                start.append(TopicPartition(topic, p, todo[0][0]))
        if not start:
            return
        consumer.assign(start)
        out: list[bytes] = []
        while ends:
            for msg in consumer.consume(batch, POLL_SECONDS):
                err = msg.error()
                p = msg.partition()
                if err is not None:
                    if err.code() == KafkaError._PARTITION_EOF:
                        if p in ends and msg.offset() >= ends[p]:
                            del ends[p]
                        continue
                    raise KafkaException(err)
                end = ends.get(p)
                if end is None or msg.offset() >= end:  # written after the scan began: not part of it
                    ends.pop(p, None)
                    continue
                if not _in_span(consumer, topic, p, msg.offset(), spans[p]):
                    continue
                if msg.offset() == end - 1:
                    del ends[p]  # its last record (kept below)
                key, value = msg.key(), msg.value()
                if value is not None and key is not None and key.startswith(prefixes):
                    out.append(value)
                    if len(out) >= batch:
                        yield out
                        out = []
        if out:
            yield out
    finally:
        consumer.close()
        trim_malloc()  # the scan's buffers, freed: back to the system, or the next scan's peak stacks on them


_LEADERLESS = frozenset(
    {KafkaError.NOT_LEADER_FOR_PARTITION, KafkaError.LEADER_NOT_AVAILABLE, KafkaError.UNKNOWN_TOPIC_OR_PART}
)
"""A partition without a leader for a moment. Not a timeout: a broker that does not answer is an outage, raised
after the query's 15 s as before."""


@retry(
    retry=retry_if_exception(lambda e: isinstance(e, KafkaException) and e.args[0].code() in _LEADERLESS),
    stop=stop_after_attempt(WATERMARK_TRIES),
    wait=wait_exponential_jitter(multiplier=0.1, max=2.0),
    reraise=True,
)
def _watermarks(consumer: Any, tp: TopicPartition) -> tuple[int, int]:
    """A partition's low and high offsets; asked again while the partition has no leader for a moment (a topic
    just created, a leader changing), as librdkafka does for its own fetches."""
    low, high = consumer.get_watermark_offsets(tp, timeout=15)
    return int(low), int(high)


def _in_span(consumer: Any, topic: str, p: int, offset: int, todo: deque[tuple[int, int]]) -> bool:
    """Whether ``offset`` of partition ``p`` lies in the next span to read; past it, on to the span after it,
    seeking over the stretch between them (a seek that does not take only means that stretch is read through)."""
    moved = False
    while len(todo) > 1 and offset >= todo[0][1]:
        todo.popleft()
        moved = True
    a, b = todo[0]
    if a <= offset < b:
        return True
    if moved and offset < a:
        try:
            consumer.seek(TopicPartition(topic, p, a))
        except KafkaException:
            pass
    return False


async def read_source_values(
    bootstrap: str,
    topic: str,
    sources: set[str],
    batch: int = CONSUME_BATCH,
    known: Mapping[int, tuple[int, Spans]] | None = None,
) -> AsyncIterator[list[bytes]]:
    """``scan_values`` from the event loop: each list is taken in a worker thread."""
    it = scan_values(bootstrap, topic, sources, batch, known)
    done = object()

    def step() -> Any:
        return next(it, done)

    try:
        while (chunk := await asyncio.to_thread(step)) is not done:
            yield chunk
    finally:
        await asyncio.to_thread(it.close)
