from __future__ import annotations

import pytest

from esc.agents.query.cypher import (
    UnsafeQuery,
    check_against_contract,
    check_read_only,
    compile_plan,
    referenced_names,
)
from esc.agents.query.plan import Expr, Filter, Hop, NodePattern, OrderBy, QueryPlan, ReturnItem


def test_lookup_is_parameterized_and_escaped() -> None:
    evil = "x` }) DETACH DELETE n //"
    plan = QueryPlan(
        kind="lookup",
        start=NodePattern(var="n0", label="Cust`omer", filters=[Filter(prop="Name", value="'); DROP")]),
        returns=[ReturnItem(var="n0", prop=evil, alias="v0")],
        cite=["n0"],
    )
    cypher, params = compile_plan(plan)
    assert params == {"p0": "'); DROP"}
    assert "`Cust``omer`" in cypher and "`x`` }) DETACH DELETE n //`" in cypher
    assert "DERIVED_FROM" in cypher and "_citations" in cypher
    check_read_only(cypher)  # compiled plans never write


def test_a_namespace_prefixes_every_label_the_plan_names_and_the_provenance_label() -> None:
    plan = QueryPlan(
        kind="traverse",
        start=NodePattern(var="n0", label="Album", filters=[Filter(prop="Title", value="X")]),
        hops=[Hop(rel_type="BY", direction="out", target=NodePattern(var="n1", label="Artist"))],
        returns=[ReturnItem(var="n1", prop="Name", alias="v0")],
        cite=["n0", "n1"],
    )
    plain, _ = compile_plan(plan)
    spaced, params = compile_plan(plan, "shop__")
    assert "(n0:`Album`)" in plain and ":`SourceRecord`)" in plain
    assert (
        "(n0:`shop__Album`)" in spaced
        and "(n1:`shop__Artist`)" in spaced
        and ":`shop__SourceRecord`)" in spaced
    )
    assert "`Album`" not in spaced.replace("`shop__Album`", "") and params == {"p0": "X"}


def test_label_namespace_is_empty_for_the_default_app_id_only() -> None:
    pytest.importorskip("neo4j")
    from esc.agents.stores.neo4j import label_namespace

    assert label_namespace("esc") == "" and label_namespace("") == ""
    assert label_namespace("shop") == "shop__" and label_namespace("shop") != label_namespace("shop2")


def test_grouped_superlative_orders_by_aggregate_alias() -> None:
    plan = QueryPlan(
        kind="superlative",
        start=NodePattern(var="n0", label="Genre"),
        hops=[Hop(rel_type="GENRE", direction="in", target=NodePattern(var="n1", label="Track"))],
        returns=[
            ReturnItem(var="n0", prop="Name", alias="v0"),
            ReturnItem(var="n1", agg="count", alias="score"),
        ],
        group_by=["n0"],
        order_by=OrderBy(alias="score"),
        limit=1,
        cite=["n0"],
    )
    cypher, _ = compile_plan(plan)
    assert "(n0:`Genre`)<-[:`GENRE`]-(n1:`Track`)" in cypher
    assert "WITH n0, count(DISTINCT n1) AS _a0" in cypher
    assert "ORDER BY _a0 IS NULL, _a0 DESC LIMIT 1" in cypher


def test_expression_constants_are_parameters() -> None:
    expr = Expr(
        op="mul", args=[Expr(prop="UnitPrice"), Expr(op="sub", args=[Expr(const=1.0), Expr(prop="Discount")])]
    )
    plan = QueryPlan(
        kind="aggregate",
        start=NodePattern(var="n0", label="OrderDetail"),
        returns=[ReturnItem(var="n0", expr=expr, agg="sum", alias="sum")],
    )
    cypher, params = compile_plan(plan)
    assert "sum((n0.`UnitPrice` * ($p0 - n0.`Discount`)))" in cypher
    assert params == {"p0": 1.0}


@pytest.mark.parametrize(
    "text",
    [
        "MATCH (n) DETACH DELETE n",
        "MATCH (n) SET n.x = 1 RETURN n",
        "CREATE (n:Customer) RETURN n",
        "MERGE (n:Customer {id: 1}) RETURN n",
        "CALL db.labels() YIELD label RETURN label",
        "LOAD CSV FROM 'file:///etc/passwd' AS l RETURN l",
        "MATCH (n) RETURN n; MATCH (m) DELETE m",
        "MATCH (n) REMOVE n.x RETURN n",
        "MATCH (n) FOREACH (x IN [1] | SET n.y = x) RETURN n",
        "MATCH (n) RETURN n UNION MATCH (m) DETACH delete m RETURN m",
    ],
)
def test_writes_and_procedures_are_rejected(text: str) -> None:
    with pytest.raises(UnsafeQuery):
        check_read_only(text)


def test_keywords_inside_strings_are_not_writes() -> None:
    check_read_only("MATCH (n:Track) WHERE n.Name = 'Delete Me; CREATE' RETURN n.Name // SET in a comment")


def test_contract_check_names_unknown_labels_types_and_properties(chinook) -> None:  # type: ignore[no-untyped-def]
    check_against_contract("MATCH (t:Track)-[:ALBUM]->(a:Album) RETURN a.Title, t.Name", chinook.contract)
    with pytest.raises(UnsafeQuery, match="unknown label"):
        check_against_contract("MATCH (u:User) RETURN u.Name", chinook.contract)
    with pytest.raises(UnsafeQuery, match="relationship"):
        check_against_contract("MATCH (t:Track)-[:OWNS]->(a:Album) RETURN a.Title", chinook.contract)
    with pytest.raises(UnsafeQuery, match="propert"):
        check_against_contract("MATCH (t:Track) RETURN t.password", chinook.contract)
    labels, rels, props = referenced_names("MATCH (a:`Odd Label`)-[:`R T`|X]->(b) RETURN a.`p q`")
    assert labels == {"Odd Label"} and rels == {"R T", "X"} and "p q" in props
