"""Which sources had records deferred in which records partition, shared by every worker: a Faust table whose
changelog is partitioned like the records topic (as the seen-index, streams/runtime/seen_table.py).

A record whose source the contract does not cover yet is deferred: kept in the worker's memory and its offset
committed, to be written once a version covers the source. If the worker then leaves (stopped, crashed, or its
partition moved in a rebalance), the worker that takes over the partition never receives that record again. So a
worker marks (partition, source, itself) before it acknowledges a batch that deferred records; the new owner of a
partition reads the marks of other workers there and replays those sources from the records log once they are
covered (writes are idempotent: if the first worker is still alive and writes them from memory, nothing doubles).
A worker drops its own marks of a source once it wrote its deferred records, and every mark of a source once it
replayed that source from the log.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
from collections.abc import Callable, Sequence
from typing import Any

import faust

from esc.agents.extraction import KEY_SEP, ExtractionWorker
from esc.streams.events import RecordEnvelope

log = logging.getLogger(__name__)

TABLE = "deferred-sources"
SEP = b"\x1f"


def worker_id(state_dir: str) -> bytes:
    """A worker's identity across restarts: its state directory (a restarted worker knows its own deferrals)."""
    return hashlib.blake2b(state_dir.encode("utf-8"), digest_size=8).hexdigest().encode()


def mark_key(partition: int, source: str, worker: bytes) -> bytes:
    return SEP.join((str(partition).encode(), source.encode("utf-8"), worker))


def parse_key(key: bytes) -> tuple[int, str, bytes]:
    p, source, worker = key.split(SEP, 2)
    return int(p), source.decode("utf-8"), worker


def source_of(key: bytes | None) -> str:
    return (key or b"").decode("utf-8", "replace").partition(KEY_SEP)[0]


class SharedDeferred:
    def __init__(self, app: faust.App, records_topic: str, partitions: int, me: bytes) -> None:
        # bytes keys and values: raw serializers (faust.tables.base._serializer_from_type)
        self.table = app.Table(TABLE, default=None, partitions=partitions, key_type=bytes, value_type=bytes)
        self.app = app
        self.records_topic = records_topic
        self.me = me
        self.adopted: set[str] = set()  # other workers' deferred sources this worker replays from the log
        self.worker: Callable[[], ExtractionWorker] | None = None
        self.table.on_recover(self._recovered)

    async def _recovered(self) -> None:
        if self.worker is None:
            return
        owned = {tp.partition for tp in self.app.consumer.assignment() if tp.topic == self.records_topic}
        foreign = set()
        for key in list(self.table.data.keys()):
            p, source, worker = parse_key(key)
            if worker != self.me and p in owned:
                foreign.add(source)
        if foreign:
            queued = self.worker().adopt_log_deferred(foreign)
            self.adopted |= foreign
            log.info("records of %s were deferred by another worker in partitions now ours: replayed from the log "
                     "once covered (now: %s)", sorted(foreign), sorted(queued))  # fmt: skip

    async def after_batch(self, events: Sequence[Any], deferred: Sequence[RecordEnvelope]) -> None:
        """Mark the (partition, source) pairs of the batch's deferred records; awaited before the batch is
        acknowledged."""
        if not deferred:
            return
        sources = {e.source for e in deferred}
        pairs = {(e.message.partition, s) for e in events if (s := source_of(e.key)) in sources}
        data = self.table.data
        sent = []
        for p, source in sorted(pairs):
            key = mark_key(p, source, self.me)
            if key not in data:
                data[key] = b"1"
                sent.append(self.table.send_changelog(p, key, b"1"))
        await asyncio.gather(*sent)

    async def tidy(self) -> None:
        """Drop the marks that are done: this worker's for sources it wrote, and every worker's for sources
        this worker replayed from the log."""
        if self.worker is None:
            return
        w = self.worker()
        pending = w.log_deferred | w.log_only
        replayed = self.adopted - pending
        self.adopted -= replayed
        data = self.table.data
        sent = []
        for key in list(data.keys()):
            p, source, worker = parse_key(key)
            if source in replayed or (worker == self.me and source not in pending):
                data.pop(key, None)
                sent.append(self.table.send_changelog(p, key, None))
        await asyncio.gather(*sent)
