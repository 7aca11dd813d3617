from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from esc.agents.embedding import Embedder
from esc.agents.llm import LLMConfig
from esc.agents.query.agent import QueryAgent
from esc.agents.query.llm_planner import MAX_RETRIES, LLMPlanner
from esc.agents.query.vector import LOW_SIMILARITY, answer_from_hits
from esc.agents.stores.base import VectorStore
from esc.agents.types import TextObject
from esc.streams.events import QueryOptions

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from fakes.openai_server import FakeOpenAI


class _Vectors(VectorStore):
    def __init__(self, hits: list[dict[str, Any]]) -> None:
        self.hits = hits

    def ensure_collection(self, name: str) -> None: ...

    def upsert(self, collection: str, objects: Sequence[TextObject]) -> int:
        return 0

    def near_vector(self, collection: str, vector: Sequence[float], limit: int = 5) -> list[dict[str, Any]]:
        return self.hits[:limit]

    def count(self, collection: str) -> int:
        return len(self.hits)

    def close(self) -> None: ...


class _Embedder(Embedder):
    name = "test"

    @property
    def dim(self) -> int:
        return 4

    def _embed_batch(self, texts: list[str]) -> np.ndarray:
        return np.ones((len(texts), 4), dtype=np.float32) / 2


def _hit(sim: float) -> dict[str, Any]:
    return {"text": "Revenue grew 5% on new contracts.", "source": "docs", "record_id": "a.txt:1", "similarity": sim}


def test_weak_or_off_topic_vector_evidence_abstains() -> None:
    weak = answer_from_hits([_hit(LOW_SIMILARITY - 0.05)], 3)
    strong = answer_from_hits([_hit(0.8)], 3, words=["revenue"])
    assert weak.route == "abstain" and "similarity" in (weak.reason or "")
    assert strong.route == "vector" and strong.citations[0].record_id == "a.txt:1"
    assert strong.confidence <= 0.75  # a passage is evidence to read, never a confident extracted answer
    off = answer_from_hits([_hit(0.8)], 3, words=["weather"])
    assert off.route == "abstain" and "weather" in (off.reason or "")
    unknown = answer_from_hits([_hit(0.8)], 3, names=["Zorro Nobody"], words=["revenue"])
    assert unknown.route == "abstain" and "Zorro Nobody" in (unknown.reason or "")
    assert answer_from_hits([], 3).route == "abstain"


def test_descriptive_question_falls_back_to_vectors(chinook) -> None:  # type: ignore[no-untyped-def]
    agent = QueryAgent(chinook.contract, chinook.graph, _Vectors([_hit(0.6)]), _Embedder(), "Esc")
    ans = agent.ask("Why did revenue grow according to the annual report?")
    assert ans.route == "vector" and ans.citations and not ans.low_confidence


def _plan_reply(label: str) -> dict[str, Any]:
    return {
        "plan": {
            "kind": "lookup",
            "start": {"var": "n0", "label": label, "filters": [{"prop": "Name", "value": "Jazz"}]},
            "returns": [{"var": "n0", "prop": "GenreId", "alias": "id"}],
            "cite": ["n0"],
        },
        "answer": ["id"],
        "scalar": True,
    }


def test_llm_plan_is_validated_and_retried_with_a_failure_summary(chinook) -> None:  # type: ignore[no-untyped-def]
    jazz = next(g for g in chinook.rows("Genre") if g["Name"] == "Jazz")
    replies = [
        {"tool": "search", "text": "Jazz"},
        _plan_reply("Style"),  # not in the contract -> failure summary, retry
        _plan_reply("Genre"),
        {"text": "The Jazz genre has id X."},
    ]
    with FakeOpenAI(replies) as fake:  # type: ignore[arg-type]
        planner = LLMPlanner(LLMConfig(base_url=fake.base_url, model="fake-model", timeout=10))
        agent = QueryAgent(chinook.contract, chinook.graph, llm=planner)
        ans = agent.ask("What is the id of the Jazz genre?", QueryOptions(mode="llm"))
        sent = [json.dumps(r["messages"]) for r in fake.requests]
    assert ans.answer == jazz["GenreId"] and ans.citations and ans.text
    assert "tool_result" in sent[1] and "failure_summary" in sent[2] and "unknown entity type" in sent[2]
    assert "SCHEMA:" in sent[0]


def test_llm_retries_are_bounded_then_deterministic_mode_is_not_used_in_llm_mode(chinook) -> None:  # type: ignore[no-untyped-def]
    with FakeOpenAI([_plan_reply("Style")]) as fake:
        planner = LLMPlanner(LLMConfig(base_url=fake.base_url, model="fake-model", timeout=10))
        agent = QueryAgent(chinook.contract, chinook.graph, llm=planner)
        before = len(chinook.graph.nodes)
        ans = agent.ask("What is the id of the Jazz genre?", QueryOptions(mode="llm"))
        assert len(fake.requests) == MAX_RETRIES + 1
    assert ans.route == "abstain" and "failed" in (ans.reason or "")
    assert len(chinook.graph.nodes) == before
