"""The worker's intake checks pushed records against their source's record schema (agents/record_check.py): one
that does not fit goes to the dead letters with the reason and is not written; records read from files, records of
sources the contract does not know yet and fields it does not know yet pass."""

from __future__ import annotations

import asyncio
from pathlib import Path

from esc.agents import metrics
from esc.agents.record_check import REASON, split, violation
from esc.contract.entities import with_entities
from esc.streams.events import RecordEnvelope
from tests.fakes.contracts import chinook_like
from tests.unit.agents.fakes import RecordingGraph
from tests.unit.agents.test_pipeline_worker import Log, messages, new_worker


def test_a_pushed_record_that_would_widen_a_type_is_a_dead_letter_with_the_reason(tmp_path: Path) -> None:
    contract = with_entities(chinook_like())
    contract.version, contract.content_hash = 2, "v2"
    good = RecordEnvelope(source="Artist", record_id="1", payload={"ArtistId": 1, "Name": "AC/DC", "Genre": "rock"})
    bad = RecordEnvelope(source="Artist", record_id="2", payload={"ArtistId": "two", "Name": "Accept"})
    from_file = RecordEnvelope(source="Artist", record_id="3", payload={"ArtistId": "three"}, format="csv")
    unknown = RecordEnvelope(source="Nowhere", record_id="4", payload={"x": {"deep": 1}})

    async def run() -> None:
        graph = RecordingGraph()
        worker = new_worker(graph, Log(), tmp_path / "state.json")
        worker.on_contract(contract)
        before = metrics.REGISTRY.get_sample_value("esc_dlq_total", {"stage": "contract", "reason": REASON}) or 0
        result = await worker.on_records(messages([good, bad]))
        assert [d.location for d in result.dead] == ["2"] and result.dead[0].stage == "contract"
        assert result.dead[0].reason == (
            f"{REASON}: Artist v2: field 'ArtistId' is string 'two', the contract's type is int"
        )
        assert '"ArtistId":"two"' in result.dead[0].original  # the whole envelope, for a replay by hand
        assert graph.count("Artist") == 1
        after = metrics.REGISTRY.get_sample_value("esc_dlq_total", {"stage": "contract", "reason": REASON})
        assert after == before + 1

    asyncio.run(run())
    ok, dead = split([good, bad, from_file, unknown], contract)
    assert ok == [good, from_file, unknown] and len(dead) == 1
    assert split([bad], None) == ([bad], [])
    assert violation(contract, "Artist", {"ArtistId": None, "Name": 7}) is None  # a null, and a number as a name
