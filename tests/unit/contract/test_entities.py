from __future__ import annotations

import pytest

from esc.contract.entities import (
    assign_entity_names,
    derive,
    entity_name,
    fk_relationship_name,
    nesting_relationship_name,
    with_entities,
)
from esc.contract.model import Contract
from tests.fakes.contracts import chinook_like, field, fk, source


@pytest.mark.parametrize(
    ("source_name", "label"),
    [
        ("Invoice.InvoiceLine", "InvoiceLine"),
        ("film_actor", "FilmActor"),
        ("Customers", "Customer"),
        ("Order Details", "OrderDetail"),
        ("Categories", "Category"),
        ("Addresses", "Address"),
        ("status", "Status"),
        ("CUSTOMER_ORDERS", "CustomerOrder"),
        ("people", "Person"),
        ("orders.lines", "Line"),
        ("media-types", "MediaType"),
        ("...", "Entity"),
    ],
)
def test_entity_name(source_name: str, label: str) -> None:
    assert entity_name(source_name) == label


@pytest.mark.parametrize(
    ("fields", "name"),
    [
        (["AlbumId"], "ALBUM"),
        (["SupportRepId"], "SUPPORT_REP"),
        (["ReportsTo"], "REPORTS_TO"),
        (["customer_id"], "CUSTOMER"),
        (["ParentID"], "PARENT"),
        (["Paid"], "PAID"),
        (["Id"], "PLAYLIST_TRACK"),
        (["PlaylistId", "TrackId"], "PLAYLIST_TRACK"),
    ],
)
def test_fk_relationship_name(fields: list[str], name: str) -> None:
    assert fk_relationship_name(fields, "PlaylistTrack") == name


def test_nesting_name() -> None:
    assert nesting_relationship_name("InvoiceLine") == "HAS_INVOICE_LINE"


def test_collisions_are_disambiguated_deterministically() -> None:
    names = assign_entity_names(["b.items", "items", "a.items", "Items"])
    assert len(set(names.values())) == 4
    assert names["Items"] == "Item"  # top-level sources choose first, then by name
    assert names["a.items"] == "AItem"
    assert names == assign_entity_names(["a.items", "Items", "items", "b.items"])


def test_pinned_names_never_change() -> None:
    names = assign_entity_names(["a.items", "items"], pinned={"a.items": "Item"})
    assert names["a.items"] == "Item"
    assert names["items"] != "Item"


def test_derive_chinook_like() -> None:
    c = chinook_like()
    entities, rels = derive(c)
    by = {e.name: e for e in entities}
    assert set(by) == {"Artist", "Album", "Employee", "Customer", "Invoice", "InvoiceLine"}
    customer = by["Customer"]
    ids = {f.name: f.id for f in c.sources["Customer"].fields}
    assert customer.key == [ids["CustomerId"]]
    assert [a.field_id for a in customer.attributes] == [f.id for f in c.sources["Customer"].fields]
    assert customer.descriptive is True  # Notes is long text
    assert by["Album"].descriptive is False
    got = {(r.from_entity, r.name, r.to_entity, r.kind) for r in rels}
    assert got == {
        ("Album", "ARTIST", "Artist", "foreign_key"),
        ("Customer", "SUPPORT_REP", "Employee", "foreign_key"),
        ("Employee", "REPORTS_TO", "Employee", "foreign_key"),
        ("Invoice", "CUSTOMER", "Customer", "foreign_key"),
        ("Invoice", "HAS_INVOICE_LINE", "InvoiceLine", "nesting"),
    }  # the line -> invoice FK is the nesting edge, not a second relationship
    support = next(r for r in rels if r.name == "SUPPORT_REP")
    assert support.from_fields == [ids["SupportRepId"]]
    assert support.to_fields == [c.sources["Employee"].field("EmployeeId").id]  # type: ignore[union-attr]
    assert support.confidence == 0.97


def test_every_reference_is_a_catalog_id() -> None:
    c = with_entities(chinook_like())
    catalog = {f.id for s in c.sources.values() for f in s.fields}
    for e in c.entities:
        assert set(e.key) <= catalog
        assert {a.field_id for a in e.attributes} <= catalog
    for r in c.relationships:
        assert set(r.from_fields) | set(r.to_fields) <= catalog
        assert c.entity(r.from_entity) is not None and c.entity(r.to_entity) is not None


def test_derive_is_deterministic_regardless_of_input_order() -> None:
    a = chinook_like()
    b = chinook_like()
    b.sources = dict(reversed(list(b.sources.items())))
    b.foreign_keys = list(reversed(b.foreign_keys))
    assert derive(a) == derive(b)


def test_same_name_between_same_entities_gets_suffix() -> None:
    c = Contract(
        sources={
            "t": source("t", "csv", [field("t", "id"), field("t", "owner"), field("t", "owner_id")], ["id"]),
            "u": source("u", "csv", [field("u", "id")], ["id"]),
        },
        foreign_keys=[fk("t", ["owner"], "u", ["id"]), fk("t", ["owner_id"], "u", ["id"])],
    )
    _, rels = derive(c)
    assert sorted(r.name for r in rels) == ["OWNER", "OWNER_2"]


def test_fk_to_unknown_field_is_skipped_not_crashing() -> None:
    c = chinook_like()
    c.foreign_keys.append(fk("Album", ["Nope"], "Artist", ["ArtistId"]))
    c.foreign_keys.append(fk("Ghost", ["x"], "Artist", ["ArtistId"]))
    _, rels = derive(c)
    assert len(rels) == 5


def test_with_entities_is_idempotent_and_keeps_existing() -> None:
    once = with_entities(chinook_like())
    twice = with_entities(once)
    assert once == twice
    renamed = once.model_copy(deep=True)
    renamed.entities[0].name = "Record"  # a label chosen earlier stays
    again = with_entities(renamed)
    assert [e.name for e in again.entities] == [e.name for e in renamed.entities]
