"""The LLM pass in the stream on the Faust worker (Kafka, Neo4j, Weaviate), against the local OpenAI-compatible test
server: a good answer becomes one add-only version on esc.schema.contracts, a 500 writes none; in both the graph
holds every record and /metrics counts the calls and their outcome. The embedded runtime's twin:
tests/unit/test_llm_stream.py (the same ContractWriter code)."""

from __future__ import annotations

import re
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.openai_server import Fail, FakeOpenAI
from tests.integration.test_contract_reports import contract
from tests.integration.worker import Worker, poll
from tests.unit.test_llm_stream import ROWS, good, write_drop

pytestmark = pytest.mark.integration


def metric(worker: Worker, name: str, **labels: str) -> float:
    with urllib.request.urlopen(f"http://127.0.0.1:{worker.web_port}/metrics", timeout=10) as resp:
        text = resp.read().decode("utf-8")
    total = 0.0
    for line in text.splitlines():
        m = re.match(rf"^{name}(?:\{{(.*)\}})? (\S+)$", line)
        if m and all(f'{k}="{v}"' in (m.group(1) or "") for k, v in labels.items()):
            total += float(m.group(2))
    return total


def people(neo4j_driver: Any, worker: Worker, label: str) -> int:
    rows = neo4j_driver.execute_query(f"MATCH (n:`{worker.label(label)}`) RETURN count(n) AS n")[0]
    return int(rows[0]["n"])


def run_worker(tmp_path: Path, server: FakeOpenAI) -> Worker:
    worker = Worker(tmp_path, data=write_drop(tmp_path / "drop"))
    worker.env.update(ESC_LLM_BASE_URL=server.base_url, ESC_LLM_RETRIES="0", ESC_LLM_TIMEOUT="10")
    return worker.start()


def cleanup(neo4j_driver: Any, worker: Worker) -> None:
    worker.stop()
    neo4j_driver.execute_query("MATCH (n) WHERE any(l IN labels(n) WHERE l STARTS WITH $ns) DETACH DELETE n",
                               ns=worker.label(""))  # fmt: skip


def test_a_good_answer_is_versioned_by_the_faust_worker(neo4j_driver: Any, tmp_path: Path) -> None:
    with FakeOpenAI([good, "{}"]) as server:
        worker = run_worker(tmp_path, server)
        try:
            c = poll(lambda: contract(worker), lambda c: any(e["name"].lower().startswith("team")
                     for e in c.get("entities", [])), 240, "the LLM's entity type in the contract", worker.log)  # fmt: skip
            person = next(e["name"] for e in c["entities"] if e["source"] == "people")
            poll(lambda: people(neo4j_driver, worker, person), lambda n: n == ROWS, 120, "every person", worker.log)
            assert metric(worker, "esc_llm_calls_total", outcome="ok") == 2  # discover and validate
            assert metric(worker, "esc_llm_versions_total") == 1
            assert metric(worker, "esc_llm_jobs_total", outcome="versioned") == 1
            assert "SAMPLE RECORDS" in server.requests[0]["messages"][-1]["content"]
        finally:
            cleanup(neo4j_driver, worker)


def test_a_failing_endpoint_writes_no_version_and_ingest_completes(neo4j_driver: Any, tmp_path: Path) -> None:
    with FakeOpenAI([Fail(500)]) as server:
        worker = run_worker(tmp_path, server)
        try:
            poll(lambda: metric(worker, "esc_llm_calls_total", outcome="http_error"), lambda n: n >= 1, 240,
                 "the failed call counted", worker.log)  # fmt: skip
            c = contract(worker)
            person = next(e["name"] for e in c["entities"] if e["source"] == "people")
            poll(lambda: people(neo4j_driver, worker, person), lambda n: n == ROWS, 120, "every person", worker.log)
            poll(lambda: metric(worker, "esc_llm_jobs_total", outcome="failed"), lambda n: n == 1, 60,
                 "the failed job counted", worker.log)  # fmt: skip
            assert metric(worker, "esc_llm_versions_total") == 0
            assert not any(e["name"].lower().startswith("team") for e in contract(worker).get("entities", []))
        finally:
            cleanup(neo4j_driver, worker)
