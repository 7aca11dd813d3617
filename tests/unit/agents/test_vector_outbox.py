from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from esc.agents import metrics
from esc.agents.embedding import HashingEmbedder
from esc.agents.ingest import Ingestor
from esc.agents.types import SourceRecordRef, TextObject
from esc.agents.vector_outbox import ROW_TEXTS, VectorOutbox, VectorWriter
from esc.contract.entities import with_entities
from esc.streams.events import RecordEnvelope
from tests.fakes.contracts import chinook_like
from tests.unit.agents.fakes import RecordingGraph, RecordingVectors

COLLECTION = "EscChunks"
NOTE = "Called about a refund. Happy with the outcome in the end, said thanks."


def text(source: str, rid: str, body: str = "some prose", chunk: int = 0) -> TextObject:
    return TextObject(
        object_id=f"{source}/{rid}/{chunk}",
        text=body,
        provenance=SourceRecordRef(source=source, record_id=rid),
        chunk_index=chunk,
    )


def customer(rid: str, cid: int, notes: str | None = NOTE, file: str = "a.csv") -> RecordEnvelope:
    payload: dict[str, Any] = {"CustomerId": cid}
    if notes is not None:
        payload["Notes"] = notes
    return RecordEnvelope(source="Customer", record_id=rid, payload=payload, location={"file": file})


def outboxed(tmp_path: Path) -> tuple[Ingestor, RecordingGraph, RecordingVectors, VectorOutbox, VectorWriter]:
    g, v = RecordingGraph(), RecordingVectors()
    box = VectorOutbox(tmp_path / "outbox.sqlite")
    ing = Ingestor(g, v, HashingEmbedder(), COLLECTION, embed_batch=16, outbox=box)
    return ing, g, v, box, VectorWriter(box, v, HashingEmbedder(), COLLECTION, embed_batch=16)


def drain(writer: VectorWriter) -> int:
    steps = 0
    while writer.drain_once():
        steps += 1
    return steps


def test_graph_is_written_at_once_and_vectors_follow_when_drained(tmp_path: Path) -> None:
    ing, g, v, box, writer = outboxed(tmp_path)
    r = ing.handle([customer("r1", 1), customer("r2", 2, notes=None)], with_entities(chinook_like()))
    assert g.count("Customer") == 2 and r.texts == 1
    assert v.count(COLLECTION) == 0 and box.pending() == 1  # queued, not embedded yet
    assert metrics.REGISTRY.get_sample_value("esc_vector_outbox_pending") == 1
    assert drain(writer) == 1
    assert v.count(COLLECTION) == 1 and box.pending() == 0 and box.empty()
    (obj,) = v.objects[COLLECTION].values()
    assert obj.provenance.record_id == "r1" and obj.vector is not None and len(obj.vector) > 0


def test_queue_survives_a_restart_and_keeps_its_order(tmp_path: Path) -> None:
    box = VectorOutbox(tmp_path / "o.sqlite")
    box.put_texts([text("S", "1")])
    box.put_delete("S", ["1"])
    box.put_texts([text("S", "2")])
    box.close()  # the process dies here: nothing was applied

    again = VectorOutbox(tmp_path / "o.sqlite")
    assert again.pending() == 2
    v = RecordingVectors()
    drain(VectorWriter(again, v, HashingEmbedder(), COLLECTION))
    # 1 was written, then deleted (not resurrected); 2 stays.
    assert sorted(o.provenance.record_id for o in v.objects[COLLECTION].values()) == ["2"]


def test_retraction_queued_after_texts_wins_over_them(tmp_path: Path) -> None:
    ing, g, v, _box, writer = outboxed(tmp_path)
    c = with_entities(chinook_like())
    ing.handle([customer("a.csv:row=1", 1)], c)
    ing.handle([RecordEnvelope(source="Customer", payload={}, deleted=True, location={"file": "a.csv"})], c)
    assert g.count("Customer") == 0
    drain(writer)
    assert v.count(COLLECTION) == 0


class FlakyVectors(RecordingVectors):
    def __init__(self, failures: int) -> None:
        super().__init__()
        self.failures = failures

    def upsert(self, collection: str, objects: Sequence[TextObject]) -> int:
        if self.failures:
            self.failures -= 1
            raise ConnectionError("weaviate is down")
        return super().upsert(collection, objects)


def test_a_failed_write_leaves_the_operations_queued(tmp_path: Path) -> None:
    box = VectorOutbox(tmp_path / "o.sqlite")
    box.put_texts([text("S", str(i)) for i in range(3)])
    v = FlakyVectors(failures=1)
    writer = VectorWriter(box, v, HashingEmbedder(), COLLECTION)
    with pytest.raises(ConnectionError):
        writer.drain_once()
    assert box.pending() == 3 and v.count(COLLECTION) == 0
    drain(writer)
    assert box.pending() == 0 and v.count(COLLECTION) == 3


def test_shorter_text_drops_the_old_trailing_chunks(tmp_path: Path) -> None:
    box = VectorOutbox(tmp_path / "o.sqlite")
    v = RecordingVectors()
    writer = VectorWriter(box, v, HashingEmbedder(), COLLECTION)
    box.put_texts([text("S", "1", "long part one", 0), text("S", "1", "long part two", 1)])
    drain(writer)
    assert v.count(COLLECTION) == 2
    box.put_texts([text("S", "1", "short now", 0)])
    drain(writer)
    assert [o.text for o in v.objects[COLLECTION].values()] == ["short now"]


def test_big_puts_are_split_into_rows_and_drained_in_steps(tmp_path: Path) -> None:
    box = VectorOutbox(tmp_path / "o.sqlite")
    n = ROW_TEXTS * 5 + 3
    box.put_texts([text("S", str(i)) for i in range(n)])
    assert box.pending() == n
    v = RecordingVectors()
    writer = VectorWriter(box, v, HashingEmbedder(), COLLECTION)
    assert writer.drain_once(max_texts=ROW_TEXTS * 2) == 2  # two rows per step
    assert box.pending() == n - 2 * ROW_TEXTS
    drain(writer)
    assert v.count(COLLECTION) == n and writer.written == n


def test_while_the_graph_is_busy_the_lane_takes_one_row_a_step_and_pauses(tmp_path: Path) -> None:
    """The lane runs at the process's priority; what keeps the graph's share is short steps and pauses while it is
    busy, and larger steps (no pause) when it is idle."""
    import asyncio

    from esc.agents.vector_outbox import DRAIN_TEXTS, run_writer

    box = VectorOutbox(tmp_path / "o.sqlite")
    box.put_texts([text("S", str(i)) for i in range(ROW_TEXTS * 8)])
    writer = VectorWriter(box, RecordingVectors(), HashingEmbedder(), COLLECTION)
    steps: list[tuple[bool, int]] = []
    state = {"busy": True}
    drain = writer.drain_once

    def recorded(max_texts: int) -> int:
        before = box.pending()
        applied = drain(max_texts)
        steps.append((state["busy"], before - box.pending()))
        return applied

    writer.drain_once = recorded  # type: ignore[method-assign]

    async def scenario() -> None:
        task = asyncio.create_task(run_writer(writer, lambda: state["busy"]))
        while len(steps) < 2:
            await asyncio.sleep(0.01)
        state["busy"] = False
        while box.pending():
            await asyncio.sleep(0.01)
        task.cancel()

    asyncio.run(scenario())
    busy = [n for b, n in steps if b]
    idle = [n for b, n in steps if not b]
    assert busy and all(n == ROW_TEXTS for n in busy)
    assert idle and max(idle) == DRAIN_TEXTS > ROW_TEXTS
    assert DRAIN_TEXTS % ROW_TEXTS == 0
