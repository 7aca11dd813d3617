"""GraphStore behaviours every backend shares: identity-key upserts, provenance, stubs, retraction, odd names."""

from __future__ import annotations

from typing import Any

import pytest

from esc.agents.stores.base import GraphStore
from esc.agents.types import EdgeWrite
from tests.conformance.conftest import Names
from tests.conformance.helpers import cite, cites, entity, lookup, neighbours, rec


def test_upsert_counts_and_cites_source_records(graph_store: GraphStore, names: Names) -> None:
    person, src = names.label("Person"), names.source("people")
    graph_store.ensure_entity_key(person, ["id"])
    rows = [
        entity(person, {"id": 1}, {"name": "Ada Lovelace", "born": 1815}, src, 1),
        entity(person, {"id": 2}, {"name": "Alan Turing", "born": 1912}, src, 2),
        entity(person, {"id": 3}, {"name": "Grace Hopper", "born": 1906}, src, 3),
    ]
    assert graph_store.upsert_entities(rows) == 3
    assert graph_store.count(person) == 3
    found = lookup(graph_store, person, "name", "Alan Turing", ["id", "born"])
    assert [r.values for r in found] == [{"id": 2, "born": 1912}]
    assert cites(found) == {cite(src, 2)}


def test_reupsert_same_key_merges_instead_of_duplicating(graph_store: GraphStore, names: Names) -> None:
    person, src, other = names.label("Person"), names.source("people"), names.source("crm")
    graph_store.upsert_entities([entity(person, {"id": 7}, {"name": "Ada", "city": "London"}, src, 7)])
    graph_store.upsert_entities([entity(person, {"id": 7}, {"name": "Ada", "city": "London"}, src, 7)])
    assert graph_store.count(person) == 1
    # a second record about the same entity adds a property and a second source record, keeps the rest
    graph_store.upsert_entities(
        [entity(person, {"id": 7}, {"email": "ada@example.org", "city": "Paris"}, other, 70)]
    )
    assert graph_store.count(person) == 1
    found = lookup(graph_store, person, "id", 7, ["name", "city", "email"])
    assert [r.values for r in found] == [{"name": "Ada", "city": "Paris", "email": "ada@example.org"}]
    assert cites(found) == {cite(src, 7), cite(other, 70)}


def test_float_and_int_keys_are_the_same_identity(graph_store: GraphStore, names: Names) -> None:
    item, src = names.label("Item"), names.source("items")
    graph_store.upsert_entities([entity(item, {"id": 5}, {"v": "a"}, src, 1)])
    graph_store.upsert_entities([entity(item, {"id": 5.0}, {"v": "b"}, src, 2)])
    assert graph_store.count(item) == 1


def test_composite_key(graph_store: GraphStore, names: Names) -> None:
    line, src = names.label("Line"), names.source("lines")
    graph_store.ensure_entity_key(line, ["order", "n"])
    graph_store.upsert_entities(
        [
            entity(line, {"order": 1, "n": 1}, {"qty": 2}, src, 1),
            entity(line, {"order": 1, "n": 2}, {"qty": 3}, src, 2),
            entity(line, {"order": 2, "n": 1}, {"qty": 4}, src, 3),
            entity(line, {"n": 2, "order": 1}, {"qty": 5}, src, 4),  # same key, other order of names
        ]
    )
    assert graph_store.count(line) == 3
    assert [r.values for r in lookup(graph_store, line, "qty", 5, ["order", "n"])] == [{"order": 1, "n": 2}]


def test_edge_to_unseen_target_is_a_stub_its_record_fills(graph_store: GraphStore, names: Names) -> None:
    track, album, src, asrc = (
        names.label("Track"),
        names.label("Album"),
        names.source("tracks"),
        names.source("albums"),
    )
    graph_store.upsert_entities([entity(track, {"id": 1}, {"name": "Hells Bells"}, src, 1)])
    edge = EdgeWrite(
        type="ON_ALBUM", from_label=track, from_key={"id": 1}, to_label=album, to_key={"aid": 10}
    )
    assert graph_store.upsert_edges([edge]) > 0
    assert graph_store.count(album) == 1  # the stub
    stub = neighbours(graph_store, track, {"id": 1}, "ON_ALBUM", "out", album, "aid")
    assert [r.values for r in stub] == [{"aid": 10}]
    assert cites(stub) == set()  # a stub has no source record yet
    graph_store.upsert_entities([entity(album, {"aid": 10}, {"title": "Back in Black"}, asrc, 10)])
    assert graph_store.count(album) == 1  # filled, not duplicated
    filled = neighbours(graph_store, track, {"id": 1}, "ON_ALBUM", "out", album, "title")
    assert [r.values for r in filled] == [{"title": "Back in Black"}]
    assert cites(filled) == {cite(asrc, 10)}


def test_edge_before_both_endpoints_makes_stubs_their_records_fill(graph_store: GraphStore, names: Names) -> None:
    """A nested child's edge from its parent can be written before the parent's own record (another partition)."""
    track, album, src = names.label("Track"), names.label("Album"), names.source("tracks")
    edge = EdgeWrite(
        type="ON_ALBUM", from_label=track, from_key={"id": 99}, to_label=album, to_key={"aid": 1}
    )
    graph_store.upsert_edges([edge])
    assert graph_store.count(album) == 1 and graph_store.count(track) == 1  # both stubs, linked
    graph_store.upsert_entities([entity(track, {"id": 99}, {"name": "late"}, src, 99)])
    graph_store.upsert_entities([entity(album, {"aid": 1}, {"title": "A"}, src, 1)])
    assert graph_store.count(album) == 1 and graph_store.count(track) == 1  # filled, not duplicated
    linked = neighbours(graph_store, track, {"id": 99}, "ON_ALBUM", "out", album, "title")
    assert [r.values for r in linked] == [{"title": "A"}]


def test_edges_are_idempotent(graph_store: GraphStore, names: Names) -> None:
    track, album, src = names.label("Track"), names.label("Album"), names.source("tracks")
    graph_store.upsert_entities([entity(track, {"id": 1}, {"name": "x"}, src, 1)])
    graph_store.upsert_entities([entity(album, {"aid": 1}, {"title": "A"}, src, 2)])
    edge = EdgeWrite(type="ON_ALBUM", from_label=track, from_key={"id": 1}, to_label=album, to_key={"aid": 1})
    graph_store.upsert_edges([edge])
    graph_store.upsert_edges([edge, edge])
    rows = neighbours(graph_store, track, {"id": 1}, "ON_ALBUM", "out", album, "title", distinct=False)
    assert [r.values for r in rows] == [{"title": "A"}]


def test_retract_removes_orphans_and_keeps_supported_entities(graph_store: GraphStore, names: Names) -> None:
    person, city, src, crm = (
        names.label("Person"),
        names.label("City"),
        names.source("people"),
        names.source("crm"),
    )
    graph_store.upsert_entities(
        [
            entity(person, {"id": 1}, {"name": "Only in r1"}, src, 1),
            entity(person, {"id": 2}, {"name": "In r1 and crm"}, src, 1),
            entity(person, {"id": 3}, {"name": "Untouched"}, src, 3),
        ]
    )
    graph_store.upsert_entities([entity(person, {"id": 2}, {"vip": True}, crm, 9)])
    graph_store.upsert_entities([entity(city, {"name": "Oslo"}, {}, src, 5)])
    graph_store.upsert_edges(
        [
            EdgeWrite(
                type="LIVES_IN", from_label=person, from_key={"id": i}, to_label=city, to_key={"name": "Oslo"}
            )
            for i in (1, 2)
        ]
    )
    assert graph_store.retract_source_records([rec(src, 1)]) == 1
    assert graph_store.count(person) == 2
    assert lookup(graph_store, person, "id", 1, ["name"]) == []
    kept = lookup(graph_store, person, "id", 2, ["name", "vip"])
    assert [r.values for r in kept] == [{"name": "In r1 and crm", "vip": True}]
    assert cites(kept) == {cite(crm, 9)}
    # the removed entity's edges are gone with it; the survivor's edge stays
    plan_rows = neighbours(graph_store, city, {"name": "Oslo"}, "LIVES_IN", "in", person, "id")
    assert sorted(r.values["id"] for r in plan_rows) == [2]
    assert graph_store.retract_source_records([rec(src, 1)]) == 0  # already gone
    assert graph_store.retract_source_records([]) == 0


@pytest.mark.parametrize(
    "value",
    [
        "x' OR '1'='1",
        'Robert"); DROP TABLE entities;--',
        "`) DETACH DELETE n //",
        "emoji 🎵 and ünïcödé",
        "",
    ],
)
def test_values_are_data_never_syntax(graph_store: GraphStore, names: Names, value: str) -> None:
    label, src = names.label("Odd"), names.source("odd")
    graph_store.upsert_entities([entity(label, {"id": value or "empty"}, {"text": value}, src, 1)])
    found = lookup(graph_store, label, "text", value, ["id", "text"])
    assert [r.values for r in found] == [{"id": value or "empty", "text": value}]
    assert graph_store.count(label) == 1


def test_identifiers_from_data_are_escaped(graph_store: GraphStore, names: Names) -> None:
    label = names.label("We`ird \"Label\" 'x'")
    src = names.source("odd source")
    prop = 'col`with "quotes" and /slash~'
    graph_store.upsert_entities([entity(label, {"key id": 1}, {prop: "v", "$.x": 2}, src, 1)])
    assert graph_store.count(label) == 1
    found = lookup(graph_store, label, prop, "v", ["key id", "$.x"])
    assert [r.values for r in found] == [{"key id": 1, "$.x": 2}]


def test_property_values_round_trip_with_types(graph_store: GraphStore, names: Names) -> None:
    label, src = names.label("Typed"), names.source("typed")
    props: dict[str, Any] = {
        "i": 42,
        "f": 2.5,
        "b": False,
        "s": "text",
        "tags": ["a", "b"],
        "nums": [1, 2, 3],
        "nested": {"k": [1, {"z": None}]},
        "missing": None,
    }
    graph_store.upsert_entities([entity(label, {"id": 1}, props, src, 1)])
    found = lookup(graph_store, label, "id", 1, ["i", "f", "b", "s", "tags", "nums", "nested", "missing"])
    assert len(found) == 1
    values = found[0].values
    assert values == {
        "i": 42,
        "f": 2.5,
        "b": False,
        "s": "text",
        "tags": ["a", "b"],
        "nums": [1, 2, 3],
        "nested": '{"k": [1, {"z": null}]}',  # nested values are stored as JSON text (to_property)
        "missing": None,
    }
    assert type(values["i"]) is int and type(values["f"]) is float


def test_typed_comparisons(graph_store: GraphStore, names: Names) -> None:
    label, src = names.label("Num"), names.source("num")
    graph_store.upsert_entities(
        [
            entity(label, {"id": 1}, {"v": 1}, src, 1),
            entity(label, {"id": 2}, {"v": "1"}, src, 2),
            entity(label, {"id": 3}, {"v": 1.0}, src, 3),
            entity(label, {"id": 4}, {"v": True}, src, 4),
        ]
    )
    assert sorted(r.values["id"] for r in lookup(graph_store, label, "v", 1, ["id"])) == [1, 3]
    assert sorted(r.values["id"] for r in lookup(graph_store, label, "v", "1", ["id"])) == [2]
    assert sorted(r.values["id"] for r in lookup(graph_store, label, "v", True, ["id"])) == [4]
    assert sorted(r.values["id"] for r in lookup(graph_store, label, "v", 0.5, ["id"], op="gt")) == [1, 3]


def test_many_new_types_in_one_batch_each_land_with_provenance_and_merge_on_a_second_batch(
    graph_store: GraphStore, names: Names
) -> None:
    """A batch of 23 new small entity types (the Neo4j store writes new types' first rows a few per statement),
    then a second batch of the same types: every node once, with its source record, odd label names included."""
    labels = [names.label(f"Kind{i}" if i % 5 else f"Kind {i}`x") for i in range(23)]
    src = names.source("kinds")
    batch = [entity(lb, {"id": j}, {"v": f"{i}-{j}"}, src, i * 10 + j) for i, lb in enumerate(labels) for j in range(3)]
    assert graph_store.upsert_entities(batch) == 69
    again = [entity(lb, {"id": j}, {"w": j}, src, i * 10 + j) for i, lb in enumerate(labels) for j in range(2, 4)]
    assert graph_store.upsert_entities(again) == 46
    assert [graph_store.count(lb) for lb in labels] == [4] * 23
    found = lookup(graph_store, labels[5], "id", 2, ["v", "w"])
    assert [r.values for r in found] == [{"v": "5-2", "w": 2}] and cites(found) == {cite(src, 52)}
