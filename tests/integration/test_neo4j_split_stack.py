"""A statement with folded edges written in concurrent lanes on the real Neo4j (agents/stores/neo4j_lanes.py
``split_rows``): the graph is the one one transaction writes, every node, source record and edge once, also when
the same batch is written again and when two batches are written at once."""

from __future__ import annotations

import threading
import uuid
from typing import Any

import pytest

from esc.agents.stores import neo4j as store
from esc.agents.types import EdgeWrite, EntityWrite, SourceRecordRef
from esc.settings import Settings
from tests.integration.worker import wipe_graph

ROWS = 6000
DENSE = 40  # few ends, many rows each: kept apart between lanes
SPARSE = 4500  # many ends, shared between lanes now and then (locks, a deadlock retried)


def batch(first: int, n: int) -> tuple[list[EntityWrite], list[EdgeWrite]]:
    entities, edges = [], []
    for i in range(first, first + n):
        key = {"fact_id": i}
        entities.append(EntityWrite(label="Fact", key=key, properties={"amount": i * 1.5}, contract_version=1,
                                    provenance=SourceRecordRef(source="facts", record_id=str(i))))  # fmt: skip
        edges.append(EdgeWrite(type="FK_DIM", from_label="Fact", from_key=key, to_label="Dim",
                               to_key={"dim_id": (i * 7) % DENSE}, contract_version=1))  # fmt: skip
        edges.append(EdgeWrite(type="FK_OTHER", from_label="Fact", from_key=key, to_label="Other",
                               to_key={"other_id": (i * 7919) % SPARSE}, contract_version=1))  # fmt: skip
    return entities, edges


def counts(driver: Any, ns: str) -> dict[str, int]:
    q = {
        "facts": f"MATCH (n:`{ns}Fact`) RETURN count(n) AS c",
        "sources": f"MATCH (:`{ns}Fact`)-[:DERIVED_FROM]->(s:`{ns}SourceRecord`) RETURN count(DISTINCT s) AS c",
        "dims": f"MATCH (n:`{ns}Dim`) RETURN count(n) AS c",
        "others": f"MATCH (n:`{ns}Other`) RETURN count(n) AS c",
        "dim_edges": f"MATCH (:`{ns}Fact`)-[r:FK_DIM]->(:`{ns}Dim`) RETURN count(r) AS c",
        "other_edges": f"MATCH (:`{ns}Fact`)-[r:FK_OTHER]->(:`{ns}Other`) RETURN count(r) AS c",
        "derived": f"MATCH (:`{ns}Fact`)-[r:DERIVED_FROM]->() RETURN count(r) AS c",
        "amounts": f"MATCH (n:`{ns}Fact`) WHERE n.amount = n.fact_id * 1.5 RETURN count(n) AS c",
    }
    return {k: int(driver.execute_query(v).records[0]["c"]) for k, v in q.items()}


def test_a_split_statement_writes_the_graph_one_transaction_writes(
    stack_settings: Settings, neo4j_driver: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    ns = f"split{uuid.uuid4().hex[:8]}__"
    seen: list[list[int]] = []
    real = store.split_rows

    def recording(rows: list[dict[str, Any]], folded: int) -> list[list[dict[str, Any]]]:
        lanes = real(rows, folded)
        seen.append([len(lane) for lane in lanes])
        return lanes

    monkeypatch.setattr(store, "split_rows", recording)
    graph = store.Neo4jGraphStore(stack_settings.neo4j_uri, namespace=ns)
    try:
        graph.upsert(*batch(0, ROWS))
        assert seen and all(len(lanes) == 2 for lanes in seen), seen  # written in two lanes
        want = {"facts": ROWS, "sources": ROWS, "dims": DENSE, "others": SPARSE, "dim_edges": ROWS,
                "other_edges": ROWS, "derived": ROWS, "amounts": ROWS}  # fmt: skip
        assert counts(neo4j_driver, ns) == want
        graph.upsert(*batch(0, ROWS))  # the same batch again (a redelivery): nothing twice
        assert counts(neo4j_driver, ns) == want
        # two batches at once (two stores, as two workers would): lanes of both contend on the same ends
        other = store.Neo4jGraphStore(stack_settings.neo4j_uri, namespace=ns)
        try:
            threads = [threading.Thread(target=g.upsert, args=batch(first, ROWS))
                       for g, first in ((graph, ROWS), (other, 2 * ROWS))]  # fmt: skip
            for t in threads:
                t.start()
            for t in threads:
                t.join(120)
        finally:
            other.close()
        want3 = {k: (v * 3 if k not in ("dims", "others") else v) for k, v in want.items()}
        assert counts(neo4j_driver, ns) == want3
    finally:
        graph.close()
        wipe_graph(neo4j_driver, ns)
