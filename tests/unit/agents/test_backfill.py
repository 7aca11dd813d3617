from __future__ import annotations

import zlib
from collections import Counter, defaultdict

from esc.agents.backfill import (
    BackfillTracker,
    DeferredRecords,
    ReplayPlan,
    plan_replay,
    ready_sources,
    sources_to_rekey,
    sources_to_replay,
)
from esc.agents.contract_agent import ContractAgent, SourceComplete
from esc.agents.embedding import HashingEmbedder
from esc.agents.ingest import Ingestor
from esc.agents.profiler import Watermark, profile_batch
from esc.contract.evolve import evolve
from esc.contract.model import Contract, ContractDiff
from esc.streams.events import RecordEnvelope
from tests.fakes.contracts import chinook_like, field, fk
from tests.unit.agents.conftest import Pack
from tests.unit.agents.fakes import RecordingGraph, RecordingVectors


def taken(deferred: DeferredRecords, sources: list[str]) -> list[RecordEnvelope]:
    """The buffered records of ``sources``, parsed as a backfill parses them."""
    return [RecordEnvelope.model_validate_json(b) for b in deferred.take_raw(sources)]


ALL = {"Artist", "Album", "Employee", "Customer", "Invoice", "Invoice.InvoiceLine"}


def step(before: Contract, after: Contract) -> tuple[Contract, ContractDiff]:
    prev, _ = evolve(None, before, "v1")
    new, diff = evolve(prev, after, "v2")
    assert diff is not None
    return new, diff


def test_new_attribute_replays_its_source_only_if_ingested() -> None:
    before = chinook_like()
    after = before.model_copy(deep=True)
    after.sources["Artist"].fields.append(field("Artist", "Country", "string", uniqueness=0.2))
    c, diff = step(before, after)
    assert {i.kind for i in diff.added} == {"field", "attribute"}
    assert sources_to_replay(diff, c, ALL) == {"Artist"}
    assert sources_to_replay(diff, c, ALL - {"Artist"}) == set()
    assert sources_to_rekey(diff, c, ALL) == set()


def test_new_foreign_key_replays_the_referencing_side() -> None:
    before = chinook_like()
    before.foreign_keys = [k for k in before.foreign_keys if k.from_.source != "Album"]
    after = chinook_like()
    c, diff = step(before, after)
    assert {i.kind for i in diff.added} == {"foreign_key", "relationship"}
    assert sources_to_replay(diff, c, ALL) == {"Album"}


def test_new_identity_key_rekeys_the_source_and_replays_nested_children() -> None:
    before = chinook_like()
    before.sources["Invoice"].identity_key = []
    before.hierarchy = []
    before.foreign_keys = [k for k in before.foreign_keys if "Invoice" not in (k.from_.source, k.to.source)]
    after = chinook_like()
    c, diff = step(before, after)
    assert "identity_key" in {i.kind for i in diff.added}
    assert sources_to_rekey(diff, c, ALL) == {"Invoice"}
    assert sources_to_replay(diff, c, ALL) == {"Invoice", "Invoice.InvoiceLine"}
    p = plan_replay(c, diff, ALL)
    assert p.ordered() == [("Invoice", True), ("Invoice.InvoiceLine", False)]


def test_widened_key_type_rekeys_and_widened_attribute_replays() -> None:
    before = chinook_like()
    after = before.model_copy(deep=True)
    after.sources["Artist"].fields[0].type = "string"  # ArtistId, the key
    after.sources["Invoice"].fields[2].type = "string"  # Total
    c, diff = step(before, after)
    assert sources_to_replay(diff, c, ALL) == {"Artist", "Invoice"}
    assert sources_to_rekey(diff, c, ALL) == {"Artist"}


def test_new_source_is_ready_not_replayed() -> None:
    before = chinook_like()
    after = before.model_copy(deep=True)
    after.sources["Genre"] = after.sources["Artist"].model_copy(update={"files": ["Genre.csv"]}, deep=True)
    after.sources["Genre"].fields = [field("Genre", "GenreId"), field("Genre", "Name", "string")]
    after.sources["Genre"].identity_key = ["GenreId"]
    after.foreign_keys.append(fk("Album", ["ArtistId"], "Genre", ["GenreId"]))  # nonsense, but a new FK
    c, diff = step(before, after)
    p = plan_replay(c, diff, ALL, deferred={"Genre", "Unknown"})
    assert p.ready == {"Genre"} and p.replay == {"Album"} and not p.rekey
    assert ready_sources(c, ["Genre", "Unknown"]) == {"Genre"}
    assert bool(p) and not ReplayPlan(version=1)


def test_tracker_and_deferred_buffer() -> None:
    t = BackfillTracker()
    order = t.start(ReplayPlan(version=3, rekey={"A"}, replay={"B", "A.c"}), totals={"A": 10, "B": 5})
    assert order == [("A", True), ("B", False), ("A.c", False)]
    t.progress("A", 4)
    assert t.snapshot()["A"] == {"version": 3, "rekey": True, "done": 4, "total": 10}
    t.finish("A")
    assert t.pending() == {"B", "A.c"} and t.completed == [("A", 3, 4)]
    buf = DeferredRecords(limit=3)
    mk = [RecordEnvelope(source=s, record_id=r, payload={}) for s, r in [("x", "1"), ("x", "1"), ("y", "1")]]
    buf.add(mk)
    assert len(buf) == 2
    buf.add([RecordEnvelope(source="z", record_id=str(i), payload={}) for i in range(3)])
    assert buf.overflowed == {"z"} and len(buf) == 2 and buf.sources() == {"x", "y", "z"}
    assert [e.source for e in taken(buf, ["y", "x"])] == ["x", "y"] and len(buf) == 0


def test_streamed_pipeline_converges_to_the_batch_graph(chinook: Pack) -> None:
    """Profiler -> contract agent -> extractor with deferrals and backfill, over three partitions with
    completions arriving before slower partitions' deltas: the graph ends equal to ingesting the discovered
    contract in one go."""
    graph, vectors = RecordingGraph(), RecordingVectors()
    ing = Ingestor(graph, vectors, HashingEmbedder(), "c")
    agent = ContractAgent()
    deferred = DeferredRecords()
    tracker = BackfillTracker()
    archive: dict[str, list[RecordEnvelope]] = defaultdict(list)  # what the records topic holds, per source
    parts: list[list[RecordEnvelope]] = [[], [], []]
    for e in chinook.envelopes:
        parts[zlib.crc32(e.key().encode()) % 3].append(e)
    counts: dict[str, Counter[str]] = defaultdict(Counter)
    for e in chinook.envelopes:
        counts[e.location["file"]][e.source] += 1
    completions = [c for f, cs in counts.items() for c in SourceComplete.for_file(f, cs)]
    cursor, n = [0, 0, 0], 0
    replays = 0
    while any(cursor[p] < len(parts[p]) for p in range(3)):
        batch: list[RecordEnvelope] = []
        deltas = []
        for p in range(3):
            if p and n % 2:
                continue
            chunk = parts[p][cursor[p] : cursor[p] + 300]
            if chunk:
                batch += chunk
                deltas += profile_batch(chunk, Watermark(stream=f"r/{p}", offset=cursor[p] + len(chunk) - 1))
                cursor[p] += len(chunk)
        contract, diff = agent.apply(deltas, completions if n == 4 else [], now=float(n))
        ing.use(contract)
        plan = plan_replay(contract, diff, ing.ingested, deferred.sources())
        for source, rekey in tracker.start(plan):
            envs = taken(deferred, [source]) if source in plan.ready else list(archive[source])
            r = ing.handle(envs, rekey=rekey)
            assert not r.deferred and not r.dead
            tracker.progress(source, len(envs))
            tracker.finish(source)
            replays += 1
        for e in batch:
            archive[e.source].append(e)
        r = ing.handle(batch)
        assert not r.dead
        deferred.add(r.deferred)
        n += 1
    assert len(deferred) == 0 and replays > 0 and not tracker.pending()
    final = agent.contract
    batch_graph = RecordingGraph()
    Ingestor(batch_graph, RecordingVectors(), HashingEmbedder(), "c").handle(chinook.envelopes, final)
    assert set(graph.nodes) == set(batch_graph.nodes)
    for nid, props in batch_graph.nodes.items():
        got = {k: v for k, v in graph.nodes[nid].items() if k != "_contract_version"}
        assert got == {k: v for k, v in props.items() if k != "_contract_version"}, nid
    assert set(graph.edges) == set(batch_graph.edges)
    assert not graph.stubs
    labels = {e.source: e.name for e in final.entities}
    for s, spec in chinook.truth["sources"].items():
        assert graph.count(labels[s]) == spec["rows"]


def test_deferred_records_come_back_as_they_went_in() -> None:
    from datetime import UTC, datetime

    envs = [
        RecordEnvelope(
            source="s",
            record_id="1",
            payload={"x": float("nan"), "y": float("-inf"), "z": [1, {"a": None}]},
            event_time=datetime(2026, 1, 2, 3, 4, 5, 678901, tzinfo=UTC),
            format="csv",
            location={"file": "s.csv", "row": 1},
            file_hash="h",
        ),
        RecordEnvelope(source="s", record_id="2", payload={"n": 10**30, "t": "é\u2028"}),
        RecordEnvelope(source="t.child", payload={"k": 1}, parent={"source": "t", "record_id": "9"}),
    ]
    d = DeferredRecords(limit=10)
    d.add(envs)
    d.add([envs[1]])  # a re-delivery replaces its copy
    assert len(d) == 3 and d.sources() == {"s", "t.child"}
    back = taken(d, ["t.child", "s"])
    assert [e.resolved_id() for e in back] == ["1", "2", envs[2].resolved_id()]  # parents first, arrival order
    got = {e.resolved_id(): e for e in back}
    for e in envs:
        b = got[e.resolved_id()]
        assert b.model_dump(exclude={"payload"}) == e.model_dump(exclude={"payload"})
        assert repr(b.payload) == repr(e.payload)  # NaN and infinities included
    assert len(d) == 0
    d.add(envs)
    d.drop(["s"])
    assert len(d) == 1 and d.sources() == {"t.child"}
