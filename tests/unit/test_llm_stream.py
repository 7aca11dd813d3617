"""The LLM two-pass discovery in the stream (agents/llm_stream.py) through the embedded runtime, against the local
OpenAI-compatible test server: a good answer becomes one add-only version that passes the closed-world check; every
bad answer (invalid JSON, unknown field ids, a timeout, 429, 500, a broken body) writes no version, leaves ingest as
it is without the LLM, and is counted in the metrics; ingestion does not wait for the endpoint."""

from __future__ import annotations

import asyncio
import json
import re
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from esc.agents.embedding import HashingEmbedder
from esc.agents.metrics import REGISTRY
from esc.contract.evolve import check_monotonic
from esc.contract.model import Contract
from esc.settings import load
from esc.streams.runtime.inprocess import open_runtime
from esc.streams.runtime.inprocess_bus import InProcessBus
from tests.fakes.openai_server import Fail, FakeOpenAI, Hang, Raw

INVENTED = "f_0000000000000bad"
ROWS = 24


def write_drop(folder: Path) -> Path:
    folder.mkdir(parents=True)
    teams = ["north", "south", "east", "west"]
    people = ["id,name,team,joined"] + [f"{i},Person {i:02d},{teams[i % 4]},2024-0{1 + i % 9}-1{i % 10}"
                                          for i in range(1, ROWS + 1)]  # fmt: skip
    (folder / "people.csv").write_text("\n".join(people) + "\n", encoding="utf-8")
    tasks = ["task_id,person_id,title,hours"] + [f"T{i},{1 + i % ROWS},Task number {i},{i % 7 + 1}"
                                                  for i in range(1, 2 * ROWS + 1)]  # fmt: skip
    (folder / "tasks.csv").write_text("\n".join(tasks) + "\n", encoding="utf-8")
    return folder


def catalog(request: dict[str, Any]) -> list[dict[str, Any]]:
    """The field catalog lines of a request's prompt."""
    text = request["messages"][-1]["content"]
    block = text[text.index("FIELD CATALOG"):].split("\n", 1)[1].split("\n\n", 1)[0]
    return [json.loads(line) for line in block.splitlines() if line.startswith("{")]


def good(request: dict[str, Any]) -> dict[str, Any]:
    """A categorical entity type anchored on a catalog field with few distinct values (what a model proposes)."""
    fields = [f for f in catalog(request) if f["type"] == "string" and 1 < (f["distinct"] or 0) <= 5]
    if not fields:
        return {"entities": []}
    f = fields[0]
    return {"entities": [{"name": f"{f['name']} group", "source": f["source"], "description": "a category",
                          "anchor": [f["id"]], "attributes": [{"field_id": f["id"], "name": f["name"]}],
                          "confidence": 0.8}]}  # fmt: skip


def only_invented(request: dict[str, Any]) -> dict[str, Any]:
    return {"entities": [{"name": "Ghost", "anchor": [INVENTED], "attributes": [{"field_id": INVENTED}]}]}


BAD: dict[str, tuple[list[Any], str]] = {  # replies, the outcome counted for pass 1
    "invalid json": (["the schema looks fine to me"], "invalid_answer"),
    "truncated json": (['{"entities": [{"name": "Team", "attributes": ['], "invalid_answer"),
    "unknown field ids": ([only_invented], "ok"),
    "timeout": ([Hang(3.0, "{}")], "timeout"),
    "500": ([Fail(500)], "http_error"),
    "429": ([Fail(429, '{"error": {"message": "rate limited"}}', (("Retry-After", "0"),))], "rate_limited"),
    "broken body": ([Raw("<html>bad gateway</html>")], "*"),
}


def sample(name: str, labels: dict[str, str] | None = None) -> float:
    return REGISTRY.get_sample_value(name, labels or {}) or 0.0


def calls(outcome: str) -> float:
    return sum(sample("esc_llm_calls_total", {"pass": p, "outcome": outcome}) for p in ("discover", "validate"))


def ingest(tmp_path: Path, drop: Path, name: str) -> tuple[Any, Any]:
    settings = load().replace(state_dir=tmp_path / name, app_id="llm", topic_prefix="esc")
    runtime, close = open_runtime(settings, drop, embedder=HashingEmbedder(), bus=InProcessBus("esc"))
    asyncio.run(runtime.ingest_once())
    return runtime, close


def facts(runtime: Any) -> tuple[int, dict[str, int]]:
    contract: Contract = runtime.contract
    graph = runtime.ingestor.graph
    return contract.version, {e.name: graph.count(e.name) for e in contract.entities}


@pytest.fixture(scope="module")
def baseline(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, tuple[int, dict[str, int]], Contract]:
    tmp = tmp_path_factory.mktemp("llm-off")
    drop = write_drop(tmp / "drop")
    runtime, close = ingest(tmp, drop, "off")
    try:
        assert runtime.writer.llm is None  # no ESC_LLM_BASE_URL: no LLM pass
        return drop, facts(runtime), runtime.contract
    finally:
        close()


def settle_llm(runtime: Any) -> None:
    assert runtime.writer.llm.wait(30.0)
    asyncio.run(runtime.tick())  # the contract agent's timer: finished jobs become a version


@pytest.fixture
def llm_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    monkeypatch.setenv("ESC_LLM_TIMEOUT", "1")
    monkeypatch.setenv("ESC_LLM_RETRIES", "0")
    return monkeypatch


def test_a_good_answer_becomes_one_add_only_version_inside_the_catalog(
    baseline: Any, tmp_path: Path, llm_env: pytest.MonkeyPatch
) -> None:
    drop, (version, counts), plain = baseline
    versions, ok = sample("esc_llm_versions_total"), calls("ok")
    with FakeOpenAI([good, "{}"]) as server:
        llm_env.setenv("ESC_LLM_BASE_URL", server.base_url)
        runtime, close = ingest(tmp_path, drop, "on")  # the answer may come before the ingest ends or after
        try:
            settle_llm(runtime)
            after: Contract = runtime.contract
            graph = runtime.ingestor.graph
            assert {name: graph.count(name) for name in counts} == counts  # ingest as without the LLM
            requests = list(server.requests)
        finally:
            close()
    assert after.version == version + 1  # the version of the run without the LLM, and one more
    assert check_monotonic(plain, after) == []  # add-only over what the run without the LLM wrote
    added = [e for e in after.entities if plain.entity(e.name) is None]
    assert len(added) == 1 and added[0].name.lower().startswith("team")
    ids = {f.id for s in after.sources.values() for f in s.fields}
    assert all(a.field_id in ids for a in added[0].attributes) and set(added[0].key) <= ids  # closed world
    diffs = [json.loads(line) for line in (tmp_path / "on" / "inprocess" / "diffs.jsonl").read_text().splitlines()]
    assert diffs[-1]["data"]["reason"].startswith("LLM discovery")
    assert sample("esc_llm_versions_total") == versions + 1 and calls("ok") == ok + 2
    # one job for the sources that settled together: the catalog of the new sources and their sample records
    prompt = requests[0]["messages"][-1]["content"]
    assert "SAMPLE RECORDS" in prompt and "Person 01" in prompt and re.search(r"NEW SOURCES are .*people", prompt)


@pytest.mark.parametrize("case", sorted(BAD))
def test_a_bad_answer_writes_no_version_and_ingest_is_unaffected(
    case: str, baseline: Any, tmp_path: Path, llm_env: pytest.MonkeyPatch
) -> None:
    drop, expected, _ = baseline
    replies, outcome = BAD[case]
    bad_before = sum(calls(o) for o in ("invalid_answer", "timeout", "http_error", "rate_limited", "error"))
    counted, dropped = calls(outcome), sample("esc_llm_field_refs_total", {"status": "dropped"})
    versions = sample("esc_llm_versions_total")
    with FakeOpenAI(replies) as server:
        llm_env.setenv("ESC_LLM_BASE_URL", server.base_url)
        runtime, close = ingest(tmp_path, drop, case.replace(" ", "-"))
        try:
            assert facts(runtime) == expected
            settle_llm(runtime)
            assert facts(runtime) == expected  # no version written, the graph as without the LLM
            history = runtime.writer.llm.history
        finally:
            close()
    assert sample("esc_llm_versions_total") == versions
    assert history and history[-1]["outcome"] in ("failed", "nothing")
    if outcome == "*":
        bad = sum(calls(o) for o in ("invalid_answer", "timeout", "http_error", "rate_limited", "error"))
        assert bad > bad_before
    else:
        assert calls(outcome) > counted
    if case == "unknown field ids":
        assert sample("esc_llm_field_refs_total", {"status": "dropped"}) >= dropped + 2  # anchor and attribute


def test_ingestion_does_not_wait_for_the_endpoint(baseline: Any, tmp_path: Path, llm_env: pytest.MonkeyPatch) -> None:
    """The endpoint holds its answer until the ingest has returned: the ingest completes while the job waits."""
    drop, expected, _ = baseline
    llm_env.setenv("ESC_LLM_TIMEOUT", "60")
    release = threading.Event()

    def held(request: dict[str, Any]) -> str:
        assert release.wait(60)
        return "{}"

    with FakeOpenAI([held]) as server:
        llm_env.setenv("ESC_LLM_BASE_URL", server.base_url)
        runtime, close = ingest(tmp_path, drop, "slow")
        try:
            assert runtime.writer.llm.pending() == 1  # still asking
            assert facts(runtime) == expected
            assert sample("esc_llm_pending_jobs") == 1
            release.set()
            settle_llm(runtime)
            assert facts(runtime) == expected and runtime.writer.llm.pending() == 0
        finally:
            close()


def test_the_stream_pass_is_off_without_an_endpoint_or_when_switched_off(llm_env: pytest.MonkeyPatch) -> None:
    from esc.agents.llm_stream import from_settings
    from esc.settings import Settings

    llm_env.delenv("ESC_LLM_BASE_URL", raising=False)
    assert from_settings(Settings()) is None
    llm_env.setenv("ESC_LLM_BASE_URL", "http://127.0.0.1:9/v1")
    llm_env.setenv("ESC_LLM_STREAM_QUEUE", "3")
    on = from_settings(Settings())
    assert on is not None and on._jobs.maxsize == 3 and on.config.timeout == 1.0
    llm_env.setenv("ESC_LLM_STREAM", "false")
    assert from_settings(Settings()) is None


def test_a_one_shot_embedded_ingest_writes_the_llm_version_before_it_returns(
    baseline: Any, tmp_path: Path, llm_env: pytest.MonkeyPatch
) -> None:
    """`esc ingest --embedded` returns once the ingest is done and the LLM pass's jobs ended (ESC_LLM_DEADLINE)."""
    from esc.streams.runtime.embedded import ingest_embedded

    drop, (version, _), _ = baseline

    def late(request: dict[str, Any]) -> dict[str, Any]:  # (answered after the ingest, as a real model would be)
        time.sleep(2.0)
        return good(request)

    llm_env.setenv("ESC_LLM_TIMEOUT", "30")
    with FakeOpenAI([late, "{}"]) as server:
        llm_env.setenv("ESC_LLM_BASE_URL", server.base_url)
        settings = load().replace(state_dir=tmp_path / "cli", app_id="llm", topic_prefix="esc")
        summary = ingest_embedded(settings, drop, embedder=HashingEmbedder())
    assert summary.contract_version == version + 1


def _contract() -> Contract:
    from esc.contract.evolve import evolve
    from tests.fakes.contracts import chinook_like

    return evolve(None, chinook_like())[0]


def test_the_call_budget_ends_a_job_and_is_counted() -> None:
    from esc.agents.llm import LLMConfig
    from esc.agents.llm_stream import Job, run_job

    c = _contract()
    budget = calls("budget")
    with FakeOpenAI([good, "{}"]) as server:
        config = LLMConfig(base_url=server.base_url, model="fake", timeout=5.0, max_retries=0, max_calls=1)
        result = run_job(config, config.client(), Job(sources=sorted(c.sources)[:2], contract=c, samples={}))
        assert len(server.requests) == 1
    assert [call["outcome"] for call in result.calls] == ["ok", "budget"]
    assert calls("budget") == budget + 1


def test_a_full_queue_drops_the_job_and_counts_it() -> None:
    from esc.agents.llm import LLMConfig
    from esc.agents.llm_stream import StreamDiscovery

    c = _contract()
    release = threading.Event()
    dropped = sample("esc_llm_jobs_total", {"outcome": "dropped"})

    def held(request: dict[str, Any]) -> str:
        assert release.wait(60)
        return "{}"

    with FakeOpenAI([held]) as server:
        llm = StreamDiscovery(LLMConfig(base_url=server.base_url, model="fake", timeout=60.0, max_retries=0),
                              queue_size=1)  # fmt: skip
        taken = [llm.submit(c, [source]) for source in sorted(c.sources)[:3]]  # one runs (held), one waits
        release.set()
        assert llm.wait(30)
        llm.close()
    assert taken[0] and not all(taken)  # at most one queued beside the one running: the third never fits
    assert sample("esc_llm_jobs_total", {"outcome": "dropped"}) == dropped + taken.count(False)
    assert [h["outcome"] for h in llm.history].count("dropped") == taken.count(False)
    assert llm.submit(c, sorted(c.sources)[:1]) is False  # a source is asked about once
