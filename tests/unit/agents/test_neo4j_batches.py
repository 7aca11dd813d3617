"""Neo4j adapter: big batches are split into transactions of at most WRITE_BATCH rows (no server needed)."""

from __future__ import annotations

import copy
from types import SimpleNamespace
from typing import Any

import pytest

pytest.importorskip("neo4j")

from esc.agents.stores import neo4j as store
from esc.agents.stores import neo4j_statements as statements
from esc.agents.types import EdgeWrite, EntityWrite, SourceRecordRef


class FakeDriver:
    """Records statements. ``fresh``: the server creates every constraint asked for (a new label each time);
    ``fail``: an exception the dynamic-label CREATE statement raises."""

    def __init__(self, fresh: bool = False, fail: Exception | None = None) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.fresh = fresh
        self.fail = fail

    def execute_query(self, query: str, parameters_: dict[str, Any] | None = None, **kw: Any) -> Any:
        # the parameters as the server receives them at call time (the store empties what it sent afterwards)
        params = copy.deepcopy({**(parameters_ or {}), **{k: v for k, v in kw.items() if not k.endswith("_")}})
        self.calls.append((query, params))
        kw = params
        if self.fail is not None and "$(row.label)" in query:
            raise self.fail
        rows = kw.get("rows") or []
        added = int(self.fresh and query.startswith("CREATE CONSTRAINT"))
        counters = SimpleNamespace(relationships_created=len(rows), properties_set=0, constraints_added=added)
        return SimpleNamespace(summary=SimpleNamespace(counters=counters), records=[])


def make_store(
    monkeypatch: pytest.MonkeyPatch, batch: int, drv: FakeDriver | None = None
) -> tuple[store.Neo4jGraphStore, FakeDriver]:
    monkeypatch.setattr(store, "WRITE_BATCH", batch)
    s = store.Neo4jGraphStore.__new__(store.Neo4jGraphStore)
    drv = drv or FakeDriver()
    s._driver = drv  # type: ignore[assignment]
    s._database = None
    s._known_constraints = set()
    s._planned = set()
    s._fresh = set()
    s._dynamic_labels = True
    return s, drv


def written_rows(drv: FakeDriver) -> list[list[dict[str, Any]]]:
    """The rows of every entity statement: ``rows``, or ``rows0``, ``rows1``... of new types written together."""
    out: list[list[dict[str, Any]]] = []
    for query, kw in drv.calls:
        if "UNWIND" in query:
            out += [kw["rows"]] if "rows" in kw else list(kw.values())
    return out


def entity(i: int, label: str = "Item") -> EntityWrite:
    return EntityWrite(
        label=label,
        key={"id": i},
        properties={"n": i},
        provenance=SourceRecordRef(source="items", record_id=str(i)),
    )


def test_entities_split_into_bounded_transactions(monkeypatch: pytest.MonkeyPatch) -> None:
    s, drv = make_store(monkeypatch, batch=4)
    rows = [entity(i) for i in range(10)] + [entity(i, "Other") for i in range(3)]
    assert s.upsert_entities(rows) == 13
    writes = [kw["rows"] for q, kw in drv.calls if "UNWIND" in q]
    assert [len(w) for w in writes] == [4, 4, 2, 3]
    assert sorted(r["key"][0] for w in writes[:3] for r in w) == list(
        range(10)
    )  # every row sent exactly once


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


def edge(i: int, group: int | None) -> EdgeWrite:
    return EdgeWrite(
        type="IN", from_label="Item", from_key={"id": i}, to_label="Group", to_key={"gid": group}
    )


def test_edges_of_batch_entities_are_folded_into_their_statement(monkeypatch: pytest.MonkeyPatch) -> None:
    s, drv = make_store(monkeypatch, batch=5000)
    rows = [entity(i) for i in range(4)]
    edges = [edge(0, 7), edge(2, 8), edge(9, 7)]  # item 9 is not in the batch: its edge goes apart
    edges.append(
        EdgeWrite(type="HAS", from_label="Shelf", from_key={"sid": 1}, to_label="Item", to_key={"id": 3})
    )
    assert s.upsert(rows, edges) == (4, 4)
    (entity_query, kw), (edge_query, ekw) = [(q, kw) for q, kw in drv.calls if "UNWIND" in q]
    assert "FOREACH" in entity_query and "MERGE (n)-[r0:`IN`]->(o0)" in entity_query
    assert "MERGE (o1)-[r1:`HAS`]->(n)" in entity_query  # an incoming (nesting) edge: the entity is its end
    assert [r["e"] for r in kw["rows"]] == [[[7], None], [None, None], [[8], None], [None, [1]]]
    assert [(r["f"], r["t"]) for r in ekw["rows"]] == [([9], [7])]
    assert "FOREACH" not in edge_query


def test_an_edge_of_another_contract_version_is_not_folded(monkeypatch: pytest.MonkeyPatch) -> None:
    s, drv = make_store(monkeypatch, batch=5000)
    e = edge(0, 7)
    e.contract_version = 3
    assert s.upsert([entity(0)], [e]) == (1, 1)
    queries = [q for q, _ in drv.calls if "UNWIND" in q]
    assert len(queries) == 2 and "FOREACH" not in queries[0]


def test_rows_without_edges_keep_the_plain_statement(monkeypatch: pytest.MonkeyPatch) -> None:
    s, drv = make_store(monkeypatch, batch=5000)
    assert s.upsert([entity(i) for i in range(3)], []) == (3, 0)
    ((query, kw),) = [(q, kw) for q, kw in drv.calls if "UNWIND" in q]
    assert "FOREACH" not in query and all(r["e"] == [] for r in kw["rows"])


def test_new_small_types_share_a_statement_and_their_later_rows_use_their_own(monkeypatch: pytest.MonkeyPatch) -> None:
    s, drv = make_store(monkeypatch, batch=5000)
    batch = [entity(i, f"T{t}") for t in range(statements.FIRST_TOGETHER + 3) for i in range(2)]
    assert s.upsert_entities(batch) == 2 * (statements.FIRST_TOGETHER + 3)
    writes = [(q, kw) for q, kw in drv.calls if "UNWIND" in q]
    assert len(writes) == 2  # ten types in one statement, the other three in a second
    query, kw = writes[0]
    assert query.count("CALL () {") == statements.FIRST_TOGETHER and sorted(kw) == sorted(
        f"rows{j}" for j in range(statements.FIRST_TOGETHER)
    )
    drv.calls.clear()
    s.upsert_entities([entity(5, "T0"), entity(6, "T1")])  # known types: their own statements (plans cached)
    assert [q.count("CALL () {") for q, _ in drv.calls if "UNWIND" in q] == [0, 0]


def creates(drv: FakeDriver) -> list[list[dict[str, Any]]]:
    return [kw["rows"] for q, kw in drv.calls if "$(row.label)" in q]


def test_types_whose_constraint_was_just_created_are_created_in_one_statement(monkeypatch: pytest.MonkeyPatch) -> None:
    s, drv = make_store(monkeypatch, batch=5000, drv=FakeDriver(fresh=True))
    batch = [entity(i, f"T{t}") for t in range(25) for i in range(3)]
    assert s.upsert_entities(batch) == 75
    (rows,) = creates(drv)  # one statement text for every new label, planned once by the server
    assert [r["label"] for r in rows] == [f"T{t}" for t in range(25) for _ in range(3)]
    assert rows[4]["kp"] == {"id": 1} and rows[4]["sid"] == batch[4].provenance.sid
    assert not [q for q, _ in drv.calls if "UNWIND" in q and "$(row.label)" not in q]
    drv.calls.clear()
    s.upsert_entities([entity(1, "T0"), entity(9, "T1")])  # written once: MERGE from now on
    assert creates(drv) == [] and len([q for q, _ in drv.calls if "MERGE (n:" in q]) >= 1


def test_types_a_batch_may_stub_or_write_twice_are_merged(monkeypatch: pytest.MonkeyPatch) -> None:
    s, drv = make_store(monkeypatch, batch=5000, drv=FakeDriver(fresh=True))
    twice = [entity(1, "Twice"), entity(1, "Twice"), entity(2, "Once")]
    edge = EdgeWrite(type="REL", from_label="Other", from_key={"id": 7}, to_label="Target", to_key={"id": 1},
                     contract_version=1)  # fmt: skip
    nokey = [entity(1, "NoKey"), EntityWrite(label="NoKey", key={"id": None}, properties={},
                                              provenance=SourceRecordRef(source="items", record_id="x"))]  # fmt: skip
    s.upsert([*twice, entity(1, "Target"), *nokey], [edge])
    assert [r["label"] for rows in creates(drv) for r in rows] == ["Once"]


def test_an_existing_node_or_an_old_server_falls_back_to_merge(monkeypatch: pytest.MonkeyPatch) -> None:
    import neo4j

    for error in (neo4j.exceptions.ConstraintError("exists"), neo4j.exceptions.CypherSyntaxError("$(")):
        s, drv = make_store(monkeypatch, batch=5000, drv=FakeDriver(fresh=True, fail=error))
        assert s.upsert_entities([entity(i, f"T{t}") for t in range(3) for i in range(2)]) == 6
        merged = [kw for q, kw in drv.calls if "CALL () {" in q]
        assert len(creates(drv)) == 1 and sum(len(v) for kw in merged for v in kw.values()) == 6
        assert s._dynamic_labels is not isinstance(error, neo4j.exceptions.CypherSyntaxError)


def test_sent_rows_do_not_outlive_the_statement(monkeypatch: pytest.MonkeyPatch) -> None:
    """The driver keeps a statement's parameters in a reference cycle; the store empties the lists it sent, so a
    batch's rows are freed when the write returns, not at the next full garbage collection."""
    kept: list[dict[str, Any]] = []

    class Keeping(FakeDriver):
        def execute_query(self, query: str, parameters_: dict[str, Any] | None = None, **kw: Any) -> Any:
            kept.append(parameters_ or {})  # what a driver holding on to its parameters would see later
            return super().execute_query(query, parameters_, **kw)

    s, drv = make_store(monkeypatch, 2, Keeping())
    s.upsert_entities([entity(i) for i in range(5)])
    sent = [v for p in kept for v in p.values() if isinstance(v, list)]
    assert sent and all(v == [] for v in sent)
    assert sum(len(kw["rows"]) for q, kw in drv.calls if "UNWIND" in q) >= 5  # every row reached the server


def test_edges_given_their_entity_s_key_fold_as_edges_with_an_equal_key() -> None:
    """The planner hands an entity's edges the entity's own key dict (``fold`` finds them by identity first);
    a node written twice in a batch keeps its edges on its first row either way."""
    rows = [entity(0), entity(1), entity(0)]
    shared = [EdgeWrite(type="IN", from_label="Item", from_key=r.key, to_label="Box", to_key={"bid": n})
              for r, n in zip(rows, (7, 8, 9), strict=True)]  # fmt: skip
    equal = [e.model_copy(update={"from_key": dict(e.from_key)}) for e in shared]
    by_identity, by_value = statements.fold(rows, shared), statements.fold(rows, equal)
    assert by_identity[0] == by_value[0]
    assert [r.to_key for r in by_identity[1]] == [r.to_key for r in by_value[1]] == [{"bid": 9}]
    (_, params), = by_identity[0].values()
    assert [r["e"] for r in params] == [[[7]], [[8]], [None]]  # the repeat's edge goes apart (one kind per row)
