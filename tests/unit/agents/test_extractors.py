from __future__ import annotations

from collections import Counter
from typing import Any

from esc.agents.extractors import PENDING, RECORD_KEY, covers, plan
from esc.agents.stores.weaviate_ids import object_id
from esc.contract.entities import with_entities
from esc.contract.model import Contract, HierarchyEdge
from esc.streams.events import RecordEnvelope
from tests.fakes.contracts import chinook_like, field, fk, source
from tests.unit.agents.conftest import Pack


def _contract(c: Contract, version: int = 4) -> Contract:
    out = with_entities(c)
    out.version = version
    return out


def env(source_: str, rid: str, payload: dict[str, Any], **kw: Any) -> RecordEnvelope:
    return RecordEnvelope(source=source_, record_id=rid, payload=payload, **kw)


# ---------------------------------------------------------------------------------------------- chinook pack


def _field_names(c: Contract, fids: list[str]) -> set[str]:
    out = set()
    for fid in fids:
        hit = c.field_by_id(fid)
        assert hit is not None
        out.add(hit[1].name)
    return out


def test_chinook_plan_counts_match_truth(chinook: Pack) -> None:
    c = chinook.contract
    p = plan(chinook.envelopes, c)
    assert not p.dead and not p.deferred and not p.retractions
    rows = Counter(e.provenance.source for e in p.entities)
    assert rows == Counter({s: spec["rows"] for s, spec in chinook.truth["sources"].items()})
    assert max(Counter((e.label, tuple(sorted(e.key.items()))) for e in p.entities).values()) == 1
    labels = {e.source: e.name for e in c.entities}
    edges = Counter((e.from_label, e.to_label, e.type) for e in p.edges)
    nested = {(h["child"], h["parent"]) for h in chinook.truth["hierarchy"]}
    expected = 0
    for t in chinook.truth["foreign_keys"]:
        src, dst = t["from"]["source"], t["to"]["source"]
        if (src, dst) in nested:
            continue  # the child->parent key of nesting is the nesting edge, not a second relationship
        (rel,) = [
            r
            for r in c.relationships
            if r.kind == "foreign_key"
            and (r.from_entity, r.to_entity) == (labels[src], labels[dst])
            and _field_names(c, r.from_fields) == set(t["from"]["fields"])
        ]
        assert edges[(rel.from_entity, rel.to_entity, rel.name)] == t["child_nonnull_rows"], t
        expected += t["child_nonnull_rows"]
    for h in chinook.truth["hierarchy"]:
        (rel,) = [r for r in c.relationships if r.kind == "nesting" and r.to_entity == labels[h["child"]]]
        assert rel.from_entity == labels[h["parent"]]
        assert (
            edges[(rel.from_entity, rel.to_entity, rel.name)] == chinook.truth["sources"][h["child"]]["rows"]
        )
        expected += chinook.truth["sources"][h["child"]]["rows"]
    assert chinook.truth["hierarchy"] and len(p.edges) == expected


def test_chinook_edges_point_at_existing_entity_keys(chinook: Pack) -> None:
    p = plan(chinook.envelopes, chinook.contract)
    nodes = {(e.label, tuple(sorted(e.key.items()))) for e in p.entities}
    for e in p.edges:
        assert (e.from_label, tuple(sorted(e.from_key.items()))) in nodes, e
        assert (e.to_label, tuple(sorted(e.to_key.items()))) in nodes, e
    versions = {e.contract_version for e in p.entities} | {e.contract_version for e in p.edges}
    assert versions | {t.contract_version for t in p.texts} == {chinook.contract.version}


def test_chinook_texts_are_deterministic_and_point_back(chinook: Pack) -> None:
    a = plan(chinook.envelopes, chinook.contract)
    b = plan(list(reversed(chinook.envelopes)), chinook.contract)
    assert a.texts and {t.object_id for t in a.texts} == {t.object_id for t in b.texts}
    for t in a.texts[:50]:
        assert t.entity_label and t.entity_key and t.provenance.record_id
        assert len(t.text) <= 8000


# ---------------------------------------------------------------------------------------------- hand-built


def test_csv_string_and_json_number_merge_to_the_same_node() -> None:
    c = _contract(chinook_like())
    p = plan(
        [
            env("Artist", "Artist.csv:row=1", {"ArtistId": "1", "Name": "AC/DC"}),
            env("Artist", "other:1", {"ArtistId": 1.0, "Name": "AC/DC"}),
        ],
        c,
    )
    assert [e.key for e in p.entities] == [{"ArtistId": 1}, {"ArtistId": 1}]
    assert p.keys == {("Artist", ("ArtistId",))}


def test_fk_edge_coerces_by_target_type_and_skips_nulls() -> None:
    c = _contract(chinook_like())
    p = plan(
        [
            env("Album", "a1", {"AlbumId": 1, "Title": "x", "ArtistId": "7"}),
            env("Album", "a2", {"AlbumId": 2, "Title": "y", "ArtistId": None}),
            env("Album", "a3", {"AlbumId": 3, "Title": "z"}),
        ],
        c,
    )
    assert len(p.entities) == 3
    assert [(e.type, e.from_key, e.to_label, e.to_key) for e in p.edges] == [
        ("ARTIST", {"AlbumId": 1}, "Artist", {"ArtistId": 7})
    ]


def test_properties_are_the_contract_attributes_only_coerced() -> None:
    c = _contract(chinook_like())
    p = plan([env("Invoice", "i1", {"InvoiceId": "5", "CustomerId": "2", "Total": "1.98", "surprise": 1})], c)
    assert p.entities[0].properties == {"InvoiceId": 5, "CustomerId": 2, "Total": 1.98}


def test_null_or_unreadable_key_is_a_dead_letter_with_reason() -> None:
    c = _contract(chinook_like())
    p = plan(
        [
            env("Artist", "r1", {"ArtistId": None, "Name": "x"}),
            env("Artist", "r2", {"Name": "y"}),
            env("Artist", "r3", {"ArtistId": "abc", "Name": "z"}),
            env("Artist", "r4", {"ArtistId": 4, "Name": "ok"}),
        ],
        c,
    )
    assert [d.reason for d in p.dead] == [
        "identity key field ArtistId is null",
        "identity key field ArtistId is null",
        "identity key field ArtistId: cannot read 'abc' as int",
    ]
    assert all(
        d.stage == "extractor" and d.source == "Artist" and '"r1"' in p.dead[0].original for d in p.dead
    )
    assert [e.key for e in p.entities] == [{"ArtistId": 4}]


def test_uncovered_and_pending_sources_are_deferred_not_written() -> None:
    base = chinook_like()
    c = _contract(base)
    p = plan([env("Unknown", "u1", {"x": 1})], c)
    assert [e.record_id for e in p.deferred] == ["u1"] and not p.entities
    pending = base.model_copy(deep=True)
    pending.sources["Notes"] = source("Notes", "csv", [field("Notes", "NoteId")], records=3)
    pending.sources["Notes"].key_evidence = {PENDING: "waiting for the end of Notes.csv"}
    c2 = _contract(pending)
    assert not covers(c2, "Notes")
    p2 = plan([env("Notes", "n1", {"NoteId": 1})], c2)
    assert len(p2.deferred) == 1 and not p2.entities
    settled = base.model_copy(deep=True)
    settled.sources["Notes"] = source("Notes", "csv", [field("Notes", "NoteId")], records=3)
    c3 = _contract(settled)
    p3 = plan([env("Notes", "n1", {"NoteId": 1})], c3)
    assert [e.key for e in p3.entities] == [{RECORD_KEY: "n1"}]  # settled keyless: keyed by record id


def test_nesting_edge_from_parent_link_and_from_fields_for_pushed_children() -> None:
    c = _contract(chinook_like())
    line = "Invoice.InvoiceLine"
    linked = env(
        line,
        "Invoice.json:$[0].InvoiceLine[0]",
        {"InvoiceLineId": 10, "InvoiceId": 1, "TrackId": 3},
        parent={
            "source": "Invoice",
            "record_id": "Invoice.json:$[0]",
            "values": {"InvoiceId": "1", "Total": 2},
        },
    )
    pushed = env(line, "push-1", {"InvoiceLineId": 11, "InvoiceId": "2", "TrackId": 3})
    p = plan([linked, pushed], c)
    nest = [e for e in p.edges if e.from_label == "Invoice"]
    assert [(e.type, e.from_key, e.to_key) for e in nest] == [
        ("HAS_INVOICE_LINE", {"InvoiceId": 1}, {"InvoiceLineId": 10}),
        ("HAS_INVOICE_LINE", {"InvoiceId": 2}, {"InvoiceLineId": 11}),
    ]


def test_keyless_parent_is_found_by_its_record_id() -> None:
    c = Contract(
        sources={
            "doc": source("doc", "json", [field("doc", "title", "string", uniqueness=0.5)]),
            "doc.items": source(
                "doc.items",
                "json",
                [field("doc.items", "x", path="items[*].x", uniqueness=0.5)],
                parent="doc",
            ),
        },
    )
    c.hierarchy = [HierarchyEdge(parent="doc", child="doc.items", path="$[*].items")]
    c = _contract(c)
    p = plan(
        [
            env("doc", "d.json:$[0]", {"title": "a"}),
            env(
                "doc.items",
                "d.json:$[0].items[0]",
                {"x": 1},
                parent={"source": "doc", "record_id": "d.json:$[0]"},
            ),
        ],
        c,
    )
    assert len(p.entities) == 2
    (edge,) = p.edges
    assert edge.from_key == {RECORD_KEY: "d.json:$[0]"} and edge.to_key == {
        RECORD_KEY: "d.json:$[0].items[0]"
    }


def test_long_text_is_chunked_with_deterministic_ids() -> None:
    c = _contract(chinook_like())
    text = ("A paragraph about the customer. " * 40 + "\n\n") * 20  # ~26k chars
    p = plan([env("Customer", "Customer.csv:row=1", {"CustomerId": 1, "Notes": text, "Email": "a@b.co"})], c)
    assert len(p.texts) >= 4
    assert [t.chunk_index for t in p.texts] == list(range(len(p.texts)))
    assert all(len(t.text) <= 8000 for t in p.texts)
    assert p.texts[1].object_id == object_id("Customer", "Customer.csv:row=1", "Notes", "1")
    assert p.texts[0].entity_key == '{"CustomerId": 1}' and p.texts[0].entity_label == "Customer"
    short = plan([env("Customer", "c2", {"CustomerId": 2, "Notes": "short note"})], c)
    assert short.texts == []  # a short value of a text-typed field stays graph-only (no vector)
    prose = "Prefers email. Asked twice about invoices last spring."
    two = plan([env("Customer", "c3", {"CustomerId": 3, "Notes": prose + " Very loyal."})], c)
    assert len(two.texts) == 1  # multi-sentence prose is vectorised


def test_documents_are_chunked() -> None:
    c = _contract(
        Contract(
            sources={
                "notes": source(
                    "notes", "markdown", [field("notes", "text", "text"), field("notes", "title", "string")]
                )
            }
        )
    )
    p = plan([env("notes", "notes.md", {"text": "# Title\n\n" + "word " * 3000, "title": "Title"})], c)
    assert len(p.texts) >= 2 and p.entities[0].key == {RECORD_KEY: "notes.md"}
    assert all(len(t.text) <= 8000 for t in p.texts) and sum(len(t.text) for t in p.texts) >= 15000


def test_deleted_envelopes_become_retractions() -> None:
    c = _contract(chinook_like())
    p = plan(
        [
            env("Artist", "Artist.csv:row=1", {}, deleted=True, location={"file": "Artist.csv", "row": 1}),
            RecordEnvelope(source="Artist", payload={}, deleted=True, location={"file": "Artist.csv"}),
            RecordEnvelope(source="Artist", payload={}, deleted=True),
        ],
        c,
    )
    assert [r.record_id for r in p.retractions] == ["Artist.csv:row=1"]
    assert p.retractions[0].location == "Artist.csv:row=1" and p.retractions[0].file == "Artist.csv"
    assert [(f.source, f.file) for f in p.file_retractions] == [("Artist", "Artist.csv")]
    assert len(p.dead) == 1 and "retraction" in p.dead[0].reason
    assert not p.entities


def test_fk_to_non_key_field_writes_no_edge() -> None:
    base = chinook_like()
    base.sources["Album"].fields.append(field("Album", "ArtistName", "string", uniqueness=0.5))
    base.foreign_keys.append(fk("Album", ["ArtistName"], "Artist", ["Name"]))
    c = _contract(base)
    p = plan([env("Album", "a1", {"AlbumId": 1, "ArtistId": 2, "ArtistName": "x"})], c)
    assert [e.to_key for e in p.edges] == [{"ArtistId": 2}]
