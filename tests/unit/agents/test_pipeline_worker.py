"""ExtractionWorker orchestration: deferral, backfill from memory or the log, and restarts that lose nothing."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from esc.agents.backfill import plan_replay
from esc.agents.embedding import HashingEmbedder
from esc.agents.extractors import PENDING
from esc.agents.ingest import Ingestor
from esc.agents.pipeline import ExtractionWorker, envelope_or_dead
from esc.contract.entities import with_entities
from esc.contract.model import Contract
from esc.streams.events import DeadLetter, RecordEnvelope
from tests.fakes.contracts import chinook_like
from tests.unit.agents.fakes import RecordingGraph, RecordingVectors

COLLECTION = "EscChunks"


def env(source: str, rid: str, payload: dict[str, Any]) -> RecordEnvelope:
    return RecordEnvelope(source=source, record_id=rid, payload=payload)


ARTISTS = [env("Artist", f"r{i}", {"ArtistId": i, "Name": f"artist {i}"}) for i in range(1, 6)]
ALBUMS = [env("Album", f"a{i}", {"AlbumId": i, "Title": f"album {i}", "ArtistId": i}) for i in range(1, 6)]


def contract(artist_covered: bool) -> Contract:
    c = with_entities(chinook_like())
    if not artist_covered:
        c.sources["Artist"].identity_key = []
        c.sources["Artist"].key_evidence = {PENDING: "waiting for the file to complete"}
        c.version, c.content_hash = 1, "v1"
    else:
        c.version, c.content_hash = 2, "v2"
    return c


class Log:
    """The compacted records log: every record ever sent, replayable by source."""

    def __init__(self) -> None:
        self.records: list[RecordEnvelope] = []
        self.replays: list[set[str]] = []

    async def replay(self, sources: set[str]) -> AsyncIterator[list[bytes | RecordEnvelope]]:
        self.replays.append(set(sources))
        yield [r for r in self.records if r.source in sources]


def messages(envs: list[RecordEnvelope]) -> list[tuple[bytes | None, bytes | None]]:
    return [(e.key().encode(), e.model_dump_json().encode()) for e in envs]


def new_worker(graph: RecordingGraph, log: Log, state: Path) -> ExtractionWorker:
    ingestor = Ingestor(graph, RecordingVectors(), HashingEmbedder(), COLLECTION, embed_batch=16)
    return ExtractionWorker(ingestor, log.replay, state_path=state)


async def drain(w: ExtractionWorker) -> None:
    while not w._queue.empty():
        await w.backfill(w._queue.get_nowait())


def labelled(graph: RecordingGraph, label: str) -> int:
    return graph.count(label)


def test_deferred_records_are_written_from_memory_when_the_contract_covers_them(tmp_path: Path) -> None:
    async def run() -> None:
        graph, log = RecordingGraph(), Log()
        w = new_worker(graph, log, tmp_path / "state.json")
        w.on_contract(contract(artist_covered=False))
        log.records += ARTISTS + ALBUMS
        result = await w.on_records(messages(ARTISTS + ALBUMS))
        assert len(result.deferred) == len(ARTISTS) and labelled(graph, "Artist") == 0
        await drain(w)
        plan = w.on_contract(contract(artist_covered=True))
        assert plan is not None and "Artist" in plan.ready
        await drain(w)
        assert labelled(graph, "Artist") == len(ARTISTS) and not w.log_deferred
        assert not any("Artist" in r for r in log.replays)  # served from memory, not the log

    asyncio.run(run())


def test_a_restart_replays_what_was_deferred_before_it_from_the_log(tmp_path: Path) -> None:
    async def run() -> None:
        graph, log = RecordingGraph(), Log()
        state = tmp_path / "state.json"
        w1 = new_worker(graph, log, state)
        w1.on_contract(contract(artist_covered=False))
        log.records += ARTISTS
        await w1.on_records(messages(ARTISTS))  # deferred; the broker commits these offsets
        assert labelled(graph, "Artist") == 0
        # crash: w1's memory is gone. A new worker with the same state file starts; new records of the same
        # source arrive after the restart (so memory holds only part of them).
        late = env("Artist", "r6", {"ArtistId": 6, "Name": "artist 6"})
        log.records.append(late)
        w2 = new_worker(graph, log, state)
        assert w2.log_only == {"Artist"}
        w2.on_contract(contract(artist_covered=False))
        await w2.on_records(messages([late]))
        await drain(w2)
        plan = w2.on_contract(contract(artist_covered=True))
        assert plan is not None and "Artist" in plan.replay
        await drain(w2)
        assert labelled(graph, "Artist") == len(ARTISTS) + 1  # nothing lost
        assert not w2.log_only and not w2.log_deferred

    asyncio.run(run())


def test_first_contract_after_a_restart_replays_ingested_sources_once(tmp_path: Path) -> None:
    async def run() -> None:
        graph, log = RecordingGraph(), Log()
        state = tmp_path / "state.json"
        w1 = new_worker(graph, log, state)
        w1.on_contract(contract(artist_covered=True))
        log.records += ALBUMS
        await w1.on_records(messages(ALBUMS))
        assert "Album" in w1.ingestor.ingested
        w2 = new_worker(graph, log, state)
        plan = w2.on_contract(contract(artist_covered=True))
        assert plan is not None and "Album" in plan.replay
        assert (
            w2.on_contract(contract(artist_covered=False).model_copy(update={"version": 0})) is None
        )  # older

    asyncio.run(run())


def test_tombstones_become_retractions_and_bad_keys_dead_letters() -> None:
    item = envelope_or_dead(b"Artist\x1fr1", None)
    assert isinstance(item, RecordEnvelope) and item.deleted and item.record_id == "r1"
    assert isinstance(envelope_or_dead(b"no-separator", None), DeadLetter)


def test_a_version_arriving_while_a_backfill_is_queued_replays_that_source_again(tmp_path: Path) -> None:
    """v1 covers Album without its FK; Album's backfill is queued (not run) when v2 adds Album -> Artist: the new
    version must replay Album too, or the queued backfill (planned under v1) would leave the edges out."""

    async def run() -> None:
        graph, log = RecordingGraph(), Log()
        w = new_worker(graph, log, tmp_path / "state.json")
        full = contract(artist_covered=True)
        v1 = full.model_copy(
            update={
                "foreign_keys": [fk for fk in full.foreign_keys if fk.from_.source != "Album"],
                "relationships": [r for r in full.relationships if r.from_entity != "Album"],
                "version": 1,
                "content_hash": "v1",
            }
        )
        w.on_contract(v1)
        log.records += ALBUMS
        await w.on_records(messages(ALBUMS))  # written live under v1: no FK edges yet
        assert "Album" in w.ingestor.ingested
        w.ingestor.ingested.clear()  # as if Album's records were still waiting in a queued backfill
        w._enqueue(plan_replay(v1, None, set(), {"Album"}))
        plan = w.on_contract(full.model_copy(update={"version": 2, "content_hash": "v2"}))
        assert plan is not None and "Album" in plan.replay

    asyncio.run(run())


def test_records_that_are_only_deferred_do_not_wait_for_a_write_in_progress(tmp_path: Path) -> None:
    """Profiling and extraction share one pass over the records topic, so a batch that only defers records must
    not queue behind a backfill's store write; one that writes does."""

    async def run() -> None:
        graph, log = RecordingGraph(), Log()
        w = new_worker(graph, log, tmp_path / "state.json")
        w.on_contract(contract(artist_covered=False))
        async with w._lock:  # a backfill batch being written
            deferred = await asyncio.wait_for(w.on_records(messages(ARTISTS)), 5)
            assert len(deferred.deferred) == len(ARTISTS)
            writing = asyncio.create_task(w.on_records(messages(ALBUMS)))
            await asyncio.sleep(0.2)
            assert not writing.done()  # Album is covered: its write waits for the lock
        result = await asyncio.wait_for(writing, 5)
        assert result.written == len(ALBUMS) and labelled(graph, "Album") == len(ALBUMS)

    asyncio.run(run())


def test_a_backfill_whose_replay_fails_runs_again_from_the_log_and_the_loop_lives_on(
    tmp_path: Path, monkeypatch: Any
) -> None:
    """A replay that raises (the records topic read in a Kafka outage) used to end ``run_backfill`` for good: no
    later contract version was ever backfilled. Now the plan runs again, from the log, after a pause."""
    from esc.agents import extraction

    monkeypatch.setattr(extraction, "RETRY_FIRST_SECONDS", 0.01)

    class FlakyLog(Log):
        async def replay(self, sources: set[str]) -> AsyncIterator[list[bytes | RecordEnvelope]]:
            self.replays.append(set(sources))
            if len(self.replays) == 1:
                raise ConnectionError("no broker accepts connections")
            yield [r for r in self.records if r.source in sources]

    async def run() -> None:
        graph, log = RecordingGraph(), FlakyLog()
        state = tmp_path / "state.json"
        w1 = new_worker(graph, log, state)
        w1.on_contract(contract(artist_covered=False))
        log.records += ARTISTS
        await w1.on_records(messages(ARTISTS))  # deferred, then a restart: they are in the log only
        w2 = new_worker(graph, log, state)
        task = asyncio.create_task(w2.run_backfill())
        w2.on_contract(contract(artist_covered=False))
        plan = w2.on_contract(contract(artist_covered=True))
        assert plan is not None and "Artist" in plan.replay
        for _ in range(200):
            if labelled(graph, "Artist") == len(ARTISTS):
                break
            await asyncio.sleep(0.01)
        assert labelled(graph, "Artist") == len(ARTISTS) and len(log.replays) == 2
        assert not task.done()  # the loop lives on for the next version
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task

    asyncio.run(run())


def test_the_time_a_version_arrived_is_kept_until_another_comes(tmp_path: Path) -> None:
    """``contract_since`` (the example queries wait for a version to be that old): set by a new version or new
    content, not by the same contract received again (a republished report, history re-read)."""
    w = new_worker(RecordingGraph(), Log(), tmp_path / "state.json")
    assert w.contract_since == float("-inf")
    w.on_contract(contract(artist_covered=False))
    first = w.contract_since
    assert first > float("-inf")
    w.contract_since = 0.0
    w.on_contract(contract(artist_covered=False))
    assert w.contract_since == 0.0  # the same version and content: unchanged
    w.on_contract(contract(artist_covered=True))
    assert w.contract_since >= first > 0.0
