"""The seen-index of the Faust runtime, shared by every worker: record key -> content hash in a Faust table whose
changelog topic is partitioned like the records topic (a record's mark goes to the changelog partition of the
records partition it came from).

Why a co-partitioned table (README, decisions): Faust assigns partition p of the records topic and of the table's
changelog to the same worker, and a worker that receives a partition in a rebalance reads that changelog
partition before its stream resumes. So the worker that takes over a partition knows every record its previous
owner profiled, and a re-delivery (offsets not committed yet when the partition moved) counts nothing twice. A
per-worker file could not know what another worker profiled; the graph store is not written in the same step as
the profile updates; a compacted topic read by hand would be this table without Faust's recovery.

Fencing against a rebalance in the middle of a batch: profiling a batch (check, profile, stage, send) holds a gate;
when partitions are revoked the worker waits for the gate before it rejoins the group (the new owner recovers only
after that), and until its next assignment is recovered it profiles nothing. Events of a partition it no longer
owns are left to the new owner (their offsets are not committed by this worker).

Crash safety as before (agents/stores/seen.py): profile updates and seen-marks are staged in one local SQLite
transaction, then sent (updates first, then marks) and dropped from the stage once Kafka has them; a restarted
worker sends what was staged before it profiles again.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, cast

import faust

from esc.agents.pipeline import profile_update
from esc.agents.profiler import ProfileDelta
from esc.agents.stores.seen import Mark, SeenRecords, sightings
from esc.streams.connectors.file_profiles import PROFILED_HEADER, PROFILED_VALUE

log = logging.getLogger(__name__)

TABLE = "seen-records"

Profile = Callable[[list[bytes | None], str, int, int, dict[str, int]], Awaitable[list[ProfileDelta]]]


def profiled(event: Any) -> bool:
    """The record's file was profiled whole before it was sent (``streams/connectors/file_profiles.py``): its
    evidence is in the contract agent already, so it is neither profiled again nor remembered here."""
    headers = event.message.headers
    if not headers:
        return False
    items = headers.items() if isinstance(headers, Mapping) else headers
    return any(k == PROFILED_HEADER and v == PROFILED_VALUE for k, v in items)


@contextmanager
def unfinished_not_acked(events: Sequence[Any]) -> Iterator[None]:
    """A batch whose processing raised or was cancelled (a worker stopping) is never acknowledged: Faust's
    ``take``/``take_events`` acknowledge a batch in a ``finally`` even when the agent did not finish it, and the
    stopping consumer commits it, so its records would be lost for profiling and the graph. Marked as acknowledged
    here, the consumer never counts them (``faust.types.tuples.Message.ack``): the next owner re-reads them."""
    try:
        yield
    except BaseException:
        for e in events:
            e.message.acked = True
        raise


class SharedSeen:
    def __init__(self, app: faust.App, records_topic: str, partitions: int, stage_path: Path) -> None:
        # bytes keys and values: raw serializers (faust.tables.base._serializer_from_type)
        self.table = app.Table(TABLE, default=None, partitions=partitions, key_type=bytes, value_type=bytes)
        self.records_topic = records_topic
        self.outbox = SeenRecords(stage_path)  # the local stage (its own ``seen`` table stays empty here)
        self.app = app
        self.owned: set[int] = set()  # records partitions assigned to this worker and recovered
        self.ready = asyncio.Event()  # set once the table is recovered for the current assignment
        self.gate = asyncio.Lock()  # held while a batch is profiled and its results sent
        self.send_lock = asyncio.Lock()
        self.generation = 0  # revocations seen so far
        self.profiles_topic: Any = None
        self.producer = "worker"  # this worker's id in the batch marks (see _sequence)
        self._last_sequence = 0
        self.table.on_recover(self._recovered)
        app.on_partitions_revoked.connect(cast(Any, self._revoked))  # mode types receivers narrowly

    @property
    def data(self) -> Any:
        return self.table.data

    async def _recovered(self) -> None:
        assigned = self.app.consumer.assignment()
        self.owned = {tp.partition for tp in assigned if tp.topic == self.records_topic}
        self.ready.set()
        log.info("seen-index ready for records partitions %s (%d marks)", sorted(self.owned), len(self.table.data))

    async def _revoked(self, sender: Any, *args: Any, signal: Any, **kwargs: Any) -> None:
        """Partitions are revoked: finish the batch being profiled (its marks reach the changelog before the
        new owner reads it), then profile nothing until the next assignment is recovered."""
        revoked = args[0] if args else kwargs.get("revoked", ())
        self.generation += 1
        self.ready.clear()
        async with self.gate:
            self.owned -= {tp.partition for tp in revoked if tp.topic == self.records_topic}
            await self.send_staged()

    @contextmanager
    def batch(self, events: Sequence[Any]) -> Iterator[None]:
        """Around a records batch: a batch cut short is not acknowledged, nor one that a revocation overlapped
        (Faust drops a revoked partition's acknowledgements when the revocation starts; one that arrives later
        would be committed if the partition came back, past records not read again). Such a batch is read again
        from the committed offset: profiling drops it through the seen-index, extraction writes idempotently."""
        generation = self.generation
        with unfinished_not_acked(events):
            yield
        if self.generation != generation:
            self.never_ack(events)

    @staticmethod
    def never_ack(events: Sequence[Any]) -> None:
        """This worker never acknowledges these events (``faust.types.tuples.Message.ack`` skips them)."""
        for e in events:
            e.message.acked = True

    async def drain(self, *gates: asyncio.Lock, timeout: float = 30.0) -> None:
        """The worker is stopping: let the batch being profiled (and what else ``gates`` guard) finish and send
        what it staged, and start no other; bounded by ``timeout``."""
        self.ready.clear()
        try:
            async with asyncio.timeout(timeout):
                for gate in (self.gate, *gates):
                    async with gate:
                        pass
                await self.send_staged()
        except TimeoutError:
            log.warning("stopping with a batch still being profiled after %.0f s: it is read again", timeout)

    async def profile(self, events: Sequence[Any], profile: Profile) -> None:
        """Profile the batch's records this worker owns and has not profiled before (by any worker)."""
        while True:
            await self.ready.wait()
            async with self.gate:
                if not self.ready.is_set():
                    continue  # a rebalance began while this batch waited
                await self.send_staged()  # what a crash left staged: its marks must be known before the check
                await self._profile(events, profile)
                return

    async def _profile(self, events: Sequence[Any], profile: Profile) -> None:
        mine = [e for e in events if e.message.partition in self.owned]
        if len(mine) < len(events):
            for e in events:
                if e.message.partition not in self.owned:
                    # Never acknowledged by this worker: an acknowledgement after the revocation would be
                    # committed if the partition came back, past records its new owner had not read yet.
                    e.message.acked = True
            log.info("%d records of revoked partitions left to their new owner", len(events) - len(mine))
        marks: list[Mark] = []
        live: list[tuple[int, bytes, bytes]] = []
        data = self.table.data
        first: dict[int, int] = {}
        last: dict[int, int] = {}
        for e in mine:
            p, off = e.message.partition, e.message.offset
            first.setdefault(p, off)
            last[p] = off
            key = e.key or b""
            if e.value is None:
                marks.append((p, key, None))  # a tombstone: if the record comes back it is new evidence
            elif not profiled(e):
                live.append((p, key, e.value))
            elif key in data:
                # Its file was profiled whole: a mark an earlier version left (read record by record) must not
                # make the same content, read record by record again later (A, B, A), look seen: forgotten.
                marks.append((p, key, None))
        if not first:
            return
        flags, observed = sightings([(k, v) for _, k, v in live], data)
        fresh: list[bytes | None] = [v for (_, _, v), new in zip(live, flags, strict=True) if new]
        marks += [(p, k, h) for (p, _, _), (k, h), new in zip(live, observed, flags, strict=True) if new]
        head = min(first)
        name = self.records_topic
        also = {f"{name}/{p}": off for p, off in last.items() if p != head}
        also[f"{name}@{self.producer}"] = self._sequence()  # this batch's own mark (see _sequence)
        deltas = await profile(fresh, f"{name}/{head}", first[head], last[head], also) if fresh else []
        staged = [(d.source.encode(), profile_update(d)) for d in deltas]
        for _, k, h in marks:  # this worker's next batch sees them at once; other workers through the changelog
            if h is None:
                data.pop(k, None)
            else:
                data[k] = h
        await asyncio.to_thread(self.outbox.stage, (), staged, marks)
        await self.send_staged()

    def _sequence(self) -> int:
        """A mark that grows with every batch this worker profiles, across restarts (nanoseconds, never repeated).

        The contract agent drops a delta as re-delivered when every mark it carries was applied already. Marks of
        records offsets alone cannot tell: after a rebalance a partition is read again from its committed offset,
        and records below the highest offset applied can still be new (the previous owner's batch was cut, or
        a fetch delivered a record of the old position first); only the seen-index knows, and a delta holds only
        records it did not know. So each batch also carries this worker's own sequence: a delta sent again (a
        restart re-sends what it staged, the profiles topic re-delivers after the agent moved) carries the same
        one and is dropped; a new batch never is."""
        self._last_sequence = max(time.time_ns(), self._last_sequence + 1)
        return self._last_sequence

    async def send_staged(self) -> None:
        """Send every staged profile update, then every staged mark, oldest first; drop them from the stage once
        Kafka has them."""
        async with self.send_lock:
            pending = await asyncio.to_thread(self.outbox.staged)
            if pending:
                sent = [await self.profiles_topic.send(key=k, value=v) for _, k, v in pending]
                await asyncio.gather(*sent)
                await asyncio.to_thread(self.outbox.sent, [i for i, _, _ in pending])
            marks = await asyncio.to_thread(self.outbox.staged_marks)
            if marks:
                data = self.table.data
                futures = []
                for _, (p, k, h) in marks:
                    if h is None:
                        data.pop(k, None)
                    else:
                        data[k] = h
                    futures.append(self.table.send_changelog(p, k, h))
                await asyncio.gather(*futures)
                await asyncio.to_thread(self.outbox.marks_sent, [i for i, _ in marks])

    def close(self) -> None:
        self.outbox.close()
