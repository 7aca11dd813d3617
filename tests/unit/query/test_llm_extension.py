"""Query-scoped schema extension in LLM mode (fake OpenAI server): a proposed type is validated closed-world
(FieldValidity 1.0), used for one question as a view over existing nodes, and the contract is unchanged after."""

from __future__ import annotations

import json
from typing import Any

from esc.agents.llm import LLMConfig
from esc.agents.query.agent import QueryAgent
from esc.agents.query.extension import scoped_extension
from esc.agents.query.llm_planner import LLMPlanner
from esc.agents.query.plan import QueryPlan
from esc.contract import serde
from esc.streams.events import QueryOptions
from tests.fakes.openai_server import FakeOpenAI


def _field_id(contract: Any, source: str, name: str) -> str:
    spec = contract.sources[source].field(name)
    assert spec is not None
    return str(spec.id)


def _extend(contract: Any, fields: list[str]) -> dict[str, Any]:
    return {"extend": {"entities": [{"name": "Musician", "source": "Artist", "attributes": fields}]}}


def _musician_plan(name: str) -> dict[str, Any]:
    return {
        "plan": {
            "kind": "traverse",
            "start": {
                "var": "n0",
                "label": "Musician",
                "filters": [{"prop": "Name", "op": "eq", "value": name}],
            },
            "hops": [{"rel_type": "ARTIST", "direction": "in", "target": {"var": "n1", "label": "Album"}}],
            "returns": [{"var": "n1", "prop": "Title", "alias": "title"}],
            "cite": ["n0", "n1"],
        },
        "answer": ["title"],
        "scalar": False,
    }


def _ask(chinook: Any, replies: list[Any], question: str) -> tuple[Any, list[str], QueryAgent]:
    with FakeOpenAI(replies) as fake:
        planner = LLMPlanner(LLMConfig(base_url=fake.base_url, model="fake-model", timeout=10))
        agent = QueryAgent(chinook.contract, chinook.graph, llm=planner)
        ans = agent.ask(question, QueryOptions(mode="llm"))
        sent = [json.dumps(r["messages"]) for r in fake.requests]
    return ans, sent, agent


def test_a_proposed_type_answers_one_question_and_the_contract_is_reverted(chinook) -> None:  # type: ignore[no-untyped-def]
    c = chinook.contract
    hash_before, text_before = c.content_hash, serde.dump_json(c)
    artist = next(a for a in chinook.rows("Artist") if a["Name"] == "AC/DC")
    expected = sorted(a["Title"] for a in chinook.rows("Album") if a.get("ArtistId") == artist["ArtistId"])
    fields = [_field_id(c, "Artist", "Name"), _field_id(c, "Artist", "ArtistId")]
    replies = [_extend(c, fields), _musician_plan("AC/DC"), {"text": "AC/DC recorded these albums."}]
    ans, sent, agent = _ask(chinook, replies, "Which albums did the musician AC/DC record?")
    assert sorted(ans.answer) == expected and ans.citations
    assert ans.extension and ans.extension["added_entities"] == ["Musician"]
    assert ans.extension["field_validity"] == 1.0 and ans.extension["aliases"] == {"Musician": "Artist"}
    assert "CATALOG:" in sent[0] and "extended" in sent[1]
    # reverted: the agent's contract, its grounding and the shared contract object are what they were
    g = agent.grounding()
    assert g.contract.content_hash == hash_before and "Musician" not in {e.name for e in g.contract.entities}
    assert serde.dump_json(c) == text_before and c.content_hash == hash_before
    follow_up = agent.ask("How many albums does AC/DC have?")
    assert follow_up.answer == len(expected)


def test_a_hallucinated_field_is_rejected_with_its_field_validity(chinook) -> None:  # type: ignore[no-untyped-def]
    c = chinook.contract
    bad = _extend(c, [_field_id(c, "Artist", "Name"), "f_doesnotexist0000"])
    replies = [bad, _musician_plan("AC/DC"), _musician_plan("AC/DC"), _musician_plan("AC/DC")]
    ans, sent, _ = _ask(chinook, replies, "Which albums did the musician AC/DC record?")
    assert ans.route == "abstain"
    assert "FieldValidity must be 1.0" in sent[1] and "0.5" in sent[1]
    assert "unknown entity type" in sent[2]  # the type was never added, so plans over it stay invalid
    assert "Musician" not in {e.name for e in c.entities}


def test_views_only_over_attributes_the_graph_holds(chinook) -> None:  # type: ignore[no-untyped-def]
    c = chinook.contract
    ok = scoped_extension(c, _extend(c, [_field_id(c, "Artist", "Name")])["extend"])
    assert not isinstance(ok, dict)
    plan = ok.rewrite(QueryPlan.model_validate(_musician_plan("AC/DC")["plan"]))
    assert plan.start.label == "Artist" and ok.contract.content_hash == c.content_hash
    assert ok.contract.version == c.version and c is not ok.contract
    no_source = scoped_extension(c, {"entities": [{"name": "Thing", "attributes": ["f_nope"]}]})
    assert isinstance(no_source, dict) and "error" in no_source
