"""The Neo4j store's first rows of a new type: CREATEd under a dynamic label when the store has just created the
type's uniqueness constraint, MERGEd when a node may exist after all. Two stores stand for two workers: whatever
the order, every node exists once with every record's provenance."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from esc.agents.types import EdgeWrite
from esc.settings import Settings
from tests.conformance.conftest import Names, _neo4j_cleanup
from tests.conformance.helpers import cite, cites, entity, lookup
from tests.integration.conftest import require

pytestmark = pytest.mark.integration


@pytest.fixture
def two(settings: Settings, names: Names) -> Iterator[tuple[Any, Any]]:
    from esc.agents.stores.neo4j import Neo4jGraphStore
    from esc.stack.neo4j import bolt_ping

    uri = settings.neo4j_uri
    require(settings, "neo4j", uri, lambda: bolt_ping(uri, timeout_s=5.0))
    a, b = Neo4jGraphStore(uri), Neo4jGraphStore(uri)
    try:
        yield a, b
    finally:
        a.close()
        b.close()
        _neo4j_cleanup(uri, names)


def statements(store: Any) -> list[str]:
    """Record the statement texts a store sends from now on."""
    sent: list[str] = []
    run = store._driver.execute_query

    def spy(query: str, *args: Any, **kw: Any) -> Any:
        sent.append(query)
        return run(query, *args, **kw)

    store._driver.execute_query = spy
    return sent


def test_new_types_are_created_in_one_statement_and_merge_later(two: tuple[Any, Any], names: Names) -> None:
    a, _ = two
    labels = [names.label(f"New{i}" if i % 4 else f"New {i}`x") for i in range(12)]
    src = names.source("new")
    sent = statements(a)
    batch = [entity(lb, {"id": j}, {"v": f"{i}-{j}"}, src, i * 10 + j) for i, lb in enumerate(labels) for j in range(3)]
    assert a.upsert_entities(batch) == 36
    assert len([q for q in sent if "$(row.label)" in q]) == 1
    again = [entity(lb, {"id": j}, {"w": j}, src, i * 10 + j) for i, lb in enumerate(labels) for j in range(2, 4)]
    assert a.upsert_entities(again) == 24
    assert [a.count(lb) for lb in labels] == [4] * 12
    found = lookup(a, labels[4], "id", 2, ["v", "w"])
    assert [r.values for r in found] == [{"v": "4-2", "w": 2}] and cites(found) == {cite(src, 42)}


def test_a_node_another_writer_made_first_is_merged_not_duplicated(two: tuple[Any, Any], names: Names) -> None:
    a, b = two
    label = names.label("Raced")
    src = names.source("raced")
    b.ensure_entity_key(label, ["id"])  # b created the constraint: the type is new to b
    a.upsert_entities([entity(label, {"id": 1}, {"v": "a"}, src, 1)])  # ... but a writes a node first
    sent = statements(b)
    assert b.upsert_entities([entity(label, {"id": 1}, {"w": "b"}, src, 2), entity(label, {"id": 2}, {}, src, 3)]) == 2
    assert any("$(row.label)" in q for q in sent)  # b tried CREATE, the constraint refused it, b MERGEd
    assert b.count(label) == 2
    found = lookup(b, label, "id", 1, ["v", "w"])
    assert [r.values for r in found] == [{"v": "a", "w": "b"}] and cites(found) == {cite(src, 1), cite(src, 2)}


def test_a_stub_made_by_an_edge_is_filled_not_duplicated(two: tuple[Any, Any], names: Names) -> None:
    a, _ = two
    child, parent = names.label("Child"), names.label("Parent")
    src = names.source("stub")
    edge = EdgeWrite(type="HAS", from_label=child, from_key={"id": 1}, to_label=parent, to_key={"id": 5},
                     contract_version=1)  # fmt: skip
    a.upsert_edges([edge])
    a.upsert_entities([entity(parent, {"id": 5.0}, {"v": 1}, src, 1), entity(parent, {"id": 6}, {"v": 2}, src, 2)])
    assert a.count(parent) == 2
    rows = a.read(f"MATCH (p:`{parent}`) RETURN p.id AS id, p._stub AS stub, p.v AS v ORDER BY p.v")
    assert rows == [{"id": 5, "stub": None, "v": 1}, {"id": 6, "stub": None, "v": 2}]
