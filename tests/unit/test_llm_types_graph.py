"""An entity type the LLM pass adds over a source that already has one gets its graph (agents/type_nodes.py): the
records written before the version are replayed by the backfill, the type's nodes carry DERIVED_FROM to every
record they come from, the primary type reaches them by a foreign key (contract/type_links.py), and the version's
example queries of the type return rows. The endpoint is the local OpenAI-compatible test server; it holds its
answer until the ingest has written every record, so only the backfill can write the new type's nodes."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

import pytest

from esc.agents.embedding import HashingEmbedder
from esc.agents.examples_runner import run_examples
from esc.agents.extractors import plan
from esc.contract.model import Contract
from esc.settings import load
from esc.streams.events import RecordEnvelope
from esc.streams.runtime.inprocess import open_runtime
from esc.streams.runtime.inprocess_bus import InProcessBus
from tests.fakes.openai_server import FakeOpenAI
from tests.unit.test_llm_stream import ROWS, good, write_drop


def _rows(graph: Any, sql: str) -> list[dict[str, Any]]:
    return graph.read(sql)


def test_a_proposed_type_over_written_records_gets_nodes_edges_and_passing_examples(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    drop = write_drop(tmp_path / "drop")
    monkeypatch.setenv("ESC_LLM_TIMEOUT", "60")
    monkeypatch.setenv("ESC_LLM_RETRIES", "0")
    release = threading.Event()

    def held(request: dict[str, Any]) -> dict[str, Any]:
        assert release.wait(60)
        return good(request)

    with FakeOpenAI([held, "{}"]) as server:
        monkeypatch.setenv("ESC_LLM_BASE_URL", server.base_url)
        settings = load().replace(state_dir=tmp_path / "types", app_id="llm", topic_prefix="esc")
        runtime, close = open_runtime(settings, drop, embedder=HashingEmbedder(), bus=InProcessBus("esc"))
        try:
            seen: dict[str, Any] = {}

            async def run() -> None:  # one event loop for the ingest and the backfill after the version
                await runtime.ingest_once()
                seen["before"] = runtime.contract
                people = runtime.contract.entity_for_source("people")
                seen["people"] = people, runtime.ingestor.graph.count(people.name)
                release.set()  # only now does the endpoint answer
                assert await asyncio.to_thread(runtime.writer.llm.wait, 30.0)
                await runtime.tick()  # the finished job becomes a version
                await runtime.drain()  # ... whose backfill replays the written records
                await runtime.stop()

            asyncio.run(run())
            before: Contract = seen["before"]
            people, written = seen["people"]
            assert written == ROWS  # every record written before the LLM type existed
            graph = runtime.ingestor.graph
            after: Contract = runtime.contract
            added = [e for e in after.entities if before.entity(e.name) is None]
            assert after.version == before.version + 1 and len(added) == 1
            team = added[0]
            assert team.source == "people" and team.key
            # one node per distinct team, each derived from the records holding it
            assert graph.count(team.name) == 4
            links = _rows(graph, "SELECT e.props->>'team' AS team, count(*) AS n FROM entities e JOIN derived_from d "
                                 f"ON d.eid = e.eid WHERE e.label = '{team.name}' GROUP BY 1 ORDER BY 1")  # fmt: skip
            assert [r["n"] for r in links] == [ROWS // 4] * 4 and sum(r["n"] for r in links) == ROWS
            # the primary type reaches them: one edge per person
            (rel,) = [r for r in after.relationships if r.to_entity == team.name]
            assert rel.from_entity == people.name and rel.from_fields == team.key
            edges = _rows(graph, f"SELECT count(*) AS n FROM edges WHERE type = '{rel.name}'")
            assert edges == [{"n": ROWS}]
            report, _ = run_examples(after, graph)
            mine = [r for r in report.results if team.name in (r.entity, r.name.split(" -")[0])]
            assert {r.kind for r in mine} >= {"count", "lookup"} and all(r.ok and r.rows > 0 for r in mine)
            assert any(r.kind == "hop" and rel.name in r.name and r.ok for r in report.results)
            assert report.failed == 0
        finally:
            close()


def test_a_record_without_a_value_for_the_key_writes_the_primary_node_only() -> None:
    from esc.contract.evolve import evolve
    from esc.contract.proposals import SchemaProposal, apply_proposal
    from esc.contract.type_links import link_added_types
    from tests.fakes.contracts import chinook_like

    c = evolve(None, chinook_like())[0]
    source = "Artist"
    field = next(f for f in c.sources[source].fields if f.name == "Name")
    proposal = SchemaProposal.model_validate({"entities": [{"name": "Bucket", "source": source, "anchor": [field.id],
                                                            "attributes": [field.id]}]})  # fmt: skip
    extended, report = apply_proposal(c, proposal)
    assert report.added_entities == ["Bucket"]
    linked = link_added_types(c, extended)
    assert any(r.to_entity == "Bucket" for r in linked.relationships)
    assert link_added_types(c, link_added_types(c, extended)).relationships == linked.relationships  # idempotent
    envs = [RecordEnvelope(source=source, record_id="1", payload={"ArtistId": 1, field.name: "a"}),
            RecordEnvelope(source=source, record_id="2", payload={"ArtistId": 2, field.name: None})]  # fmt: skip
    out = plan(envs, linked)
    labels = [e.label for e in out.entities]
    assert sorted(labels) == ["Artist", "Artist", "Bucket"] and not out.dead  # record 2: its primary node only
    (edge,) = [e for e in out.edges if e.to_label == "Bucket"]
    assert edge.from_key == {"ArtistId": 1} and edge.to_key == {"Name": "a"}


def test_a_further_type_over_an_ingested_source_replays_it_and_nothing_else() -> None:
    from esc.agents.backfill import plan_replay
    from esc.contract.evolve import diff_items, evolve
    from esc.contract.model import ContractDiff
    from esc.contract.proposals import SchemaProposal, apply_proposal
    from tests.fakes.contracts import chinook_like

    c = evolve(None, chinook_like())[0]
    name = next(f for f in c.sources["Artist"].fields if f.name == "Name")
    proposal = SchemaProposal.model_validate({"entities": [{"name": "Bucket", "source": "Artist", "attributes": [name.id]}]})
    extended, _ = apply_proposal(c, proposal)  # no key: no link either, so only the entity item can ask for it
    diff = ContractDiff(from_version=c.version, to_version=c.version + 1, added=diff_items(c, extended))
    assert [i.kind for i in diff.added] == ["entity"]
    assert plan_replay(extended, diff, {"Artist", "Album"}).replay == {"Artist"}
    assert plan_replay(extended, diff, {"Album"}).replay == set()  # a source not written yet: nothing to replay
