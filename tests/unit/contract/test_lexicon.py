"""esc.contract.lexicon: the phrases a user may say for a column, a table or a foreign key."""

from __future__ import annotations

from esc.contract.lexicon import (
    lemma,
    relationship_phrases,
    surface_forms,
)
from esc.contract.lexicon_data import ROLE_PHRASES, SELF_ROLE_PHRASES


def phrases(pairs: list[tuple[str, float]]) -> dict[str, float]:
    return dict(pairs)


def test_surface_forms_of_a_column_on_its_table() -> None:
    got = phrases(surface_forms("CustomerName", owner="Customer"))
    assert got["customer name"] == 1.0
    assert got["name"] == 0.9
    assert "customer names" in got and got["customer names"] < 1.0


def test_surface_forms_expand_and_inflect() -> None:
    got = phrases(surface_forms("acct_bal"))
    assert got["acct bal"] == 1.0
    assert got["account balance"] == 0.95
    assert "account balances" in got
    got = phrases(surface_forms("UnitsInStock"))
    assert got["units in stock"] == 1.0 and "unit in stock" in got
    assert phrases(surface_forms("tailnum"))["tail number"] == 0.95
    assert "date of birth" in phrases(surface_forms("DOB"))


def test_surface_forms_rank_ambiguous_readings_and_skip_verb_plurals() -> None:
    got = phrases(surface_forms("st_name"))
    assert got["street name"] == 0.95 and got["state name"] == 0.92
    got = phrases(surface_forms("Discontinued"))
    assert got == {"discontinued": 1.0, "discontinue": 0.95}


def test_surface_forms_strip_shorthand_and_initials_prefixes() -> None:
    got = phrases(surface_forms("cust_name", owner="Customer"))
    assert got["customer name"] == 0.95 and got["name"] == 0.9
    got = phrases(surface_forms("c_name", owner="customer"))
    assert got["name"] == 1.0 and got["c name"] == 0.8
    got = phrases(surface_forms("o_orderdate", owner="orders"))
    assert got["orderdate"] == 1.0 and got["order date"] == 0.95 and got["date"] == 0.9
    got = phrases(surface_forms("ps_supplycost", owner="partsupp"))
    assert got["supply cost"] == 0.95
    got = phrases(surface_forms("FirstName", owner="Employee"))
    assert "name" not in got and got["first name"] == 1.0


def test_surface_forms_shape() -> None:
    assert surface_forms("") == []
    for name, owner in [("CustomerId", "Customer"), ("l_extendedprice", "lineitem"), ("dep_delay", None)]:
        got = surface_forms(name, owner=owner)
        scores = [s for _, s in got]
        assert scores == sorted(scores, reverse=True)
        assert all(0.0 < s <= 1.0 for s in scores)
        assert len({p for p, _ in got}) == len(got)
        assert all(p == p.lower() and "  " not in p for p, _ in got)


# ---------------------------------------------------------------- relationship_phrases


def test_self_reference_gets_hierarchy_words() -> None:
    got = phrases(relationship_phrases("ReportsTo", ["ReportsTo"], "Employee", "Employee"))
    assert got["reports to"] == 1.0
    for p in ["manager", "boss", "supervisor", "works for", "manager of", "reports", "report to"]:
        assert p in got, p
    other = phrases(relationship_phrases("ReportsTo", ["ReportsTo"], "Employee", "Department"))
    assert "reports to" in other and "manager of" not in other and "subordinate" not in other


def test_fk_column_stem() -> None:
    got = phrases(relationship_phrases("SUPPORT_REP", ["SupportRepId"], "Customer", "Employee"))
    for p in ["support rep", "support representative", "rep"]:
        assert p in got, p
    got = phrases(relationship_phrases("MANAGER", ["manager_staff_id"], "store", "staff"))
    assert "manager" in got and "manager staff" in got
    assert got["manager"] >= got["manager staff"]


def test_generic_fk_names_its_target() -> None:
    got = phrases(relationship_phrases("HAS_CUSTOMER", ["CustomerId"], "Invoice", "Customer"))
    assert "customer" in got and got["has customer"] == 1.0
    got = phrases(relationship_phrases("", ["o_custkey"], "orders", "customer"))
    assert "customer" in got
    got = phrases(relationship_phrases("", ["id"], "a", "Customer"))
    assert "customer" in got


def test_role_table() -> None:
    got = phrases(relationship_phrases("CREATED_BY", ["created_by"], "ticket", "user"))
    assert {"created by", "creator", "author"} <= set(got) and "by" not in got
    got = phrases(relationship_phrases("PARENT", ["parent_id"], "category", "category"))
    assert {"parent", "belongs to"} <= set(got)
    for key in [*ROLE_PHRASES, *SELF_ROLE_PHRASES]:
        assert key == " ".join(lemma(w) for w in key.split()), key


def test_relationship_phrases_shape() -> None:
    assert relationship_phrases("", [], "a", "b") == []
    got = relationship_phrases("SOLD_BY", ["SalesRepId", "sold_by"], "Order", "Employee")
    scores = [s for _, s in got]
    assert scores == sorted(scores, reverse=True) and all(0.0 < s <= 1.0 for s in scores)
    assert {"sold by", "sales rep", "salesperson"} <= {p for p, _ in got}
