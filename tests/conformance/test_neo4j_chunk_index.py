"""The Neo4j store finds a record's chunks by an index on ``(source, record_id)``: each batch with text replaces
its records' chunks, and without the index that lookup scanned every Chunk node (it grew with the graph)."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from esc.agents.stores.neo4j import label_namespace
from esc.agents.types import SourceRecordRef, TextObject
from esc.settings import Settings
from tests.integration.conftest import require
from tests.integration.worker import wipe_graph

pytestmark = pytest.mark.integration


@pytest.fixture
def store(settings: Settings) -> Iterator[Any]:
    from esc.agents.stores.neo4j import Neo4jGraphStore
    from esc.stack.neo4j import bolt_ping

    uri = settings.neo4j_uri
    require(settings, "neo4j", uri, lambda: bolt_ping(uri, timeout_s=5.0))
    s = Neo4jGraphStore(uri, namespace=label_namespace(f"chunkidx-{uuid.uuid4().hex[:8]}"))
    try:
        yield s
    finally:
        wipe_graph(s._driver, s.namespace)
        s.close()


def text(record: str, index: int, body: str) -> TextObject:
    prov = SourceRecordRef(source="notes", record_id=record, location=f"notes/{record}.md", file=f"notes/{record}.md")
    return TextObject(object_id=f"notes-{record}-{index}", text=body, provenance=prov, chunk_index=index,
                      field="text", entity_label="Note", entity_key=json.dumps({"_record_id": record}))  # fmt: skip


def plan_operators(plan: Any) -> list[str]:
    out = [f"{plan['operatorType']} {plan.get('args', {}).get('Details', '')}"]
    for child in plan.get("children", []):
        out += plan_operators(child)
    return out


def test_a_records_chunks_are_found_by_index(store: Any) -> None:
    sent: list[tuple[str, dict[str, Any]]] = []
    run = store._driver.execute_query

    def spy(query: str, *args: Any, **kw: Any) -> Any:
        sent.append((query, {k: list(v) if isinstance(v, list) else v for k, v in kw.get("parameters_", {}).items()}))
        return run(query, *args, **kw)

    store._driver.execute_query = spy
    store.upsert_chunks([text("n1", 0, "first"), text("n1", 1, "second"), text("n2", 0, "other")])
    store.upsert_chunks([text("n1", 0, "first, again")])  # n1 replaced by one chunk, n2 untouched
    store._driver.execute_query = run
    chunk = store._chunk().strip("`")
    indexes = run("SHOW INDEXES YIELD labelsOrTypes, properties, type RETURN labelsOrTypes, properties, type").records
    assert any(r["labelsOrTypes"] == [chunk] and r["properties"] == ["source", "record_id"] for r in indexes)
    replace = [(q, p) for q, p in sent if "DETACH DELETE" in q and "CREATE" in q]
    assert replace, [q for q, _ in sent]
    query, params = replace[-1]
    operators = plan_operators(run("EXPLAIN " + query, parameters_=params).summary.plan)
    assert any(op.startswith("NodeIndexSeek") and "source" in op and "record_id" in op for op in operators), operators
    assert not any(op.startswith("NodeByLabelScan") for op in operators), operators
    rows = sorted((r.record_id, r.chunk_index, r.text) for r in store.chunk_rows("", 100))
    assert rows == [("n1", 0, "first, again"), ("n2", 0, "other")]
    assert store.delete_chunks("notes", ["n1", "n2"]) == 2
