"""New record batches are written before a backfill's next part, and a backfill still moves under a steady stream
(agents/write_turns.py)."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import AsyncIterator, Sequence
from pathlib import Path

from esc.agents.backfill import ReplayPlan
from esc.agents.embedding import HashingEmbedder
from esc.agents.ingest import Ingestor
from esc.agents.pipeline import ExtractionWorker
from esc.agents.types import EntityWrite
from esc.agents.write_turns import WriteTurns
from esc.streams.events import RecordEnvelope
from tests.unit.agents.fakes import RecordingGraph, RecordingVectors
from tests.unit.agents.test_pipeline_worker import ALBUMS, ARTISTS, COLLECTION, contract, messages


class OrderedGraph(RecordingGraph):
    """Remembers which source's records each entity write carried, in order."""

    def __init__(self) -> None:
        super().__init__()
        self.order: list[str] = []

    def upsert_entities(self, rows: Sequence[EntityWrite]) -> int:
        for source in dict.fromkeys(r.provenance.source for r in rows):
            if not self.order or self.order[-1] != source:
                self.order.append(source)
        return super().upsert_entities(rows)


async def albums_in_parts(sources: set[str]) -> AsyncIterator[list[bytes | RecordEnvelope]]:
    for album in ALBUMS[:3]:  # three parts of one record each
        yield [album]


def test_new_batches_planned_during_a_backfill_are_written_before_its_next_part(tmp_path: Path) -> None:
    """Two new batches planned while a replayed part waits for the writer: both go before the next part, where a
    FIFO lock alternated (part, new, part, new) and each new batch waited for a part."""

    async def run() -> None:
        graph = OrderedGraph()
        w = ExtractionWorker(Ingestor(graph, RecordingVectors(), HashingEmbedder(), COLLECTION), albums_in_parts,
                             state_path=tmp_path / "state.json")  # fmt: skip
        w.on_contract(contract(artist_covered=True))
        async with w.turns.lock:  # the writer is busy; the backfill's first part queues for it
            backfill = asyncio.create_task(w.backfill(ReplayPlan(version=2, replay={"Album"})))
            await asyncio.sleep(0.2)
            first = await w.plan_records(messages(ARTISTS[:2]))
            second = await w.plan_records(messages(ARTISTS[2:]))
            assert w.turns.claims == 2

            async def in_order() -> None:  # as the write-behind queue writes them
                await w.write_planned(first)
                await w.write_planned(second)

            live = asyncio.create_task(in_order())
            await asyncio.sleep(0.1)
        await asyncio.wait_for(asyncio.gather(backfill, live), 10)
        assert graph.order == ["Album", "Artist", "Album"]  # one part (queued first), both new batches, the rest
        assert w.turns.claims == 0 and graph.count("Album") == 3 and graph.count("Artist") == len(ARTISTS)

    asyncio.run(run())


def test_a_planned_batch_dropped_unwritten_ends_its_claim(tmp_path: Path) -> None:
    async def run() -> None:
        w = ExtractionWorker(Ingestor(RecordingGraph(), RecordingVectors(), HashingEmbedder(), COLLECTION),
                             albums_in_parts, state_path=tmp_path / "state.json")  # fmt: skip
        w.on_contract(contract(artist_covered=True))
        planned = await w.plan_records(messages(ARTISTS))
        assert w.turns.claims == 1
        del planned  # a rebalance cut the batch before its write
        gc.collect()
        assert w.turns.claims == 0

    asyncio.run(run())


def test_a_backfill_waits_for_new_batches_at_most_its_patience() -> None:
    async def run() -> None:
        turns = WriteTurns(patience=0.2)
        turns.claim()  # a steady stream: a claim always held
        loop = asyncio.get_running_loop()
        t0 = loop.time()
        await asyncio.wait_for(turns.after_new(), 5)
        assert 0.15 <= loop.time() - t0 < 2
        release = turns.claim()
        release()
        release()  # idempotent
        assert turns.claims == 1

    asyncio.run(run())


def test_a_backfill_goes_on_at_once_when_the_last_claim_ends() -> None:
    async def run() -> None:
        turns = WriteTurns(patience=30)
        release = turns.claim()
        waiting = asyncio.create_task(turns.after_new())
        await asyncio.sleep(0.05)
        assert not waiting.done()
        release()
        await asyncio.wait_for(waiting, 1)

    asyncio.run(run())
