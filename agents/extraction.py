"""The extraction stage: applies the current contract to record batches, defers records whose source the contract
does not cover yet, and backfills -- from memory when it can, else by replaying the records log -- whenever a new
contract version touches what was ingested or covers what was deferred (``ExtractionWorker``, one per worker).

Messages are ``(key, value)`` byte pairs as on the topics; a ``None`` value on the records topic is a tombstone
(the record was deleted) and retracts that source record.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
import weakref
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from esc.agents import metrics
from esc.agents.backfill import BackfillTracker, DeferredRecords, ReplayPlan, plan_replay
from esc.agents.extractors import covers
from esc.agents.ingest import Ingestor, IngestResult, Prepared, parse
from esc.agents.record_check import split as check_pushed
from esc.agents.write_turns import WriteTurns
from esc.contract.evolve import diff_items
from esc.contract.model import Contract, ContractDiff
from esc.streams.events import DeadLetter, RecordEnvelope

log = logging.getLogger(__name__)

Message = tuple[bytes | None, bytes | None]
ReplayLog = Callable[[set[str]], AsyncIterator[Sequence[bytes | RecordEnvelope]]]
"""Replays the latest version of every record of the given sources, in batches (the compacted records topic, or
the embedded record log)."""

KEY_SEP = "\x1f"


def envelope_or_dead(key: bytes | None, value: bytes | None) -> RecordEnvelope | DeadLetter:
    """A records-topic message as an envelope; a tombstone becomes a ``deleted`` envelope for its key."""
    if value is None:
        text = (key or b"").decode("utf-8", errors="replace")
        source, sep, record_id = text.partition(KEY_SEP)
        if not sep or not source or not record_id:
            return DeadLetter.of(f"invalid tombstone: key {text[:80]!r} is not 'source<US>record id'", "push", key)
        return RecordEnvelope(source=source, record_id=record_id, payload={}, deleted=True)
    return parse(value)


def _parse_all(batch: Sequence[bytes | RecordEnvelope]) -> list[RecordEnvelope]:
    """Envelopes of a replayed batch (the log held only valid envelopes; anything else is skipped)."""
    return [e for e in (b if isinstance(b, RecordEnvelope) else parse(b) for b in batch) if isinstance(e, RecordEnvelope)]


REPLAY_BATCH = 5000
"""Records per planned batch when deferred records are replayed from memory (the log's batches are its own); each
batch is parsed from the records' JSON as it is planned."""
RETRY_FIRST_SECONDS = 1.0  # a backfill that failed runs again after this, doubling up to RETRY_MOST_SECONDS
RETRY_MOST_SECONDS = 30.0


async def _in_batches(envs: list[bytes]) -> AsyncIterator[list[bytes | RecordEnvelope]]:
    for i in range(0, len(envs), REPLAY_BATCH):
        yield list(envs[i : i + REPLAY_BATCH])


async def _cancelled(task: asyncio.Task[Any]) -> None:
    if not task.done():
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


def split_messages(messages: Sequence[Message]) -> tuple[list[RecordEnvelope], list[DeadLetter]]:
    envs: list[RecordEnvelope] = []
    dead: list[DeadLetter] = []
    for key, value in messages:
        item = envelope_or_dead(key, value)
        (dead if isinstance(item, DeadLetter) else envs).append(item)  # type: ignore[arg-type]
    return envs, dead


@dataclass
class Planned:
    """A record batch parsed and planned, not written yet (``ExtractionWorker.plan_records``)."""

    prepared: Prepared | None  # None: no valid record in the batch
    dead: list[DeadLetter] = field(default_factory=list)
    release: Callable[[], None] = field(default=lambda: None, repr=False, compare=False)
    """Ends the batch's claim on the writer (``WriteTurns``): when it was written, or when it is dropped."""


class ExtractionWorker:
    """Applies the current contract to records; defers what it cannot write yet; backfills on new versions."""

    def __init__(
        self,
        ingestor: Ingestor,
        replay_log: ReplayLog,
        deferred_limit: int | None = None,
        state_path: Path | None = None,
    ) -> None:
        self.ingestor = ingestor
        self.replay_log = replay_log
        self.deferred = DeferredRecords() if deferred_limit is None else DeferredRecords(deferred_limit)
        self.tracker = BackfillTracker()
        self.contract: Contract | None = None
        self.contract_since = float("-inf")  # monotonic time the current version (and content) arrived
        self.turns = WriteTurns()  # one writer at a time, new batches before a backfill's parts
        self._lock = self.turns.lock
        self._queue: asyncio.Queue[ReplayPlan] = asyncio.Queue()
        self._queued: set[str] = set()  # sources in queued plans (not started yet)
        self.backfilled = 0
        self.last_batch = float("-inf")  # monotonic time of the last record batch (see busy)
        # Durable per-worker state: which sources were written, and which were deferred (their records may be
        # only in the log after a restart). Offsets of deferred records are committed, so without this a crash
        # would lose them; with it, the first contract after a restart replays them from the log.
        self.state_path = state_path
        self.log_deferred: set[str] = set()  # sources with records deferred and not yet written
        self.log_only: set[str] = set()  # ...of which records deferred before a restart: in the log only
        self._restarted = False
        if state_path is not None and state_path.exists():
            saved = json.loads(state_path.read_text("utf-8"))
            self.ingestor.ingested |= set(saved.get("ingested", []))
            self.log_deferred = set(saved.get("deferred", []))
            self.log_only = set(self.log_deferred)
            self._restarted = True
        self._saved: tuple[frozenset[str], frozenset[str]] = (frozenset(), frozenset())

    def _save(self) -> None:
        now = (frozenset(self.ingestor.ingested), frozenset(self.log_deferred))
        if self.state_path is None or now == self._saved:
            return
        self.state_path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.state_path.with_suffix(".tmp")
        tmp.write_text(json.dumps({"ingested": sorted(now[0]), "deferred": sorted(now[1])}), "utf-8")
        tmp.replace(self.state_path)
        self._saved = now

    async def _handle(self, envs: Sequence[RecordEnvelope], rekey: bool = False) -> IngestResult:
        prepared = await asyncio.to_thread(self.ingestor.prepare, list(envs), self.contract)  # planning: unlocked
        return await self._apply(prepared, rekey)

    async def _apply(self, prepared: Prepared, rekey: bool = False) -> IngestResult:
        if not prepared.writes:  # only deferrals (a source not covered yet): nothing to wait for a backfill for
            return await asyncio.to_thread(self.ingestor.apply, prepared, rekey=rekey)
        async with self._lock:
            return await asyncio.to_thread(self.ingestor.apply, prepared, rekey=rekey)

    async def on_records(self, messages: Sequence[Message]) -> IngestResult:
        """One batch from the records topic. Returns the result; its ``dead`` go to the dead-letter topic."""
        return await self.write_planned(await self.plan_records(messages))

    async def plan_records(self, messages: Sequence[Message]) -> Planned:
        """The first half of :meth:`on_records`: parse, check and plan a batch (off the event loop, no store
        call). A runtime may plan the next batch while :meth:`write_planned` writes this one; batches must be
        written in the order they were planned."""
        release = self.turns.claim()  # a backfill's parts wait from here until it is written
        try:
            planned = await self._plan(messages)
        except BaseException:
            release()
            raise
        if planned.prepared is None or not planned.prepared.writes:  # nothing for the writer (only deferrals)
            release()
            return planned
        planned.release = release
        weakref.finalize(planned, release).atexit = False  # dropped unwritten (a rebalance cut it): claim ends
        return planned

    async def _plan(self, messages: Sequence[Message]) -> Planned:
        envs, dead = await asyncio.to_thread(split_messages, messages)  # parsing: off the event loop
        if self.contract is not None:  # pushed records must fit their source's record schema (agents/record_check.py)
            envs, rejected = await asyncio.to_thread(check_pushed, envs, self.contract)
            dead += rejected
        for d in dead:
            metrics.DLQ.labels(d.stage, metrics.dlq_reason_label(d.reason)).inc()
        if not envs:
            return Planned(None, dead)
        self.last_batch = time.monotonic()
        return Planned(await asyncio.to_thread(self.ingestor.prepare, envs, self.contract), dead)  # unlocked

    async def write_planned(self, planned: Planned) -> IngestResult:
        """The second half of :meth:`on_records`: write a planned batch, defer what it could not cover."""
        try:
            result = await self._apply(planned.prepared) if planned.prepared is not None else IngestResult()
        finally:
            planned.release()
        if planned.prepared is not None:
            self.last_batch = time.monotonic()
        result.dead = planned.dead + result.dead
        if result.deferred:
            self.deferred.add(result.deferred)
            self.log_deferred |= {e.source for e in result.deferred}
        self._save()
        if result.deferred and self.contract is not None:
            # A contract may have arrived while this batch was being planned with the older one.
            ready = {s for s in {e.source for e in result.deferred} if covers(self.contract, s)}
            if ready:
                self._enqueue(ReplayPlan(version=self.contract.version, ready=ready))
        return result

    def on_contract(self, contract: Contract) -> ReplayPlan | None:
        """A contract arrived on the contracts topic: use it, and queue what it asks to replay."""
        previous = self.contract
        if previous is not None and contract.version < previous.version:
            return None  # an older version (history being re-read): nothing to do
        diff = None
        if previous is not None and contract.content_hash != previous.content_hash:
            diff = ContractDiff(
                contract_id=contract.contract_id,
                from_version=previous.version,
                to_version=contract.version,
                added=diff_items(previous, contract),
            )
        # Sources queued or being backfilled count as ingested: their replay may already be planned with the older
        # contract, so what this version adds to them needs a replay of its own.
        written = self.ingestor.ingested | self.tracker.pending() | self._queued
        plan = plan_replay(contract, diff, written, self.deferred.sources())
        if previous is None or (previous.version, previous.content_hash) != (contract.version, contract.content_hash):
            self.contract_since = time.monotonic()
        self.contract = contract
        self.ingestor.use(contract)
        covered = {s for s in contract.sources if covers(contract, s)}
        if self._restarted:
            # The first contract after a restart: what was written before may predate this version; replay it
            # once (writes are idempotent).
            self._restarted = False
            plan.replay |= self.ingestor.ingested & covered
        # Records deferred before a restart exist only in the log: replay those sources from it once covered.
        plan.replay |= self.log_only & covered
        plan.replay -= plan.rekey
        if plan:
            self._enqueue(plan)
            return plan
        return None

    def adopt_log_deferred(self, sources: set[str]) -> set[str]:
        """Sources whose records another worker deferred (and committed) in partitions this worker took over: in
        the log only. They are replayed from it once covered (now, for those the contract covers already).
        Returns the sources queued now."""
        self.log_deferred |= sources
        self.log_only |= sources
        self._save()
        covered = {s for s in sources if self.contract is not None and covers(self.contract, s)}
        if self.contract is not None and covered:
            self._enqueue(ReplayPlan(version=self.contract.version, replay=covered))
        return covered

    def _enqueue(self, plan: ReplayPlan) -> None:
        self._queued |= plan.rekey | plan.replay | plan.ready
        self._queue.put_nowait(plan)

    async def run_backfill(self, stop: asyncio.Event | None = None) -> None:
        """Drain queued replay plans forever (or until ``stop``); coalesces plans queued meanwhile."""
        wait = RETRY_FIRST_SECONDS
        while stop is None or not stop.is_set():
            plan = await self._queue.get()
            while not self._queue.empty():
                more = self._queue.get_nowait()
                plan.rekey |= more.rekey
                plan.replay |= more.replay
                plan.ready |= more.ready
                plan.version = max(plan.version, more.version)
            try:
                await self.backfill(plan)
                wait = RETRY_FIRST_SECONDS
            except Exception as exc:  # a replay read in a Kafka outage raises the client's kinds; the loop must live
                # It ran again from the log, which holds every record (records of ``ready`` sources taken from
                # memory may be gone with the failed attempt); until then its sources stay pending.
                sources = ", ".join(sorted(plan.rekey | plan.replay | plan.ready))
                log.warning("backfill for contract v%s failed (%s: %s); replaying %s from the log in %.0f s",
                            plan.version, type(exc).__name__, str(exc)[:200], sources, wait)  # fmt: skip
                await asyncio.sleep(wait)
                wait = min(wait * 2, RETRY_MOST_SECONDS)
                self._enqueue(ReplayPlan(version=plan.version, rekey=plan.rekey, replay=plan.replay | plan.ready,
                                         reason=plan.reason))  # fmt: skip

    async def backfill(self, plan: ReplayPlan) -> int:
        order = self.tracker.start(plan)  # pending in the tracker from here on
        self._queued -= {s for s, _ in order}
        if not order:
            return 0
        log.info("backfill for contract v%s: %s", plan.version, ", ".join(s for s, _ in order))
        rekey = {s for s, r in order if r}
        from_memory = [
            s
            for s, _ in order
            if s in plan.ready and s not in self.deferred.overflowed and s not in rekey and s not in self.log_only
        ]
        done = 0
        if from_memory:  # every source's records in shared batches: a folder of 500 small sources is one write
            raw = [b for source in from_memory for b in self.deferred.take_raw([source])]  # in the plan's order
            done += await self._pipelined(_in_batches(raw), set())  # (parsed batch by batch, as the log's)
            for source in from_memory:
                self.tracker.finish(source)
                self.log_deferred.discard(source)
        from_log = {s for s, _ in order} - set(from_memory)
        if from_log:
            self.deferred.drop(from_log)  # the log has them all; drop the partial in-memory copies
            self.deferred.overflowed -= from_log
            done += await self._pipelined(self.replay_log(from_log), rekey)
            for s in from_log:
                self.tracker.finish(s)
            replayed = {s for s in from_log if self.contract is not None and covers(self.contract, s)}
            self.log_deferred -= replayed
            self.log_only -= replayed
        self.backfilled += done
        self._save()
        return done

    def _prepare_parts(
        self, batch: Sequence[bytes | RecordEnvelope], rekey: set[str]
    ) -> list[tuple[list[RecordEnvelope], Prepared, bool]]:
        """Parse and plan one replayed batch: (envelopes, plan, rekey?) per part, re-keyed sources first."""
        envs = _parse_all(batch)
        out = []
        for is_rekey in (True, False):
            part = [e for e in envs if (e.source in rekey) is is_rekey]
            if part:
                out.append((part, self.ingestor.prepare(part, self.contract), is_rekey))
        return out

    async def _pipelined(
        self, batches: AsyncIterator[Sequence[bytes | RecordEnvelope]], rekey: set[str], ahead: int = 2
    ) -> int:
        """Write replayed batches in order while the next ``ahead`` are read, parsed and planned: the store works
        on one batch while this process prepares the next, instead of the two taking turns. Records of ``rekey``
        sources are written with ``rekey=True``. Returns the records written (not deferred again)."""
        queue: asyncio.Queue[list[tuple[list[RecordEnvelope], Prepared, bool]] | None] = asyncio.Queue(maxsize=ahead)

        async def planner() -> None:
            try:
                async for batch in batches:
                    await self.turns.after_new()  # new records plan first (the GIL and the cores are theirs)
                    await queue.put(await asyncio.to_thread(self._prepare_parts, batch, rekey))
            finally:
                await queue.put(None)

        task = asyncio.create_task(planner())
        done = 0
        try:
            while (parts := await queue.get()) is not None:
                for part, prepared, is_rekey in parts:
                    await self.turns.after_new()  # new batches planned or waiting go first
                    async with self._lock:
                        result = await asyncio.to_thread(self.ingestor.apply, prepared, rekey=is_rekey, replay=True)
                    for source in {e.source for e in part}:
                        self.tracker.progress(source, sum(1 for e in part if e.source == source))
                    if result.deferred:
                        self.deferred.add(result.deferred)
                    done += len(part) - len(result.deferred)
            await task  # re-raises what stopped the planner early
        finally:
            await _cancelled(task)
        return done

    def idle(self) -> bool:
        return self._queue.empty() and not self.tracker.pending()

    def busy(self, within: float = 1.0) -> bool:
        """Graph work is under way or waiting: a backfill, deferred records, a write (one waiting out a store
        outage included), or a record batch in the last ``within`` seconds. Background work (the vector writer,
        the mention linker, example queries) waits for it."""
        return (not self.idle() or len(self.deferred) > 0 or self._lock.locked()
                or time.monotonic() - self.last_batch < within)  # fmt: skip
