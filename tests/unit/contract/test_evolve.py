from __future__ import annotations

from typing import get_args

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from esc.contract.entities import with_entities
from esc.contract.evolve import check_monotonic, content_hash, evolve, merge
from esc.contract.model import Contract, HierarchyEdge
from esc.contract.serde import dump_yaml
from esc.contract.typing import DIFF_KINDS, PhysicalType, widen
from tests.fakes.contracts import chinook_like, field, fk, source

TYPES: tuple[PhysicalType, ...] = get_args(PhysicalType)
SOURCES = ("a", "b", "Orders", "Orders.lines")
FIELDS = ("id", "x", "y", "ref")


@st.composite
def observations(draw: st.DrawFn) -> Contract:
    """Random observed contracts over a small vocabulary so that successive draws overlap."""
    names = draw(st.lists(st.sampled_from(SOURCES), min_size=1, max_size=4, unique=True))
    sources = {}
    for name in names:
        fnames = draw(st.lists(st.sampled_from(FIELDS), min_size=1, max_size=4, unique=True))
        fields = [
            field(
                name,
                f,
                draw(st.sampled_from(TYPES)),
                null_rate=draw(st.floats(0, 1)),
                distinct=draw(st.integers(0, 1000)),
            )
            for f in fnames
        ]
        key = ["id"] if "id" in fnames and draw(st.booleans()) else []
        sources[name] = source(name, "csv", fields, key, records=draw(st.integers(0, 10_000)))
    fks = []
    for name in names:
        target = draw(st.sampled_from(names))
        if (
            "ref" in [f.name for f in sources[name].fields]
            and sources[target].field("id")
            and draw(st.booleans())
        ):
            fks.append(fk(name, ["ref"], target, ["id"], draw(st.floats(0.5, 1))))
    hierarchy = []
    if "Orders" in sources and "Orders.lines" in sources and draw(st.booleans()):
        linked = (
            sources["Orders"].field("id") is not None and sources["Orders.lines"].field("ref") is not None
        )
        hierarchy.append(
            HierarchyEdge(
                parent="Orders",
                child="Orders.lines",
                path="$[*].lines",
                parent_fields=["id"] if linked else [],
                child_fields=["ref"] if linked else [],
            )
        )
    return Contract(sources=sources, foreign_keys=fks, hierarchy=hierarchy)


def assert_extends(old: Contract, new: Contract) -> None:
    """Independent of check_monotonic: nothing removed, nothing narrowed, nothing renamed."""
    for name, src in old.sources.items():
        assert name in new.sources
        after = {f.id: f for f in new.sources[name].fields}
        for f in src.fields:
            assert f.id in after
            assert widen(f.type, after[f.id].type) == after[f.id].type
        if src.identity_key:
            assert new.sources[name].identity_key == src.identity_key
    assert {k.signature() for k in old.foreign_keys} <= {k.signature() for k in new.foreign_keys}
    assert {(h.parent, h.child, h.path) for h in old.hierarchy} <= {
        (h.parent, h.child, h.path) for h in new.hierarchy
    }
    new_entities = {e.name: e for e in new.entities}
    for e in old.entities:
        assert e.name in new_entities
        assert {a.field_id for a in e.attributes} <= {a.field_id for a in new_entities[e.name].attributes}
    old_rels = {(r.name, r.from_entity, r.to_entity, tuple(r.from_fields)) for r in old.relationships}
    assert old_rels <= {(r.name, r.from_entity, r.to_entity, tuple(r.from_fields)) for r in new.relationships}
    assert new.version >= old.version


PROPS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@PROPS
@given(st.lists(observations(), min_size=1, max_size=5))
def test_evolve_never_removes_or_narrows(obs: list[Contract]) -> None:
    current: Contract | None = None
    for o in obs:
        new, diff = evolve(current, o)
        if current is not None:
            assert_extends(current, new)
            assert check_monotonic(current, new) == []
            if diff is None:
                assert new.version == current.version
            else:
                assert new.version == current.version + 1
                assert diff.from_version == current.version and diff.to_version == new.version
                assert diff.added, "a new version must say what was added"
        current = new


@PROPS
@given(observations(), observations())
def test_replay_makes_no_new_version(first: Contract, second: Contract) -> None:
    c1, _ = evolve(None, first)
    c2, _ = evolve(c1, second)
    c3, diff = evolve(c2, second)
    assert diff is None
    assert c3.version == c2.version and c3.content_hash == c2.content_hash
    assert dump_yaml(c3) == dump_yaml(c2)


@PROPS
@given(observations(), observations())
def test_same_input_gives_byte_identical_yaml(first: Contract, second: Contract) -> None:
    runs = []
    for _ in range(2):
        c1, _ = evolve(None, first.model_copy(deep=True))
        c2, _ = evolve(c1, second.model_copy(deep=True))
        runs.append(dump_yaml(c2))
    assert runs[0] == runs[1]


@PROPS
@given(observations(), observations())
def test_diff_items_are_really_new(first: Contract, second: Contract) -> None:
    c1, _ = evolve(None, first)
    c2, diff = evolve(c1, second)
    if diff is None:
        return
    for item in diff.added:
        assert item.kind in DIFF_KINDS
        assert item.reason
        if item.kind == "source":
            assert item.target not in c1.sources and item.target in c2.sources
        if item.kind == "field":
            src, _, name = (
                item.target.partition(".") if item.target.count(".") == 1 else item.target.rpartition(".")
            )
            assert c2.sources[src].field(name) is not None
            assert c1.sources.get(src) is None or c1.sources[src].field(name) is None
        if item.kind == "entity" and "descriptive" not in item.detail:
            assert c1.entity(item.target) is None and c2.entity(item.target) is not None


def test_first_contract_is_version_one_with_everything_in_the_diff() -> None:
    observed = chinook_like()
    c, diff = evolve(None, observed, reason="esc discover drop/")
    assert c.version == 1 and diff is not None
    assert (diff.from_version, diff.to_version, diff.reason) == (0, 1, "esc discover drop/")
    kinds = diff.by_kind()
    assert len(kinds["source"]) == 6
    assert len(kinds["field"]) == sum(len(s.fields) for s in observed.sources.values())
    assert len(kinds["foreign_key"]) == 5 and len(kinds["hierarchy"]) == 1
    assert len(kinds["entity"]) == 6 and len(kinds["relationship"]) == 5
    assert {i.target for i in kinds["identity_key"]} == set(observed.sources)
    assert observed.version == 0 and not observed.entities  # input untouched
    assert c.content_hash == content_hash(c)


def test_new_field_adds_field_and_attribute_only() -> None:
    c1, _ = evolve(None, chinook_like())
    obs = chinook_like()
    obs.sources["Artist"].fields.append(field("Artist", "Country", "string"))
    c2, diff = evolve(c1, obs, reason="new column")
    assert diff is not None and c2.version == 2
    assert [(i.kind, i.target) for i in diff.added] == [
        ("field", "Artist.Country"),
        ("attribute", "Artist.Country"),
    ]
    assert c2.entity("Artist").attributes[-1].name == "Country"  # type: ignore[union-attr]


def test_type_widens_and_never_narrows() -> None:
    c1, _ = evolve(None, chinook_like())
    wider = chinook_like()
    wider.sources["Album"].fields[1].type = "text"
    c2, diff = evolve(c1, wider)
    assert diff is not None
    assert [
        (i.kind, i.target, i.detail["from"], i.detail["to"]) for i in diff.added if i.kind == "type_widened"
    ] == [("type_widened", "Album.Title", "string", "text")]
    assert c2.entity("Album").attributes[1].type == "text"  # type: ignore[union-attr]
    assert c2.entity("Album").descriptive  # type: ignore[union-attr]
    narrower = chinook_like()  # Title back to "string": must stay text, and no new version
    c3, diff3 = evolve(c2, narrower)
    assert diff3 is None and c3.version == 2
    assert c3.sources["Album"].field("Title").type == "text"  # type: ignore[union-attr]
    mixed = chinook_like()
    mixed.sources["Invoice"].fields[2].type = "string"  # float + string -> string
    c4, diff4 = evolve(c3, mixed)
    assert diff4 is not None and c4.sources["Invoice"].field("Total").type == "string"  # type: ignore[union-attr]


def test_statistics_refresh_without_a_new_version() -> None:
    c1, _ = evolve(None, chinook_like())
    obs = chinook_like()
    obs.sources["Employee"].fields[2].null_rate = 0.25
    obs.sources["Employee"].fields[2].examples = [1, 2]
    obs.sources["Employee"].records = 99
    obs.foreign_keys[1].confidence = 0.91
    c2, diff = evolve(c1, obs)
    assert diff is None and c2.version == 1 and c2.content_hash == c1.content_hash
    assert c2.sources["Employee"].field("ReportsTo").null_rate == 0.25  # type: ignore[union-attr]
    assert c2.sources["Employee"].records == 99
    assert c2.foreign_keys[1].confidence == 0.91
    assert next(r for r in c2.relationships if r.name == "REPORTS_TO").confidence == 0.91


def test_disproved_identity_key_is_kept_with_a_violation() -> None:
    c1, _ = evolve(None, chinook_like())
    obs = chinook_like()
    obs.sources["Artist"].identity_key = []  # a duplicate ArtistId arrived
    obs.sources["Artist"].key_confidence = None
    obs.sources["Artist"].fields[0].uniqueness = 0.99
    c2, diff = evolve(c1, obs, reason="batch 7")
    assert diff is None and c2.version == 1
    artist = c2.sources["Artist"]
    assert artist.identity_key == ["ArtistId"]
    violation = artist.key_evidence["violation"]
    assert violation["observed_key"] == [] and violation["reason"] == "batch 7"
    assert violation["fields"]["ArtistId"]["uniqueness"] == 0.99
    assert c2.entity("Artist").key == c1.entity("Artist").key  # type: ignore[union-attr]


def test_key_proven_later_is_added() -> None:
    obs0 = chinook_like()
    obs0.sources["Artist"].identity_key = []
    c1, _ = evolve(None, obs0)
    assert c1.entity("Artist").key == []  # type: ignore[union-attr]
    c2, diff = evolve(c1, chinook_like())
    assert diff is not None and c2.version == 2
    assert {(i.kind, i.target) for i in diff.added} == {("identity_key", "Artist")}
    assert c2.entity("Artist").key == [c2.sources["Artist"].fields[0].id]  # type: ignore[union-attr]


def test_foreign_key_not_reproved_is_kept_with_a_violation() -> None:
    c1, _ = evolve(None, chinook_like())
    obs = chinook_like()
    obs.foreign_keys = [k for k in obs.foreign_keys if k.from_.source != "Album"]
    c2, diff = evolve(c1, obs)
    assert diff is None
    album_fk = next(k for k in c2.foreign_keys if k.from_.source == "Album")
    assert "violation" in album_fk.evidence
    assert any(r.name == "ARTIST" for r in c2.relationships)


def test_partial_observation_keeps_everything_else() -> None:
    c1, _ = evolve(None, chinook_like())
    only_artist = Contract(sources={"Artist": chinook_like().sources["Artist"]})
    c2, diff = evolve(c1, only_artist)
    assert diff is None and check_monotonic(c1, c2) == []
    assert set(c2.sources) == set(c1.sources)


def test_new_source_cannot_steal_an_existing_label() -> None:
    first = Contract(
        sources={"shop.items": source("shop.items", "json", [field("shop.items", "id")], ["id"])}
    )
    c1, _ = evolve(None, first)
    assert [e.name for e in c1.entities] == ["Item"]
    second = first.model_copy(deep=True)
    second.sources["items"] = source("items", "csv", [field("items", "sku", "string")], ["sku"])
    c2, diff = evolve(c1, with_entities(second))  # observed labels computed without the earlier pins
    assert diff is not None
    by_source = {e.source: e.name for e in c2.entities}
    assert by_source["shop.items"] == "Item"
    assert by_source["items"] != "Item"
    item = c2.entity("Item")
    assert item is not None and {a.name for a in item.attributes} == {"id"}  # no foreign attributes merged in


def test_proposed_entities_in_the_observation_are_kept() -> None:
    c1, _ = evolve(None, chinook_like())
    base = merge(c1, chinook_like())
    artist = base.entity("Artist")
    assert artist is not None
    base.entities.append(
        artist.model_copy(update={"name": "Performer", "attributes": artist.attributes[1:], "key": []})
    )
    c2, diff = evolve(c1, base)
    assert diff is not None and [(i.kind, i.target) for i in diff.added] == [("entity", "Performer")]
    c3, diff3 = evolve(c2, chinook_like())
    assert diff3 is None and c3.entity("Performer") is not None


def test_a_copy_of_the_deterministic_entity_under_another_label_is_folded() -> None:
    c1, _ = evolve(None, chinook_like())
    base = merge(c1, chinook_like())
    base.entities.append(base.entity("Artist").model_copy(update={"name": "Performer"}))  # type: ignore[union-attr]
    c2, diff = evolve(c1, base)
    assert diff is None and c2.entity("Performer") is None


@given(st.lists(observations(), min_size=2, max_size=4))
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_evolve_never_changes_its_inputs(seq: list[Contract]) -> None:
    """``merge`` copies the previous contract shallowly: a part changed in place would rewrite history."""
    current: Contract | None = None
    for observed in seq:
        before = current.model_dump() if current is not None else None
        seen = observed.model_dump()
        nxt, _diff = evolve(current, with_entities(observed))
        assert observed.model_dump() == seen
        if current is not None:
            assert current.model_dump() == before
        current = nxt
