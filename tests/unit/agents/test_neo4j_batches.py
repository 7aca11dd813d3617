"""Neo4j adapter: big batches are split into transactions of at most WRITE_BATCH rows (no server needed)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

pytest.importorskip("neo4j")

from agents.stores import neo4j as store
from agents.types import EdgeWrite, EntityWrite, SourceRecordRef


class FakeDriver:
    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []

    def execute_query(self, query: str, **kw: Any) -> Any:
        self.calls.append((query, kw))
        rows = kw.get("rows") or []
        counters = SimpleNamespace(relationships_created=len(rows), properties_set=0)
        return SimpleNamespace(summary=SimpleNamespace(counters=counters), records=[])


def make_store(monkeypatch: pytest.MonkeyPatch, batch: int) -> tuple[store.Neo4jGraphStore, FakeDriver]:
    monkeypatch.setattr(store, "WRITE_BATCH", batch)
    s = store.Neo4jGraphStore.__new__(store.Neo4jGraphStore)
    drv = FakeDriver()
    s._driver = drv  # type: ignore[assignment]
    s._database = None
    s._known_constraints = set()
    return s, drv


def entity(i: int, label: str = "Item") -> EntityWrite:
    return EntityWrite(
        label=label, key={"id": i}, properties={"n": i}, provenance=SourceRecordRef(source="items", record_id=str(i))
    )


def test_entities_split_into_bounded_transactions(monkeypatch: pytest.MonkeyPatch) -> None:
    s, drv = make_store(monkeypatch, batch=4)
    rows = [entity(i) for i in range(10)] + [entity(i, "Other") for i in range(3)]
    assert s.upsert_entities(rows) == 13
    writes = [kw["rows"] for q, kw in drv.calls if "UNWIND" in q]
    assert [len(w) for w in writes] == [4, 4, 2, 3]
    assert sorted(r["key"][0] for w in writes[:3] for r in w) == list(range(10))  # every row sent exactly once


def test_edges_split_into_bounded_transactions(monkeypatch: pytest.MonkeyPatch) -> None:
    s, drv = make_store(monkeypatch, batch=3)
    rows = [
        EdgeWrite(type="OF", from_label="Item", from_key={"id": i}, to_label="Group", to_key={"gid": i % 2})
        for i in range(7)
    ]
    assert s.upsert_edges(rows) == 7
    writes = [kw["rows"] for q, kw in drv.calls if "UNWIND" in q]
    assert [len(w) for w in writes] == [3, 3, 1]
    assert [r["f"][0] for w in writes for r in w] == list(range(7))


def test_small_batch_is_one_transaction(monkeypatch: pytest.MonkeyPatch) -> None:
    s, drv = make_store(monkeypatch, batch=5000)
    s.upsert_entities([entity(i) for i in range(100)])
    assert len([q for q, _ in drv.calls if "UNWIND" in q]) == 1
