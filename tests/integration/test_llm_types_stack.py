"""The Faust worker (Kafka, Neo4j, Weaviate) gives an entity type the LLM pass adds over a written source its graph:
the local OpenAI-compatible test server holds its answer until every person is in Neo4j, so the type's nodes can
only come from the backfill replaying the records topic (agents/extraction.py, agents/type_nodes.py). The embedded
twins: tests/unit/test_llm_types_graph.py, tests/conformance/test_type_nodes_conformance.py."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from esc.contract.entities import entity_name
from tests.fakes.openai_server import FakeOpenAI
from tests.integration.test_contract_reports import contract
from tests.integration.test_llm_stream_stack import cleanup, people, run_worker
from tests.integration.worker import Worker, poll
from tests.unit.test_llm_stream import ROWS, good

pytestmark = pytest.mark.integration


def test_a_proposed_type_over_written_records_gets_nodes_edges_and_provenance(neo4j_driver: Any, tmp_path: Path) -> None:
    box: dict[str, Worker] = {}
    waited: dict[str, int] = {}

    def held(request: dict[str, Any]) -> dict[str, Any]:  # answers once every person is written
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            worker = box.get("worker")
            if worker is not None and people(neo4j_driver, worker, entity_name("people")) == ROWS:
                break
            time.sleep(0.5)
        waited["people"] = people(neo4j_driver, box["worker"], entity_name("people"))
        return good(request)

    with FakeOpenAI([held, "{}"]) as server:
        worker = box["worker"] = run_worker(tmp_path, server)
        try:
            c = poll(lambda: contract(worker), lambda c: any(e["name"].lower().startswith("team")
                     for e in c.get("entities", [])), 240, "the LLM's entity type in the contract", worker.log)  # fmt: skip
            assert waited["people"] == ROWS  # the records were written before the version existed
            person = next(e["name"] for e in c["entities"] if e["source"] == "people")
            team = next(e["name"] for e in c["entities"] if e["name"].lower().startswith("team"))
            rel = next(r["name"] for r in c["relationships"] if r["to_entity"] == team and r["from_entity"] == person)
            poll(lambda: people(neo4j_driver, worker, team), lambda n: n == 4, 120, "the team nodes", worker.log)
            query = (f"MATCH (p:`{worker.label(person)}`)-[:`{rel}`]->(t:`{worker.label(team)}`)-[:DERIVED_FROM]->(s) "
                     "RETURN count(DISTINCT p) AS people, count(DISTINCT t) AS teams, count(DISTINCT s) AS records")
            poll(lambda: neo4j_driver.execute_query(query)[0][0].data(),
                 lambda r: r == {"people": ROWS, "teams": 4, "records": ROWS}, 120,
                 "an edge from every person, DERIVED_FROM every record", worker.log)  # fmt: skip
            examples = poll(lambda: contract(worker).get("examples") or {}, lambda x: x.get("version") == c["version"],
                            120, "the version's example report", worker.log)  # fmt: skip
            mine = [r for r in examples["results"] if r["entity"] == team]
            assert mine and all(r["ok"] and r["rows"] > 0 for r in mine), mine
        finally:
            cleanup(neo4j_driver, worker)
