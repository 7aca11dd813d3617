"""The query LLM planner against an endpoint that answers badly: malformed JSON, invented types and fields, slow
answers, 429 and 5xx, a broken body, an endless tool loop. In ``llm`` mode the answer is an abstention with the
reason (never a wrong value), in ``auto`` mode the deterministic planner answers, the graph is never written, and the
agent keeps answering afterwards."""

from __future__ import annotations

from typing import Any

import pytest

from esc.agents.llm import LLMConfig
from esc.agents.query.agent import QueryAgent
from esc.agents.query.llm_planner import MAX_RETRIES, LLMPlanner
from esc.streams.events import QueryOptions
from tests.fakes.openai_server import Fail, FakeOpenAI, Hang, Raw

QUESTION = "What is the id of the Jazz genre?"
RETRY_NOW = (("Retry-After", "0"),)


def plan(label: str, prop: str = "Name") -> dict[str, Any]:
    return {"plan": {"kind": "lookup", "start": {"var": "n0", "label": label, "filters": [{"prop": prop, "value": "Jazz"}]},
                     "returns": [{"var": "n0", "prop": "GenreId", "alias": "id"}], "cite": ["n0"]},
            "answer": ["id"], "scalar": True}  # fmt: skip


BAD = {
    "not json": ["Sure! The Jazz genre is number 2."],
    "truncated json": ['{"plan": {"kind": "lookup", "start": {"var": "n0"'],
    "invented type": [plan("MusicStyle")],
    "invented field": [plan("Genre", "GenreLabel")],
    "invented extension ids": [{"extend": {"entities": [{"name": "Style", "source": "Genre", "attributes": ["f_00000000dead"]}]}}],
    "slow": [Hang(3.0, "{}")],
    "429": [Fail(429, '{"error": {"message": "rate limited"}}', RETRY_NOW)],
    "500": [Fail(500)],
    "broken body": [Raw("not a completion at all")],
    "endless tools": [{"tool": "search", "text": "Jazz"}],
}  # fmt: skip


def planner(server: FakeOpenAI, **kw: Any) -> LLMPlanner:
    cfg = {"timeout": 1.0, "max_retries": 0, **kw}
    return LLMPlanner(LLMConfig(base_url=server.base_url, model="fake", **cfg))


@pytest.mark.parametrize("case", sorted(BAD))
def test_a_bad_endpoint_never_gives_a_wrong_answer(case: str, chinook) -> None:  # type: ignore[no-untyped-def]
    jazz = next(g for g in chinook.rows("Genre") if g["Name"] == "Jazz")
    before = (len(chinook.graph.nodes), sum(map(len, chinook.graph.out.values())))
    with FakeOpenAI(BAD[case]) as server:
        agent = QueryAgent(chinook.contract, chinook.graph, llm=planner(server, max_calls=8))
        llm_only = agent.ask(QUESTION, QueryOptions(mode="llm"))
        auto = agent.ask(QUESTION, QueryOptions(mode="auto"))
        requests = len(server.requests)
    assert llm_only.route == "abstain" and llm_only.answer is None and llm_only.reason, case
    assert auto.answer == jazz["GenreId"] and auto.route == "lookup" and auto.citations  # the deterministic answer
    assert (len(chinook.graph.nodes), sum(map(len, chinook.graph.out.values()))) == before  # nothing written
    assert requests <= 2 * 8  # bounded: at most the budget per question
    if case in ("not json", "truncated json", "invented type", "invented field"):
        assert requests == 2 * (MAX_RETRIES + 1)  # each one a failed attempt with a summary, then it gives up
    if case == "endless tools":
        assert "budget" in (llm_only.reason or "")
    if case == "slow":  # the request timed out (1 s) instead of waiting for the 3 s answer
        assert "Timeout" in (llm_only.reason or "")


def test_429_and_503_are_retried_and_the_plan_answers(chinook) -> None:  # type: ignore[no-untyped-def]
    jazz = next(g for g in chinook.rows("Genre") if g["Name"] == "Jazz")
    replies = [Fail(429, '{"error": {"message": "slow down"}}', RETRY_NOW), Fail(503), plan("Genre"), {"text": "ok"}]
    with FakeOpenAI(replies) as server:  # type: ignore[arg-type]
        ans = QueryAgent(chinook.contract, chinook.graph, llm=planner(server, max_retries=2)).ask(
            QUESTION, QueryOptions(mode="llm"))  # fmt: skip
        assert len(server.requests) == 4
    assert ans.answer == jazz["GenreId"] and ans.route == "lookup" and ans.text == "ok"


def test_the_deadline_cuts_the_timeout_of_a_question(chinook) -> None:  # type: ignore[no-untyped-def]
    """A 30 s timeout would wait for the 5 s answer; the 1 s deadline of the question cuts the request first."""
    with FakeOpenAI([Hang(5.0, "{}")]) as server:
        agent = QueryAgent(chinook.contract, chinook.graph, llm=planner(server, timeout=30.0, deadline=1.0))
        ans = agent.ask(QUESTION, QueryOptions(mode="llm"))
        assert len(server.requests) == 1
    assert ans.route == "abstain" and "Timeout" in (ans.reason or "")
