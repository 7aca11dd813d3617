"""QueryPlan answers every backend must agree on, over one small music graph written through the store port.

Expected rows are computed in Python from the dataset below (never read back from a store), so each backend is
checked against the plan semantics of agents/query/plan.py, not against another backend.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from esc.agents.query.plan import (
    CITE_CAP,
    Expr,
    Filter,
    Hop,
    NodePattern,
    OrderBy,
    PlanRow,
    QueryPlan,
    ReturnItem,
)
from esc.agents.stores.base import GraphStore
from esc.agents.types import EdgeWrite
from tests.conformance.conftest import Names
from tests.conformance.helpers import cite, cites, entity

ARTISTS = {1: "AC/DC", 2: "Aerosmith", 3: "Miles Davis"}
ALBUMS = {
    10: ("Back in Black", 1),
    11: ("Highway to Hell", 1),
    12: ("Toys in the Attic", 2),
    13: ("Kind of Blue", 3),
}
GENRES = {100: "Rock", 101: "Jazz"}
# id: (name, milliseconds or None, price, album, genre)
TRACKS: dict[int, tuple[str, int | None, float, int, int]] = {
    1: ("Hells Bells", 312000, 0.99, 10, 100),
    2: ("Shoot to Thrill", 317000, 0.99, 10, 100),
    3: ("Back in Black", 255000, 1.29, 10, 100),
    4: ("Highway to Hell", 208000, 0.99, 11, 100),
    5: ("Walk This Way", 220000, 0.99, 12, 100),
    6: ("So What", 545000, 1.99, 13, 101),
    7: ("Blue in Green", 337000, 1.99, 13, 101),
    8: ("Untitled", None, 0.49, 12, 100),
}


@dataclass
class Music:
    artist: str
    album: str
    genre: str
    track: str
    src: dict[str, str]


@pytest.fixture
def music(graph_store: GraphStore, names: Names) -> Music:
    m = Music(
        artist=names.label("Artist"),
        album=names.label("Album"),
        genre=names.label("Genre"),
        track=names.label("Track"),
        src={k: names.source(k) for k in ("artists", "albums", "genres", "tracks")},
    )
    for label, key in (
        (m.artist, "ArtistId"),
        (m.album, "AlbumId"),
        (m.genre, "GenreId"),
        (m.track, "TrackId"),
    ):
        graph_store.ensure_entity_key(label, [key])
    # tracks first: their edges create album/genre stubs that the later records fill, as a stream might
    rows = []
    for tid, (name, ms, price, _, _) in TRACKS.items():
        props: dict[str, Any] = {"Name": name, "UnitPrice": price}
        if ms is not None:
            props["Milliseconds"] = ms
        rows.append(entity(m.track, {"TrackId": tid}, props, m.src["tracks"], tid))
    graph_store.upsert_entities(rows)
    graph_store.upsert_edges(
        [
            EdgeWrite(
                type="ALBUM",
                from_label=m.track,
                from_key={"TrackId": t},
                to_label=m.album,
                to_key={"AlbumId": v[3]},
            )
            for t, v in TRACKS.items()
        ]
        + [
            EdgeWrite(
                type="GENRE",
                from_label=m.track,
                from_key={"TrackId": t},
                to_label=m.genre,
                to_key={"GenreId": v[4]},
            )
            for t, v in TRACKS.items()
        ]
    )
    graph_store.upsert_entities(
        [entity(m.artist, {"ArtistId": a}, {"Name": n}, m.src["artists"], a) for a, n in ARTISTS.items()]
        + [entity(m.album, {"AlbumId": a}, {"Title": t}, m.src["albums"], a) for a, (t, _) in ALBUMS.items()]
        + [entity(m.genre, {"GenreId": g}, {"Name": n}, m.src["genres"], g) for g, n in GENRES.items()]
    )
    graph_store.upsert_edges(
        [
            EdgeWrite(
                type="ARTIST",
                from_label=m.album,
                from_key={"AlbumId": a},
                to_label=m.artist,
                to_key={"ArtistId": r},
            )
            for a, (_, r) in ALBUMS.items()
        ]
    )
    return m


def node(var: str, label: str, *filters: Filter) -> NodePattern:
    return NodePattern(var=var, label=label, filters=list(filters))


def values(rows: list[PlanRow]) -> list[dict[str, Any]]:
    return [r.values for r in rows]


def track_cites(m: Music, ids: list[int]) -> set[tuple[str, str, str]]:
    return {cite(m.src["tracks"], i) for i in ids}


def test_counts_after_stubs_are_filled(graph_store: GraphStore, music: Music) -> None:
    assert graph_store.count(music.track) == len(TRACKS)
    assert graph_store.count(music.album) == len(ALBUMS)
    assert graph_store.count(music.genre) == len(GENRES)
    assert graph_store.count(music.artist) == len(ARTISTS)


def test_lookup_with_citation(graph_store: GraphStore, music: Music) -> None:
    plan = QueryPlan(
        kind="lookup",
        start=node("n0", music.track, Filter(prop="Name", value="So What")),
        returns=[ReturnItem(var="n0", prop="Milliseconds", alias="ms")],
        cite=["n0"],
    )
    rows = graph_store.run_plan(plan)
    assert values(rows) == [{"ms": 545000}]
    assert cites(rows) == track_cites(music, [6])


@pytest.mark.parametrize(
    ("flt", "expected"),
    [
        (Filter(prop="Name", op="ieq", value="  so WHAT "), {"So What"}),
        (Filter(prop="Name", op="contains", value="IN "), {"Back in Black", "Blue in Green"}),
        (Filter(prop="Name", op="startswith", value="Hi"), {"Highway to Hell"}),
        (Filter(prop="Name", op="in", value=["So What", "Hells Bells", "nope"]), {"So What", "Hells Bells"}),
        (Filter(prop="Milliseconds", op="gt", value=317000), {"So What", "Blue in Green"}),
        (Filter(prop="Milliseconds", op="lte", value=220000), {"Highway to Hell", "Walk This Way"}),
        (Filter(prop="UnitPrice", op="gte", value=1.29), {"Back in Black", "So What", "Blue in Green"}),
        (Filter(prop="UnitPrice", op="eq", value=0.49), {"Untitled"}),
        (Filter(prop="Milliseconds", op="startswith", value="31"), {"Hells Bells", "Shoot to Thrill"}),
        (Filter(prop="Milliseconds", op="isnull", value=None), {"Untitled"}),
        (Filter(prop="Milliseconds", op="notnull", value=None), {v[0] for v in TRACKS.values() if v[1] is not None}),
        (Filter(prop="UnitPrice", op="ne", value=0.99), {v[0] for v in TRACKS.values() if v[2] != 0.99}),
        (Filter(prop="Milliseconds", op="ne", value=545000),
         {v[0] for v in TRACKS.values() if v[1] is not None and v[1] != 545000}),
    ],
    ids=["ieq", "contains", "startswith", "in", "gt", "lte", "gte-float", "eq-float", "startswith-number",
         "isnull", "notnull", "ne-float", "ne-skips-missing"],
)
def test_filters(graph_store: GraphStore, music: Music, flt: Filter, expected: set[str]) -> None:
    plan = QueryPlan(
        kind="list",
        start=node("n0", music.track, flt),
        returns=[ReturnItem(var="n0", prop="Name", alias="name")],
    )
    assert {r.values["name"] for r in graph_store.run_plan(plan)} == expected


def test_count_one_hop(graph_store: GraphStore, music: Music) -> None:
    plan = QueryPlan(
        kind="count",
        start=node("n0", music.album, Filter(prop="Title", value="Back in Black")),
        hops=[Hop(rel_type="ALBUM", direction="in", target=node("n1", music.track))],
        returns=[ReturnItem(var="n1", agg="count", alias="tracks")],
        cite=["n1"],
    )
    rows = graph_store.run_plan(plan)
    assert values(rows) == [{"tracks": 3}]
    assert cites(rows) == track_cites(music, [1, 2, 3])


def test_count_of_nothing_is_one_row_with_zero(graph_store: GraphStore, music: Music) -> None:
    plan = QueryPlan(
        kind="count",
        start=node("n0", music.album, Filter(prop="Title", value="No Such Album")),
        hops=[Hop(rel_type="ALBUM", direction="in", target=node("n1", music.track))],
        returns=[ReturnItem(var="n1", agg="count", alias="tracks")],
    )
    assert values(graph_store.run_plan(plan)) == [{"tracks": 0}]


def test_one_hop_list(graph_store: GraphStore, music: Music) -> None:
    plan = QueryPlan(
        kind="traverse",
        start=node("n0", music.album, Filter(prop="Title", value="Kind of Blue")),
        hops=[Hop(rel_type="ALBUM", direction="in", target=node("n1", music.track))],
        returns=[ReturnItem(var="n1", prop="Name", alias="track")],
        cite=["n1"],
    )
    rows = graph_store.run_plan(plan)
    assert sorted(r.values["track"] for r in rows) == ["Blue in Green", "So What"]
    for r in rows:  # each row cites its own track
        tid = next(t for t, v in TRACKS.items() if v[0] == r.values["track"])
        assert cites([r]) == track_cites(music, [tid])


def test_two_hops(graph_store: GraphStore, music: Music) -> None:
    plan = QueryPlan(
        kind="traverse",
        start=node("n0", music.artist, Filter(prop="Name", value="AC/DC")),
        hops=[
            Hop(rel_type="ARTIST", direction="in", target=node("n1", music.album)),
            Hop(rel_type="ALBUM", direction="in", target=node("n2", music.track)),
        ],
        returns=[
            ReturnItem(var="n2", prop="Name", alias="track"),
            ReturnItem(var="n1", prop="Title", alias="album"),
        ],
        cite=["n2"],
    )
    rows = graph_store.run_plan(plan)
    expected = sorted((name, ALBUMS[alb][0]) for name, _, _, alb, _ in TRACKS.values() if ALBUMS[alb][1] == 1)
    assert sorted((r.values["track"], r.values["album"]) for r in rows) == expected
    assert cites(rows) == track_cites(music, [1, 2, 3, 4])


def test_two_hops_back_through_the_same_relationship_type(graph_store: GraphStore, music: Music) -> None:
    """Other tracks on the album of "Hells Bells": one MATCH path never reuses a relationship, so the start track
    itself is not in the answer."""
    plan = QueryPlan(
        kind="traverse",
        start=node("n0", music.track, Filter(prop="Name", value="Hells Bells")),
        hops=[
            Hop(rel_type="ALBUM", direction="out", target=node("n1", music.album)),
            Hop(rel_type="ALBUM", direction="in", target=node("n2", music.track)),
        ],
        returns=[ReturnItem(var="n2", prop="Name", alias="track")],
    )
    assert sorted(r.values["track"] for r in graph_store.run_plan(plan)) == [
        "Back in Black",
        "Shoot to Thrill",
    ]


def test_aggregates_grouped_by_node(graph_store: GraphStore, music: Music) -> None:
    plan = QueryPlan(
        kind="aggregate",
        start=node("n0", music.album),
        hops=[Hop(rel_type="ALBUM", direction="in", target=node("n1", music.track))],
        returns=[
            ReturnItem(var="n0", prop="Title", alias="album"),
            ReturnItem(var="n1", agg="count", alias="tracks"),
            ReturnItem(var="n1", prop="Milliseconds", agg="sum", alias="total_ms"),
            ReturnItem(var="n1", prop="UnitPrice", agg="avg", alias="avg_price"),
            ReturnItem(var="n1", prop="Milliseconds", agg="min", alias="shortest"),
            ReturnItem(var="n1", prop="UnitPrice", agg="max", alias="dearest"),
        ],
        group_by=["n0"],
        cite=["n1"],
    )
    rows = graph_store.run_plan(plan)
    expected = {}
    for aid, (title, _) in ALBUMS.items():
        tracks = [v for v in TRACKS.values() if v[3] == aid]
        ms = [v[1] for v in tracks if v[1] is not None]
        expected[title] = {
            "album": title,
            "tracks": len(tracks),
            "total_ms": sum(ms),
            "avg_price": pytest.approx(sum(v[2] for v in tracks) / len(tracks)),
            "shortest": min(ms),
            "dearest": pytest.approx(max(v[2] for v in tracks)),
        }
    assert {r.values["album"]: r.values for r in rows} == expected
    assert all(type(r.values["total_ms"]) is int and type(r.values["tracks"]) is int for r in rows)
    by_album = {r.values["album"]: cites([r]) for r in rows}
    assert by_album["Kind of Blue"] == track_cites(music, [6, 7])


def test_aggregate_over_everything_and_expression(graph_store: GraphStore, music: Music) -> None:
    price_per_minute = Expr(
        op="div",
        args=[Expr(op="mul", args=[Expr(prop="UnitPrice"), Expr(const=60000.0)]), Expr(prop="Milliseconds")],
    )
    plan = QueryPlan(
        kind="aggregate",
        start=node("n0", music.track),
        returns=[
            ReturnItem(var="n0", agg="count", alias="n"),
            ReturnItem(var="n0", prop="Milliseconds", agg="count", alias="with_ms"),
            ReturnItem(var="n0", prop="UnitPrice", agg="count_distinct", alias="prices"),
            ReturnItem(var="n0", prop="UnitPrice", agg="sum", alias="revenue"),
            ReturnItem(var="n0", expr=price_per_minute, agg="max", alias="ppm"),
        ],
    )
    rows = graph_store.run_plan(plan)
    ppm = max(v[2] * 60000.0 / v[1] for v in TRACKS.values() if v[1] is not None)
    assert values(rows) == [
        {
            "n": len(TRACKS),
            "with_ms": sum(1 for v in TRACKS.values() if v[1] is not None),
            "prices": len({v[2] for v in TRACKS.values()}),
            "revenue": pytest.approx(sum(v[2] for v in TRACKS.values())),
            "ppm": pytest.approx(ppm),
        }
    ]


def test_superlative_skips_missing_values(graph_store: GraphStore, music: Music) -> None:
    longest = QueryPlan(
        kind="superlative",
        start=node("n0", music.track),
        returns=[ReturnItem(var="n0", prop="Name", alias="name")],
        order_by=OrderBy(var="n0", prop="Milliseconds", desc=True),
        limit=2,
        cite=["n0"],
    )
    rows = graph_store.run_plan(longest)
    assert values(rows) == [{"name": "So What"}, {"name": "Blue in Green"}]
    assert cites(rows[:1]) == track_cites(music, [6])
    shortest = longest.model_copy(
        update={"order_by": OrderBy(var="n0", prop="Milliseconds", desc=False), "limit": 1}
    )
    assert values(graph_store.run_plan(shortest)) == [{"name": "Highway to Hell"}]


def test_grouped_superlative(graph_store: GraphStore, music: Music) -> None:
    plan = QueryPlan(
        kind="superlative",
        start=node("n0", music.genre),
        hops=[Hop(rel_type="GENRE", direction="in", target=node("n1", music.track))],
        returns=[
            ReturnItem(var="n0", prop="Name", alias="genre"),
            ReturnItem(var="n1", agg="count", alias="n"),
        ],
        group_by=["n0"],
        order_by=OrderBy(alias="n", desc=True),
        limit=1,
        cite=["n0"],
    )
    rows = graph_store.run_plan(plan)
    assert values(rows) == [{"genre": "Rock", "n": 6}]
    assert cites(rows) == {cite(music.src["genres"], 100)}


def test_group_by_value_and_distinct(graph_store: GraphStore, music: Music) -> None:
    plan = QueryPlan(
        kind="aggregate",
        start=node("n0", music.track),
        returns=[
            ReturnItem(var="n0", prop="UnitPrice", alias="price"),
            ReturnItem(var="n0", agg="count", alias="n"),
        ],
        order_by=OrderBy(alias="n", desc=True),
    )
    rows = graph_store.run_plan(plan)
    counts: dict[float, int] = {}
    for v in TRACKS.values():
        counts[v[2]] = counts.get(v[2], 0) + 1
    assert {r.values["price"]: r.values["n"] for r in rows} == counts
    assert rows[0].values == {"price": 0.99, "n": 4}


def test_aggregate_citations_are_capped(graph_store: GraphStore, names: Names) -> None:
    label, src = names.label("Many"), names.source("many")
    graph_store.upsert_entities([entity(label, {"id": i}, {"g": "x"}, src, i) for i in range(CITE_CAP + 5)])
    plan = QueryPlan(
        kind="count",
        start=node("n0", label),
        returns=[ReturnItem(var="n0", agg="count", alias="n")],
        cite=["n0"],
    )
    rows = graph_store.run_plan(plan)
    assert values(rows) == [{"n": CITE_CAP + 5}]
    assert len(rows[0].citations) == CITE_CAP
