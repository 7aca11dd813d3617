from __future__ import annotations

import json
import time
import zlib
from collections import Counter, defaultdict
from typing import Any

from esc.agents.contract_agent import ContractAgent, SourceComplete, contract_message, diff_event
from esc.agents.extractors import PENDING, covers
from esc.agents.profiler import ProfileDelta, Watermark, profile_batch, records_from_envelopes
from esc.contract.evolve import evolve
from esc.contract.inference import infer
from esc.contract.model import Contract, ContractDiff
from esc.contract.profile import SourceProfile
from esc.streams.events import RecordEnvelope
from tests.unit.agents.conftest import Pack


def structure(c: Contract) -> tuple[dict[str, list[str]], set[tuple[object, ...]], set[tuple[str, str]]]:
    keys = {s: list(src.identity_key) for s, src in c.sources.items()}
    return keys, {fk.signature() for fk in c.foreign_keys}, {(h.parent, h.child) for h in c.hierarchy}


def partition(envs: list[RecordEnvelope], n: int) -> list[list[RecordEnvelope]]:
    parts: list[list[RecordEnvelope]] = [[] for _ in range(n)]
    for e in envs:
        parts[zlib.crc32(e.key().encode()) % n].append(e)
    return parts


def stream_pack(chinook: Pack, agent: ContractAgent, batch: int = 250, lag: int = 2) -> list[Contract]:
    """Three profiler partitions over the keyed records topic; completions reach the agent before the deltas of
    slower partitions (``lag`` batches behind)."""
    parts = partition(chinook.envelopes, 3)
    counts: dict[str, Counter[str]] = defaultdict(Counter)
    for e in chinook.envelopes:
        counts[e.location["file"]][e.source] += 1
    completions = [c for f, cs in counts.items() for c in SourceComplete.for_file(f, cs)]
    versions = []
    cursor = [0, 0, 0]
    step = 0
    sent_completions = False
    while any(cursor[p] < len(parts[p]) for p in range(3)):
        deltas: list[ProfileDelta] = []
        for p in range(3):
            if p != 0 and step % lag:  # partitions 1 and 2 run slower
                continue
            chunk = parts[p][cursor[p] : cursor[p] + batch]
            if chunk:
                deltas += profile_batch(
                    chunk, Watermark(stream=f"esc.records/{p}", offset=cursor[p] + len(chunk) - 1)
                )
                cursor[p] += len(chunk)
        comps = completions if not sent_completions and step == 3 else []
        sent_completions = sent_completions or bool(comps)
        c, diff = agent.apply(deltas, comps, now=1000.0 + step)
        if diff is not None:
            versions.append(c)
        step += 1
    return versions


def test_streamed_pack_ends_with_the_batch_discovery_structure(chinook: Pack) -> None:
    agent = ContractAgent()
    versions = stream_pack(chinook, agent)
    final = agent.contract
    assert structure(final) == structure(chinook.discovery.contract)
    # keys and links never appeared before their sources had settled: no wrong key from a prefix
    want_keys, want_fks, want_h = structure(chinook.discovery.contract)
    for c in versions:
        keys, fks, h = structure(c)
        assert all(k == want_keys[s] for s, k in keys.items() if k), keys
        assert fks <= want_fks and h <= want_h
    assert versions[0].version == 1 and final.version == len(versions)
    assert all(covers(final, s) for s in final.sources)


def test_prefix_key_trap_is_avoided(chinook: Pack) -> None:
    prefix = [e for e in chinook.envelopes if e.source == "PlaylistTrack"][:100]
    naive = infer(
        {"PlaylistTrack": SourceProfile.of_records("PlaylistTrack", records_from_envelopes(prefix))}
    )
    assert naive.sources["PlaylistTrack"].identity_key == ["TrackId"]  # the trap is real on a prefix
    agent = ContractAgent()
    c, diff = agent.apply(profile_batch(prefix, Watermark(stream="p", offset=99)), now=0.0)
    assert diff is not None and c.sources["PlaylistTrack"].identity_key == []
    assert PENDING in c.sources["PlaylistTrack"].key_evidence
    assert not covers(c, "PlaylistTrack")
    assert {i.kind for i in diff.added} >= {"source", "field", "entity"}
    assert "PlaylistTrack (+100 records, p@99)" in diff.reason


def test_completion_before_deltas_waits_for_the_counts() -> None:
    envs = [
        RecordEnvelope(
            source="t",
            record_id=f"t.csv:row={i}",
            payload={"tId": i, "v": "x"},
            format="csv",
            location={"file": "t.csv", "row": i},
        )
        for i in range(1, 11)
    ]
    agent = ContractAgent()
    agent.apply([], [SourceComplete(source="t", file="t.csv", records=10)], now=0.0)
    c, _ = agent.apply(profile_batch(envs[:6], Watermark(stream="s", offset=5)), now=1.0)
    assert "t" not in agent.settled and c.sources["t"].identity_key == [] and c.sources["t"].format == "csv"
    c, diff = agent.apply(profile_batch(envs[6:], Watermark(stream="s", offset=9)), now=2.0)
    assert agent.settled == {"t"} and c.sources["t"].identity_key == ["tId"]
    assert diff is not None and any(i.kind == "identity_key" for i in diff.added)
    assert "settled: t" in diff.reason


def test_redelivered_deltas_are_dropped() -> None:
    envs = [RecordEnvelope(source="o", payload={"oid": i}) for i in range(5)]
    deltas = profile_batch(envs, Watermark(stream="esc.records/1", offset=4))
    agent = ContractAgent()
    agent.apply(deltas, now=0.0)
    _, diff = agent.apply(deltas, now=0.5)
    assert diff is None and agent.dropped == 1 and agent.profiles()["o"].records == 5


def test_a_delta_spanning_partitions_is_dropped_only_when_every_partition_was_applied() -> None:
    envs = [RecordEnvelope(source="o", payload={"oid": i}) for i in range(6)]
    agent = ContractAgent()
    both = profile_batch(envs[:4], Watermark(stream="r/0", offset=1, first=0, also={"r/1": 1}))
    agent.apply(both, now=0.0)
    agent.apply(both, now=0.1)  # re-delivered as a whole
    assert agent.dropped == 1 and agent.profiles()["o"].records == 4
    # partition 1 moved on: taken; the applied marks only ever grow
    more = profile_batch(envs[4:], Watermark(stream="r/1", offset=3, also={"r/0": 0}))
    agent.apply(more, now=0.2)
    assert agent.dropped == 1 and agent.profiles()["o"].records == 6
    assert agent.applied == {"r/0\x1fo": 1, "r/1\x1fo": 3}


def test_topic_sources_settle_by_count_or_idle_time() -> None:
    agent = ContractAgent(settle_records=20, settle_seconds=5.0)
    many = [RecordEnvelope(source="big", payload={"bigId": i, "x": i % 3}) for i in range(25)]
    few = [RecordEnvelope(source="small", payload={"smallId": i}) for i in range(3)]
    c, _ = agent.apply(profile_batch(many + few, Watermark(stream="s", offset=27)), now=100.0)
    assert agent.settled == {"big"} and c.sources["big"].identity_key == ["bigId"]
    assert c.sources["small"].identity_key == [] and not covers(c, "small")
    c, _ = agent.tick(now=102.0)
    assert "small" not in agent.settled
    c, diff = agent.tick(now=105.5)
    assert agent.settled == {"big", "small"} and c.sources["small"].identity_key == ["smallId"]
    assert diff is not None and covers(c, "small")


def test_settling_without_a_key_uncovers_nothing_but_reports_newly_settled() -> None:
    agent = ContractAgent(settle_records=4)
    rows = [RecordEnvelope(source="notes", payload={"word": w}) for w in ["a", "a", "b", "b"]]
    c, diff = agent.apply(profile_batch(rows[:2], Watermark(stream="s", offset=1)), now=0.0)
    assert diff is not None and not covers(c, "notes")
    v = c.version
    c, diff = agent.apply(profile_batch(rows[2:], Watermark(stream="s", offset=3)), now=1.0)
    assert agent.newly_settled == ["notes"] and c.sources["notes"].identity_key == []
    assert covers(c, "notes") and c.version == v and diff is None


def test_state_round_trips_and_continues_identically(chinook: Pack) -> None:
    envs = chinook.envelopes
    half = len(envs) // 2
    a = ContractAgent()
    a.apply(profile_batch(envs[:half], Watermark(stream="s", offset=half - 1)), now=0.0)
    b = ContractAgent.from_state(json.loads(json.dumps(a.to_state())))
    assert b.contract == a.contract and b.profiles() == a.profiles()
    rest = profile_batch(envs[half:], Watermark(stream="s", offset=len(envs) - 1))
    counts: dict[str, Counter[str]] = defaultdict(Counter)
    for e in envs:
        counts[e.location["file"]][e.source] += 1
    comps = [c for f, cs in counts.items() for c in SourceComplete.for_file(f, cs)]
    ca, da = a.apply(rest, comps, now=1.0)
    cb, db = b.apply(rest, comps, now=1.0)
    assert ca == cb and da == db
    assert structure(ca) == structure(chinook.discovery.contract)


def test_timing_of_inference_and_evolution_on_chinook(chinook: Pack) -> None:
    """Prints numbers (not asserted): the cost of one re-inference over every chinook source."""
    profiles, meta = chinook.discovery.profiles, chinook.discovery.meta
    t0 = time.perf_counter()
    observed = infer(profiles, meta)
    t1 = time.perf_counter()
    c1, _ = evolve(None, observed, "first")
    t2 = time.perf_counter()
    evolve(c1, infer(profiles, meta), "again")
    t3 = time.perf_counter()
    agent = ContractAgent()
    seconds: list[float] = []
    original = agent.apply

    def timed(*args: Any, **kw: Any) -> tuple[Contract, ContractDiff | None]:
        t = time.perf_counter()
        out = original(*args, **kw)
        seconds.append(time.perf_counter() - t)
        return out

    agent.apply = timed  # type: ignore[method-assign]
    stream_pack(chinook, agent)
    seconds.sort()
    p95 = seconds[int(0.95 * (len(seconds) - 1))]
    print(
        f"\nchinook streamed: {len(seconds)} applies, p50 {1000 * seconds[len(seconds) // 2]:.1f} ms, "
        f"p95 {1000 * p95:.1f} ms, max {1000 * seconds[-1]:.1f} ms"
    )
    print(
        f"\nchinook: infer {1000 * (t1 - t0):.1f} ms, evolve(None) {1000 * (t2 - t1):.1f} ms, "
        f"infer+evolve(prev) {1000 * (t3 - t2):.1f} ms, last agent apply {1000 * agent.last_seconds:.1f} ms"
    )
    assert c1.version == 1


def test_diff_event_and_contract_message() -> None:
    agent = ContractAgent()
    envs = [RecordEnvelope(source="o", payload={"oid": i, "name": f"n{i}"}) for i in range(3)]
    c, diff = agent.apply(profile_batch(envs, Watermark(stream="s", offset=2)), now=0.0)
    assert diff is not None
    ev = diff_event(diff, c)
    body = json.loads(ev.model_dump_json())
    assert body["specversion"] == "1.0" and body["type"] == "esc.schema.diff"
    assert body["data"]["from_version"] == 0 and body["data"]["to_version"] == 1
    assert [i["target"] for i in body["data"]["added"]["source"]] == ["o"]
    assert {i["target"] for i in body["data"]["added"]["field"]} == {"o.oid", "o.name"}
    assert "o (+3 records, s@2)" in body["data"]["reason"]
    assert diff_event(diff, c).id == ev.id
    key, value = contract_message(c)
    assert key == b"esc" and json.loads(value)["version"] == 1
