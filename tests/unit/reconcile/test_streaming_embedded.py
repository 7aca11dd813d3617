"""Streaming entity resolution on the embedded store (DuckDB): a record that arrives later and links two clusters
merges them, deleting it splits them again, and the graph is the one a fresh ingest of the same final records
gives, in any order. Also through the embedded runtime as a user runs it (``esc ingest --embedded``, then a
question whose answer carries the conflict)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from esc.agents.embedding import HashingEmbedder
from esc.agents.ingest import Ingestor
from esc.agents.reconcile.hook import Reconciler
from esc.agents.reconcile.model import CANONICAL
from esc.agents.stores.embedded.graph import EmbeddedGraphStore
from esc.contract.evolve import evolve
from esc.contract.model import Contract
from esc.contract.records import Record
from esc.streams.discover import discover
from esc.streams.events import RecordEnvelope, envelope_for
from esc.streams.readers import read, scan_with_errors
from tests.unit.agents.fakes import RecordingVectors
from tests.unit.reconcile.streaming_case import BRIDGE, write_folder


@pytest.fixture(scope="module")
def case(tmp_path_factory: pytest.TempPathFactory) -> tuple[Contract, list[RecordEnvelope]]:
    root = write_folder(tmp_path_factory.mktemp("case") / "drop")
    contract, _ = evolve(None, discover(root).contract)
    files, _ = scan_with_errors(root)
    envs = [envelope_for(r, sf.rel, "h") for sf in files for r in read(sf) if isinstance(r, Record)]
    return contract, envs


def _store(tmp: Path, name: str, contract: Contract) -> tuple[EmbeddedGraphStore, Ingestor]:
    graph = EmbeddedGraphStore(tmp / f"{name}.duckdb")
    ing = Ingestor(graph, RecordingVectors(), HashingEmbedder(64), "c", reconciler=Reconciler(graph, tmp / f"{name}.sqlite"))
    ing.use(contract)
    return graph, ing


def snapshot(graph: EmbeddedGraphStore) -> dict[str, Any]:
    """The whole graph, independent of write order (DuckDB tables read back sorted)."""
    out = {}
    for table, cols in (("entities", "label, key_json, props::VARCHAR, stub"), ("edges", "type, src, dst"),
                        ("derived_from", "eid, sid"), ("source_records", "sid, source, record_id, location")):  # fmt: skip
        out[table] = sorted(tuple(r.values()) for r in graph.read(f"SELECT {cols} FROM {table}"))
    props = graph.read("SELECT type, src, dst, props::VARCHAR AS p FROM edge_props") if _has(graph, "edge_props") else []
    out["edge_props"] = sorted(tuple(r.values()) for r in props)
    return out


def _has(graph: EmbeddedGraphStore, table: str) -> bool:
    return bool(graph.read("SELECT 1 FROM information_schema.tables WHERE table_name = $t", {"t": table}))


def _is_bridge(e: RecordEnvelope) -> bool:
    return e.source == BRIDGE[0] and e.payload.get("user_id") == BRIDGE[1]


def test_late_record_merges_delete_splits_and_graph_equals_a_fresh_ingest(case: Any, tmp_path: Path) -> None:
    contract, envs = case
    bridge = next(e for e in envs if _is_bridge(e))
    rest = [e for e in envs if not _is_bridge(e)]
    graph, ing = _store(tmp_path, "stream", contract)
    ing.handle(rest, contract)
    before = snapshot(graph)
    assert graph.count(CANONICAL) == 0  # no duplicates yet: the graph is as without entity resolution
    ing.handle([bridge], contract)
    assert [e.kind for e in ing.reconciler.events] == ["merge"]  # type: ignore[union-attr]
    merged = snapshot(graph)
    canon = [r for r in merged["entities"] if r[0] == CANONICAL]
    assert len(canon) == 8  # the three types have a duplicate now: each of their 10 records is in one of 8 clusters
    maria = [json.loads(r[2]) for r in canon if json.loads(r[2])["_members"] == 3]
    assert len(maria) == 1 and maria[0]["city"] == "Munich"  # billing's 2024 record beats the CRM's 2023 one
    conflict = json.loads(maria[0]["_conflicts"])
    assert [c["field"] for c in conflict] == ["city"] and [v["value"] for v in conflict[0]["values"]] == ["Munich", "Berlin"]
    same_as = [r for r in merged["edges"] if r[0] == "SAME_AS"]
    assert len(same_as) == 10 and all("score" in json.loads(p[3]) for p in merged["edge_props"])
    # questions over the DuckDB store run over the canonical entities: current value, conflict with both sources
    from esc.agents.query.agent import QueryAgent

    answer = QueryAgent(contract, graph).ask("Which city does Maria Keller live in?")
    assert answer.answer == "Munich" and answer.conflicts, answer
    cited = {c.source for v in answer.conflicts[0].values for c in v.citations}
    assert {"crm_contacts", "billing_accounts"} <= cited
    assert QueryAgent(contract, graph).ask("How many crm contacts are there?").answer == 4
    # the same final records, fresh and in another order
    fresh, ing2 = _store(tmp_path, "fresh", contract)
    ing2.handle([bridge, *reversed(rest)], contract)
    assert snapshot(fresh) == merged
    # a re-delivery changes nothing
    ing.handle([bridge], contract)
    assert snapshot(graph) == merged
    # deleting the bridge splits the cluster and leaves the graph a fresh ingest without it gives
    ing.handle([RecordEnvelope(source=bridge.source, record_id=bridge.record_id, payload={}, deleted=True)], contract)
    assert [e.kind for e in ing.reconciler.events] == ["merge", "split"]  # type: ignore[union-attr]
    assert snapshot(graph) == before
    again, ing3 = _store(tmp_path, "again", contract)
    ing3.handle(list(reversed(rest)), contract)
    assert snapshot(again) == before


def test_restart_rebuilds_the_same_clusters(case: Any, tmp_path: Path) -> None:
    contract, envs = case
    graph, ing = _store(tmp_path, "one", contract)
    ing.handle(envs, contract)
    want = snapshot(graph)
    graph.close()
    graph2 = EmbeddedGraphStore(tmp_path / "one.duckdb")
    ing2 = Ingestor(graph2, RecordingVectors(), HashingEmbedder(64), "c",
                    reconciler=Reconciler(graph2, tmp_path / "one.sqlite"))  # fmt: skip
    ing2.use(contract)
    assert snapshot(graph2) == want
    bridge = next(e for e in envs if _is_bridge(e))
    ing2.handle([RecordEnvelope(source=bridge.source, record_id=bridge.record_id, payload={}, deleted=True)], contract)
    assert graph2.count(CANONICAL) == 0
