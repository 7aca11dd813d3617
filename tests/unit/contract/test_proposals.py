from __future__ import annotations

from typing import Any

import pytest

from esc.contract.evolve import check_monotonic, evolve
from esc.contract.model import Contract
from esc.contract.proposals import ProposalFormatError, apply_proposal, parse_proposal
from tests.fakes.contracts import chinook_like


def base() -> Contract:
    c, _ = evolve(None, chinook_like())
    return c


def fid(c: Contract, source: str, name: str) -> str:
    f = c.sources[source].field(name)
    assert f is not None
    return f.id


def catalog_ids(c: Contract) -> set[str]:
    return {f.id for s in c.sources.values() for f in s.fields}


def assert_closed_world(c: Contract) -> None:
    ids = catalog_ids(c)
    for e in c.entities:
        assert set(e.key) <= ids and {a.field_id for a in e.attributes} <= ids
    for r in c.relationships:
        assert set(r.from_fields) <= ids and set(r.to_fields) <= ids


def apply(c: Contract, data: dict[str, Any]):  # type: ignore[no-untyped-def]
    proposal, problems = parse_proposal(data)
    assert problems == []
    return apply_proposal(c, proposal)


def test_hallucinated_field_is_dropped_and_reported() -> None:
    c = base()
    out, report = apply(
        c,
        {
            "entities": [
                {
                    "name": "Contact",
                    "source": "Customer",
                    "anchor": [fid(c, "Customer", "Email")],
                    "attributes": [
                        {"field_id": fid(c, "Customer", "Email"), "name": "email"},
                        {"field_id": "f_deadbeefdeadbeef", "name": "phone"},
                    ],
                }
            ]
        },
    )
    assert report.field_validity_received == pytest.approx(2 / 3)
    assert report.field_validity == 1.0
    dropped = [r for r in report.references if r.status == "dropped"]
    assert [(r.given, r.reason) for r in dropped] == [("f_deadbeefdeadbeef", "not in the field catalog")]
    contact = out.entity("Contact")
    assert contact is not None and [a.name for a in contact.attributes] == ["Email"]
    assert contact.key == [fid(c, "Customer", "Email")]
    assert "f_deadbeefdeadbeef" in str(report.summary()["dropped"])
    assert_closed_world(out)


def test_names_and_paths_are_repaired_to_ids() -> None:
    c = base()
    out, report = apply(
        c,
        {
            "entities": [
                {
                    "name": "line item",
                    "attributes": ["Invoice.InvoiceLine.Quantity", "InvoiceLine[*].InvoiceId"],
                }
            ]
        },
    )
    assert [r.status for r in report.references] == ["repaired", "repaired"]
    assert report.field_validity_received == 0.0 and report.field_validity == 1.0
    e = out.entity("LineItem")
    assert e is not None and e.source == "Invoice.InvoiceLine"
    assert [a.field_id for a in e.attributes] == [
        fid(c, "Invoice.InvoiceLine", "Quantity"),
        fid(c, "Invoice.InvoiceLine", "InvoiceId"),
    ]


def test_field_of_another_source_is_dropped() -> None:
    c = base()
    out, report = apply(
        c,
        {
            "entities": [
                {
                    "name": "Contact",
                    "source": "Customer",
                    "attributes": [fid(c, "Customer", "Email"), fid(c, "Artist", "Name")],
                }
            ]
        },
    )
    assert [r.status for r in report.references] == ["valid", "dropped"]
    assert "not of Customer" in report.references[1].reason
    assert [a.name for a in out.entity("Contact").attributes] == ["Email"]  # type: ignore[union-attr]


def test_proposals_only_add_to_existing_entities() -> None:
    c = base()
    other_key = fid(c, "Customer", "Email")
    out, report = apply(
        c,
        {
            "entities": [
                {"name": "Customer", "anchor": [other_key], "attributes": [fid(c, "Customer", "Email")]}
            ]
        },
    )
    customer = out.entity("Customer")
    assert customer is not None
    assert customer.key == c.entity("Customer").key  # type: ignore[union-attr]
    assert [a.field_id for a in customer.attributes] == [a.field_id for a in c.entity("Customer").attributes]  # type: ignore[union-attr]
    assert report.ignored and "key change ignored" in report.ignored[0]
    assert check_monotonic(c, out) == []


def test_entity_with_nothing_valid_is_rejected() -> None:
    c = base()
    out, report = apply(c, {"entities": [{"name": "Ghost", "attributes": ["f_0000000000000000", "Nope"]}]})
    assert out.entity("Ghost") is None
    assert report.rejected == ["entity Ghost: references no field of any source"]
    assert report.field_validity_received == 0.0
    assert out == c


def test_relationship_is_validated_and_added() -> None:
    c = base()
    out, report = apply(
        c,
        {
            "relationships": [
                {
                    "name": "sold to",
                    "from": "InvoiceLine",
                    "to": "Customer",
                    "from_fields": ["InvoiceId"],
                    "to_fields": [fid(c, "Customer", "CustomerId")],
                    "confidence": 3,
                },
                {"name": "BOGUS", "from_entity": "Album", "to_entity": "Unicorn", "from_fields": ["AlbumId"]},
                {
                    "name": "NOLINK",
                    "from_entity": "Album",
                    "to_entity": "Artist",
                    "from_fields": ["f_zzz"],
                    "to_fields": ["ArtistId"],
                },
                {
                    "name": "ARTIST",
                    "from_entity": "Album",
                    "to_entity": "Artist",
                    "from_fields": ["ArtistId"],
                    "to_fields": ["ArtistId"],
                },
            ]
        },
    )
    rel = next(r for r in out.relationships if r.name == "SOLD_TO")
    assert (rel.from_entity, rel.to_entity, rel.confidence) == ("InvoiceLine", "Customer", 1.0)
    assert rel.from_fields == [fid(c, "Invoice.InvoiceLine", "InvoiceId")]
    assert report.added_relationships == ["InvoiceLine-[SOLD_TO]->Customer"]
    assert any("Unicorn" in r for r in report.rejected)
    assert any("NOLINK" in r and "no valid pair" in r for r in report.rejected)
    assert any("already in the contract" in i for i in report.ignored)
    assert len(out.relationships) == len(c.relationships) + 1
    assert_closed_world(out)


def test_malformed_items_are_skipped_and_reported() -> None:
    proposal, problems = parse_proposal(
        {"entities": [{"attributes": []}, {"name": "Ok", "attributes": ["x"]}], "relationships": "nope"}
    )
    assert [e.name for e in proposal.entities] == ["Ok"]
    assert len(problems) == 2
    with pytest.raises(ProposalFormatError):
        parse_proposal(["not", "an", "object"])


def test_applied_proposal_versions_through_evolve() -> None:
    c = base()
    out, _ = apply(c, {"entities": [{"name": "Contact", "attributes": ["Customer.Email"]}]})
    c2, diff = evolve(c, out, reason="llm")
    assert diff is not None and c2.version == c.version + 1
    assert [(i.kind, i.target) for i in diff.added] == [("entity", "Contact")]
