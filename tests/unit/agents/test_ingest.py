from __future__ import annotations

from typing import Any

from esc.agents.embedding import HashingEmbedder
from esc.agents.extractors import PENDING
from esc.agents.ingest import Ingestor
from esc.contract.entities import with_entities
from esc.streams.events import RecordEnvelope
from tests.fakes.contracts import chinook_like
from tests.unit.agents.conftest import Pack
from tests.unit.agents.fakes import RecordingGraph, RecordingVectors, node_id

COLLECTION = "EscChunks"


def ingestor() -> tuple[Ingestor, RecordingGraph, RecordingVectors]:
    g, v = RecordingGraph(), RecordingVectors()
    return Ingestor(g, v, HashingEmbedder(), COLLECTION, embed_batch=16), g, v


def env(source_: str, rid: str, payload: dict[str, Any], **kw: Any) -> RecordEnvelope:
    return RecordEnvelope(source=source_, record_id=rid, payload=payload, **kw)


def test_chinook_graph_matches_truth_and_redelivery_changes_nothing(chinook: Pack) -> None:
    ing, g, v = ingestor()
    raws = [e.model_dump_json() for e in chinook.envelopes]
    total = 0
    for i in range(0, len(raws), 500):
        r = ing.handle(raws[i : i + 500], chinook.contract)
        assert not r.dead and not r.deferred
        total += r.written
    assert total == len(raws)
    labels = {e.source: e.name for e in chinook.contract.entities}
    for s, spec in chinook.truth["sources"].items():
        assert g.count(labels[s]) == spec["rows"], s
    assert not g.stubs  # every edge target was written by its own record
    edges, nodes, objects = dict(g.edges), dict(g.nodes), dict(v.objects[COLLECTION])
    # at-least-once: the same batches again (in another order) leave the stores unchanged
    for i in reversed(range(0, len(raws), 700)):
        ing.handle(raws[i : i + 700], chinook.contract)
    assert g.edges == edges and g.nodes == nodes and v.objects[COLLECTION].keys() == objects.keys()
    assert ("Artist", ("ArtistId",)) in g.constraints
    assert ing.ingested == set(chinook.truth["sources"])


def test_write_order_and_provenance() -> None:
    ing, g, v = ingestor()
    c = with_entities(chinook_like())
    r = ing.handle(
        [
            env("Album", "a1", {"AlbumId": 1, "Title": "t", "ArtistId": 9}),
            env(
                "Customer",
                "c1",
                {
                    "CustomerId": 1,
                    "Notes": "Likes jazz and blues. Buys a new vinyl record every single month.",
                },
            ),
        ],
        c,
    )
    assert (r.written, r.edges, r.texts) == (2, 1, 1)
    assert g.calls.index("upsert_entities") < g.calls.index("upsert_edges")
    assert node_id("Artist", {"ArtistId": 9}) in g.stubs  # target not seen yet: a stub, filled in later
    ing.handle([env("Artist", "r9", {"ArtistId": "9", "Name": "x"})], c)
    assert not g.stubs
    (obj,) = v.objects[COLLECTION].values()
    assert obj.vector is not None and obj.provenance.record_id == "c1"


def test_dead_letters_and_deferrals_are_returned_not_written() -> None:
    ing, g, _ = ingestor()
    c = with_entities(chinook_like())
    c.sources["Artist"].identity_key = []
    c.sources["Artist"].key_evidence = {PENDING: "waiting"}
    c.entities = [e for e in c.entities if e.source != "Artist"] + [
        e.model_copy(update={"key": []}) for e in c.entities if e.source == "Artist"
    ]
    r = ing.handle(
        [
            b"not json",
            env("Artist", "r1", {"ArtistId": 1}).model_dump_json(),
            env("Album", "a1", {"AlbumId": None}).model_dump_json(),
            env("Nope", "n1", {"x": 1}).model_dump_json(),
        ],
        c,
    )
    assert [d.stage for d in r.dead] == ["push", "extractor"]
    assert sorted(e.record_id or "" for e in r.deferred) == ["n1", "r1"]
    assert r.written == 0 and not g.nodes


def test_no_contract_defers_everything_and_use_sets_it() -> None:
    ing, g, _ = ingestor()
    r = ing.handle([env("Artist", "r1", {"ArtistId": 1})])
    assert len(r.deferred) == 1 and not g.nodes
    ing.use(with_entities(chinook_like()))
    r = ing.handle(r.deferred)
    assert r.written == 1 and r.sources == {"Artist"}


def test_deleted_file_retracts_records_and_unsupported_entities() -> None:
    ing, g, v = ingestor()
    c = with_entities(chinook_like())
    ing.handle(
        [
            env(
                "Customer",
                "a.csv:row=1",
                {
                    "CustomerId": 1,
                    "Notes": "Called about a refund. Happy with the outcome in the end, said thanks.",
                },
                location={"file": "a.csv", "row": 1},
            ),
            env("Customer", "a.csv:row=2", {"CustomerId": 2}, location={"file": "a.csv", "row": 2}),
            env("Customer", "b.csv:row=1", {"CustomerId": 2}, location={"file": "b.csv", "row": 1}),
        ],
        c,
    )
    assert g.count("Customer") == 2 and v.count(COLLECTION) == 1
    r = ing.handle(
        [RecordEnvelope(source="Customer", payload={}, deleted=True, location={"file": "a.csv"})], c
    )
    assert r.retracted == 2
    assert g.count("Customer") == 1  # customer 2 is still supported by b.csv
    assert node_id("Customer", {"CustomerId": 2}) in g.nodes and v.count(COLLECTION) == 0
    r = ing.handle(
        [env("Customer", "b.csv:row=1", {}, deleted=True, location={"file": "b.csv", "row": 1})], c
    )
    assert r.retracted == 1 and g.count("Customer") == 0


def test_rekey_replay_removes_record_id_nodes() -> None:
    ing, g, _ = ingestor()
    keyless = with_entities(chinook_like())
    keyless.entities = [
        e.model_copy(update={"key": []}) if e.source == "Artist" else e for e in keyless.entities
    ]
    keyless.sources["Artist"].identity_key = []
    batch = [env("Artist", "r1", {"ArtistId": 1}), env("Artist", "r2", {"ArtistId": 2})]
    ing.handle(batch, keyless)
    assert {n[1] for n in g.nodes if n[0] == "Artist"} == {(("_record_id", "r1"),), (("_record_id", "r2"),)}
    ing.handle(batch, with_entities(chinook_like()), rekey=True)
    assert {n[1] for n in g.nodes if n[0] == "Artist"} == {(("ArtistId", 1),), (("ArtistId", 2),)}


def test_a_backfill_counts_as_replayed_with_its_own_latency_not_as_new_records() -> None:
    from datetime import UTC, datetime, timedelta

    from esc.agents import metrics

    def sample(name: str, labels: dict[str, str] | None = None) -> float:
        return metrics.REGISTRY.get_sample_value(name, labels or {}) or 0.0

    ing, _, _ = ingestor()
    c = with_entities(chinook_like())
    old = datetime.now(UTC) - timedelta(seconds=400)
    batch = [
        env("Album", f"a{i}", {"AlbumId": i, "Title": "t", "ArtistId": 1}, event_time=old) for i in range(3)
    ]
    before = {
        n: sample(n, lb)
        for n, lb in [
            ("esc_records_in_total", {"source": "Album"}),
            ("esc_records_replayed_total", {"source": "Album"}),
            ("esc_freshness_seconds_count", None),
            ("esc_backfill_latency_seconds_count", None),
        ]
    }
    ing.handle(batch, c)
    ing.apply(ing.prepare(batch, c), replay=True)
    assert sample("esc_records_in_total", {"source": "Album"}) - before["esc_records_in_total"] == 3
    assert (
        sample("esc_records_replayed_total", {"source": "Album"}) - before["esc_records_replayed_total"] == 3
    )
    assert sample("esc_freshness_seconds_count") - before["esc_freshness_seconds_count"] == 3
    assert sample("esc_backfill_latency_seconds_count") - before["esc_backfill_latency_seconds_count"] == 3
