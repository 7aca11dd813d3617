"""Embedded (DuckDB) stores: what only this backend has to prove. Shared behaviours live in tests/conformance."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path

import duckdb
import numpy as np
import pytest

from esc.agents.query.plan import Expr, Filter, Hop, NodePattern, OrderBy, QueryPlan, ReturnItem
from esc.agents.stores.embedded import (
    EmbeddedGraphStore,
    EmbeddedVectorStore,
    InvalidPlan,
    compile_plan,
    open_embedded,
)
from esc.agents.stores.embedded.db import StoreLocked
from esc.agents.stores.embedded.sql import json_pointer
from esc.agents.types import EdgeWrite, EntityWrite, SourceRecordRef, TextObject


def rec(i: int, source: str = "people") -> SourceRecordRef:
    return SourceRecordRef(source=source, record_id=str(i), location=f"{source}.csv:row={i}")


def person(i: int, **props: object) -> EntityWrite:
    return EntityWrite(
        label="Person", key={"id": i}, properties={"name": f"P{i}", **props}, provenance=rec(i)
    )


def text(i: int, vector: list[float] | None, source: str = "docs") -> TextObject:
    return TextObject(
        object_id=f"00000000-0000-0000-0000-{i:012d}",
        text=f"t{i}",
        provenance=SourceRecordRef(source=source, record_id=str(i)),
        vector=vector,
    )


def test_open_embedded_persists_graph_and_vectors_across_restarts(tmp_path: Path) -> None:
    graph, vectors = open_embedded(tmp_path)
    assert Path(graph.path) == tmp_path / "embedded" / "graph.duckdb"
    graph.upsert_entities([person(1), person(2)])
    graph.upsert_edges(
        [
            EdgeWrite(
                type="KNOWS", from_label="Person", from_key={"id": 1}, to_label="Person", to_key={"id": 2}
            )
        ]
    )
    vectors.upsert("c", [text(1, [1.0, 0.0, 0.0]), text(2, [0.0, 1.0, 0.0])])
    graph.close()
    vectors.close()

    graph, vectors = open_embedded(tmp_path)
    try:
        assert graph.count("Person") == 2
        assert graph.count("SourceRecord") == 2
        plan = QueryPlan(
            kind="traverse",
            start=NodePattern(var="n0", label="Person", filters=[Filter(prop="id", value=1)]),
            hops=[Hop(rel_type="KNOWS", direction="out", target=NodePattern(var="n1", label="Person"))],
            returns=[ReturnItem(var="n1", prop="name", alias="name")],
            cite=["n1"],
        )
        rows = graph.run_plan(plan)
        assert [r.values for r in rows] == [{"name": "P2"}]
        assert rows[0].citations == [{"source": "people", "record_id": "2", "location": "people.csv:row=2"}]
        assert vectors.count("c") == 2
        hit = vectors.near_vector("c", [0.1, 0.9, 0.0], limit=1)[0]
        assert hit["text"] == "t2" and hit["id"] == text(2, None).object_id
    finally:
        graph.close()
        vectors.close()


def test_stub_flag_is_set_then_cleared_by_the_record(tmp_path: Path) -> None:
    g = EmbeddedGraphStore()
    g.upsert_entities([person(1)])
    g.upsert_edges(
        [
            EdgeWrite(
                type="IN", from_label="Person", from_key={"id": 1}, to_label="City", to_key={"code": "OSL"}
            )
        ]
    )
    assert g.read("SELECT stub, props FROM entities WHERE label = 'City'") == [
        {"stub": True, "props": '{"code":"OSL"}'}
    ]
    g.upsert_entities(
        [
            EntityWrite(
                label="City", key={"code": "OSL"}, properties={"name": "Oslo"}, provenance=rec(9, "cities")
            )
        ]
    )
    rows = g.read("SELECT stub, props FROM entities WHERE label = 'City'")
    assert [(r["stub"], json.loads(r["props"])) for r in rows] == [(False, {"code": "OSL", "name": "Oslo"})]


def test_read_never_persists_a_write() -> None:
    g = EmbeddedGraphStore()
    g.upsert_entities([person(1)])
    assert g.read("DELETE FROM entities RETURNING eid") != []
    assert g.count("Person") == 1
    assert g.read("SELECT count(*) AS c FROM entities WHERE label = $label", {"label": "Person"}) == [
        {"c": 1}
    ]


def test_second_process_gets_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "graph.duckdb"
    g = EmbeddedGraphStore(path)
    try:
        code = (
            "import sys\n"
            "from esc.agents.stores.embedded import EmbeddedGraphStore\n"
            "from esc.agents.stores.embedded.db import StoreLocked\n"
            "try:\n"
            f"    EmbeddedGraphStore({str(path)!r})\n"
            "except StoreLocked as exc:\n"
            "    print(exc); sys.exit(3)\n"
        )
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
        assert done.returncode == 3, done.stderr
        assert "another process" in done.stdout
    finally:
        g.close()
    assert issubclass(StoreLocked, RuntimeError)


def test_rows_without_a_key_value_are_skipped_not_fatal() -> None:
    g = EmbeddedGraphStore()
    bad = EntityWrite(label="Person", key={"id": None}, properties={}, provenance=rec(0))
    assert g.upsert_entities([bad, person(1)]) == 1
    assert g.count("Person") == 1
    edge = EdgeWrite(
        type="K", from_label="Person", from_key={"id": 1}, to_label="Person", to_key={"id": None}
    )
    assert g.upsert_edges([edge]) == 0


def test_same_entity_twice_in_one_batch() -> None:
    g = EmbeddedGraphStore()
    g.upsert_entities(
        [
            person(1, city="A"),
            EntityWrite(label="Person", key={"id": 1}, properties={"city": "B"}, provenance=rec(2)),
        ]
    )
    rows = g.read("SELECT props FROM entities")
    assert [json.loads(r["props"]) for r in rows] == [{"name": "P1", "city": "B", "id": 1}]
    assert g.read("SELECT count(*) AS c FROM derived_from") == [{"c": 2}]


def test_retract_cleans_provenance_tables() -> None:
    g = EmbeddedGraphStore()
    g.upsert_entities([person(1), person(2)])
    assert g.retract_source_records([rec(1)]) == 1
    assert g.read("SELECT sid FROM derived_from") == [{"sid": "people\x1f2"}]
    assert g.count("SourceRecord") == 1


def test_concurrent_writers_share_one_connection() -> None:
    g = EmbeddedGraphStore()

    def work(start: int) -> None:
        for i in range(start, start + 50):
            g.upsert_entities([person(i)])

    threads = [threading.Thread(target=work, args=(n * 1000,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert g.count("Person") == 200


def test_compiled_sql_holds_no_data() -> None:
    marker = "zz'\"`;--"
    plan = QueryPlan(
        kind="aggregate",
        start=NodePattern(
            var="n0", label=f"L{marker}", filters=[Filter(prop=f"p{marker}", op="ieq", value=f"v{marker}")]
        ),
        hops=[Hop(rel_type=f"R{marker}", direction="in", target=NodePattern(var="n1", label=f"M{marker}"))],
        returns=[
            ReturnItem(var="n0", prop=f"q{marker}", alias="a"),
            ReturnItem(
                var="n1",
                expr=Expr(op="mul", args=[Expr(prop=f"x{marker}"), Expr(const=2.0)]),
                agg="sum",
                alias="s",
            ),
        ],
        order_by=OrderBy(alias="s"),
        limit=3,
        cite=["n1"],
    )
    compiled = compile_plan(plan)
    assert "zz" not in compiled.sql
    params = set(map(str, compiled.params.values()))
    assert {
        f"L{marker}",
        f"M{marker}",
        f"R{marker}",
        json_pointer(f"p{marker}"),
        json_pointer(f"x{marker}"),
    } <= params
    # and it runs
    g = EmbeddedGraphStore()
    assert g.run_plan(plan) == []


def test_plan_errors_are_clear() -> None:
    unbound = QueryPlan(
        kind="lookup",
        start=NodePattern(var="n0", label="A"),
        returns=[ReturnItem(var="n9", prop="x", alias="x")],
    )
    with pytest.raises(InvalidPlan, match="n9"):
        compile_plan(unbound)
    no_prop = QueryPlan(
        kind="aggregate",
        start=NodePattern(var="n0", label="A"),
        returns=[ReturnItem(var="n0", agg="sum", alias="s")],
    )
    with pytest.raises(InvalidPlan, match="needs a property"):
        compile_plan(no_prop)


def test_json_pointer_escapes() -> None:
    assert json_pointer("a/b~c") == "/a~1b~0c"
    assert json_pointer("") == "/"


def test_vector_dimensions_are_checked() -> None:
    v = EmbeddedVectorStore()
    v.upsert("c", [text(1, [1.0, 0.0])])
    with pytest.raises(ValueError, match="dimension"):
        v.upsert("c", [text(2, [1.0, 0.0, 0.0])])
    with pytest.raises(ValueError, match="dimension"):
        v.near_vector("c", [1.0, 0.0, 0.0])
    assert v.count("c") == 1
    assert v.near_vector("missing", [1.0]) == []


def test_objects_without_vectors_are_stored_not_searched() -> None:
    v = EmbeddedVectorStore()
    v.upsert("c", [text(1, None), text(2, [0.0, 1.0])])
    assert v.count("c") == 2
    assert [h["text"] for h in v.near_vector("c", [0.0, 1.0], limit=5)] == ["t2"]
    v.upsert("c", [text(2, None)])  # a vector can be taken away again
    assert v.near_vector("c", [0.0, 1.0]) == []


def test_index_matches_duckdb_cosine_after_random_writes(tmp_path: Path) -> None:
    """The in-memory matrix against an independent oracle: DuckDB's list_cosine_similarity on the stored rows."""
    rng = np.random.default_rng(5)
    path = tmp_path / "v.duckdb"
    v = EmbeddedVectorStore(path)
    live: set[int] = set()
    for step in range(30):
        ids = rng.choice(300, size=20, replace=False).tolist()
        v.upsert("c", [text(i, rng.normal(size=8).tolist(), source="s") for i in ids])
        live |= set(ids)
        if step % 3 == 2:
            gone = rng.choice(sorted(live), size=10, replace=False).tolist()
            assert v.delete_by_record("c", "s", [str(i) for i in gone]) == 10
            live -= set(gone)
    assert v.count("c") == len(live)
    query = rng.normal(size=8).tolist()
    hits = v.near_vector("c", query, limit=7)
    v.close()
    con = duckdb.connect(str(path), read_only=True)
    oracle = con.execute(
        "SELECT record_id, list_cosine_similarity(vec, ?::FLOAT[]) AS s FROM objects ORDER BY s DESC LIMIT 7",
        [query],
    ).fetchall()
    con.close()
    assert [h["record_id"] for h in hits] == [r[0] for r in oracle]
    assert all(abs(h["similarity"] - max(0.0, r[1])) < 1e-5 for h, r in zip(hits, oracle, strict=True))


def test_source_records_for_file() -> None:
    g = EmbeddedGraphStore()
    refs = [
        SourceRecordRef(source="a", record_id=str(i), location=f"a.csv:row={i}", file="a.csv")
        for i in range(3)
    ]
    other = SourceRecordRef(source="b", record_id="1", file="b.csv")
    g.upsert_entities(
        [EntityWrite(label="A", key={"id": i}, provenance=r) for i, r in enumerate(refs)]
        + [EntityWrite(label="B", key={"id": 1}, provenance=other)]
    )
    assert g.source_records_for_file("a.csv") == refs
    assert g.retract_source_records(g.source_records_for_file("a.csv")) == 3
    assert g.count("A") == 0 and g.count("B") == 1
    assert g.source_records_for_file("missing.csv") == []
