"""QueryService over the in-memory chinook graph: request -> envelope with the same id, contract swaps by version,
lazy and retried store creation, the value dictionary refreshed after its TTL, metrics, malformed requests."""

from __future__ import annotations

import json
from typing import Any

from esc.agents import metrics
from esc.agents.query.memstore import MemoryGraphStore
from esc.agents.query.service import QueryService, parse_request
from esc.agents.stores.base import GraphStore
from esc.agents.types import EntityWrite, SourceRecordRef
from esc.streams.events import AnswerEnvelope, QueryOptions, QueryRequest


def _sample(name: str, **labels: str) -> float:
    value = metrics.REGISTRY.get_sample_value(name, labels or None)
    return value or 0.0


def _service(graph: GraphStore, ttl: float = 1e9) -> QueryService:
    return QueryService(lambda: graph, values_ttl_s=ttl)


def test_no_contract_yet_abstains_with_the_reason(chinook) -> None:  # type: ignore[no-untyped-def]
    env = _service(chinook.graph).answer(QueryRequest(id="q0", question="How many tracks are there?"))
    assert env.id == "q0" and env.route == "abstain" and "no contract" in (env.reason or "")


def test_request_gets_an_answer_with_the_same_id_and_metrics(chinook) -> None:  # type: ignore[no-untyped-def]
    service = _service(chinook.graph)
    service.on_contract(chinook.contract)
    genre = next(g for g in chinook.rows("Genre") if g["Name"] == "Jazz")
    expected = sum(1 for t in chinook.rows("Track") if t.get("GenreId") == genre["GenreId"])
    before = _sample("esc_query_latency_seconds_count", route="aggregate")
    conf_before = _sample("esc_query_confidence_count")
    env = service.answer(
        QueryRequest(id="req-1", question="How many tracks are in the Jazz genre?", reply_to="my.replies")
    )
    assert isinstance(env, AnswerEnvelope)
    assert (env.id, env.reply_to, env.route, env.answer) == ("req-1", "my.replies", "aggregate", expected)
    assert env.contract_version == chinook.contract.version and env.citations
    assert _sample("esc_query_latency_seconds_count", route="aggregate") == before + 1
    assert _sample("esc_query_confidence_count") == conf_before + 1
    shape = json.loads(env.model_dump_json())
    assert {"answer", "citations", "route", "confidence", "contract_version", "id"} <= shape.keys()
    assert set(shape["citations"][0]) == {"source", "record_id", "location"}


def test_raw_requests_and_malformed_ones(chinook) -> None:  # type: ignore[no-untyped-def]
    service = _service(chinook.graph)
    service.on_contract(chinook.contract)
    cust = chinook.rows("Customer")[3]
    raw = json.dumps({"id": "b1", "question": f"email of customer {cust['FirstName']} {cust['LastName']}"})
    env = service.answer(raw.encode())
    assert env.id == "b1" and env.answer == cust["Email"]
    abst = _sample("esc_query_abstentions_total")
    bad = service.answer(b'{"id": "b2", "question": ""}')
    assert bad.id == "b2" and bad.route == "abstain" and "bad request" in (bad.reason or "")
    assert service.answer(b"\xff\xfe not json").route == "abstain"
    assert service.answer({"question": "x", "unexpected": 1}).route == "abstain"
    assert _sample("esc_query_abstentions_total") == abst + 3
    explained = service.answer(
        {"id": "b3", "question": "How many tracks are in the Jazz genre?", "options": {"explain": True}}
    )
    assert (explained.query or "").startswith("MATCH")


def test_contract_versions_swap_forward_only(chinook) -> None:  # type: ignore[no-untyped-def]
    service = _service(chinook.graph)
    c = chinook.contract
    assert service.on_contract(c) is True
    assert service.on_contract(c) is False  # same version and hash
    newer = c.model_copy(update={"version": c.version + 1, "content_hash": "other"})
    assert service.on_contract(newer) is True
    assert service.answer(
        QueryRequest(question="How many tracks are in the Jazz genre?")
    ).contract_version == (c.version + 1)
    assert service.on_contract(c) is False  # an older version arriving late is ignored
    assert service.contract is newer
    assert service.schema_card()["contract_version"] == c.version + 1


def test_graph_is_created_lazily_and_retried(chinook) -> None:  # type: ignore[no-untyped-def]
    calls: list[int] = []

    def factory() -> GraphStore:
        calls.append(1)
        if len(calls) == 1:
            raise ConnectionError("neo4j not up yet")
        return chinook.graph

    service = QueryService(factory)
    service.on_contract(chinook.contract)
    assert calls == []  # nothing connects before the first question
    first = service.ask("How many tracks are in the Jazz genre?")
    assert first.route == "abstain" and "neo4j not up yet" in (first.reason or "")
    assert service.ask("How many tracks are in the Jazz genre?").route == "aggregate"
    service.ask("How many tracks are in the Jazz genre?")
    assert len(calls) == 2


def _new_customer(graph: MemoryGraphStore, contract: Any) -> dict[str, Any]:
    key = {"CustomerId": 99999}
    props = {"FirstName": "Zebulon", "LastName": "Quixotic", "Email": "zq@example.org"}
    graph.upsert_entities(
        [
            EntityWrite(
                label="Customer",
                key=key,
                properties=props,
                provenance=SourceRecordRef(source="Customer", record_id="99999", location="row 99999"),
                contract_version=contract.version,
            )
        ]
    )
    return props


def test_value_dictionary_refreshes_after_its_ttl(chinook) -> None:  # type: ignore[no-untyped-def]
    graph = MemoryGraphStore()
    for nid, node in chinook.graph.nodes.items():  # a private copy: this test adds a customer
        graph.nodes[nid] = node
        graph.by_label[node.label].append(nid)
    stale = _service(graph)
    fresh = _service(graph, ttl=0.0)
    for s in (stale, fresh):
        s.on_contract(chinook.contract)
        s.ask("How many tracks are in the Jazz genre?")  # builds the value dictionary
    props = _new_customer(graph, chinook.contract)
    q = f"What is the email of customer {props['FirstName']} {props['LastName']}?"
    assert fresh.ask(q).answer == props["Email"]
    assert stale.ask(q).answer != props["Email"]
    stale.refresh_values()
    assert stale.ask(q).answer == props["Email"]


def test_parse_request_keeps_options() -> None:
    req = parse_request({"id": "o1", "question": "q?", "options": {"mode": "llm", "vector_fallback": False}})
    assert isinstance(req, QueryRequest)
    assert req.options == QueryOptions(mode="llm", vector_fallback=False)
