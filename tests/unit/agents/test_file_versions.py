"""A file's new version replaces the old one whole in its source's profile: edits, removed rows and deletions leave
the statistics a clean run of the final files would give (agents/source_state.py)."""

from __future__ import annotations

from typing import Any

from esc.agents.contract_agent import ContractAgent, SourceComplete
from esc.agents.profiler import Watermark, profile_batch
from esc.streams.events import RecordEnvelope


def rows(file: str, version: str, payloads: list[dict[str, Any]]) -> list[RecordEnvelope]:
    return [
        RecordEnvelope(
            source="T",
            record_id=f"{file}:row={i}",
            payload=p,
            format="csv",
            location={"file": file, "row": i},
            file_hash=version,
        )
        for i, p in enumerate(payloads, start=1)
    ]


class Feed:
    def __init__(self) -> None:
        self.agent = ContractAgent()
        self.offset = -1
        self.now = 0.0

    def send(self, envs: list[RecordEnvelope], done: list[SourceComplete] = ()) -> None:  # type: ignore[assignment]
        deltas = []
        if envs:
            self.offset += len(envs)
            deltas = profile_batch(envs, Watermark(stream="r/0", offset=self.offset))
        self.now += 1
        self.agent.apply(deltas, list(done), now=self.now)

    def records(self) -> int:
        return self.agent.sources["T"].profile.records

    def fields(self) -> list[str]:
        return [f.name for f in self.agent.contract.sources["T"].fields]


V1 = [{"id": str(i), "name": f"n{i}"} for i in range(1, 31)]
V2 = [{"id": str(i), "name": f"n{i}", "colour": "red" if i % 3 else ""} for i in range(1, 36)]


def test_an_edited_file_replaces_its_old_version_once_the_new_one_is_complete() -> None:
    feed = Feed()
    feed.send(rows("T.csv", "h1", V1), SourceComplete.for_file("T.csv", {"T": 30}, "h1"))
    assert feed.records() == 30 and feed.agent.contract.sources["T"].identity_key == ["id"]
    new = rows("T.csv", "h2", V2)
    feed.send(new[:20], SourceComplete.for_file("T.csv", {"T": 35}, "h2"))
    assert feed.records() == 30 and "colour" not in feed.fields()  # half a new version is not the source
    assert "T" not in feed.agent.settled  # but the source waits for the rest of it
    feed.send(new[20:])
    assert feed.records() == 35  # not 65: nothing counted twice
    assert "colour" in feed.fields() and feed.agent.contract.sources["T"].records == 35
    assert "T" in feed.agent.settled


def test_the_completion_may_arrive_first_and_a_redelivered_delta_counts_once() -> None:
    feed = Feed()
    feed.send([], SourceComplete.for_file("T.csv", {"T": 30}, "h1"))
    first = rows("T.csv", "h1", V1)
    feed.send(first[:10])
    assert "T" not in feed.agent.settled
    deltas = profile_batch(first[10:], Watermark(stream="r/0", offset=29))
    feed.agent.apply(deltas, now=5.0)
    feed.agent.apply(deltas, now=6.0)  # at-least-once: the same delta again
    assert feed.records() == 30 and "T" in feed.agent.settled


def test_removed_rows_and_a_deleted_file_leave_the_profile() -> None:
    feed = Feed()
    feed.send(
        rows("a/T.csv", "h1", V1) + rows("b/T.csv", "g1", V1[:5]),
        SourceComplete.for_file("a/T.csv", {"T": 30}, "h1")
        + SourceComplete.for_file("b/T.csv", {"T": 5}, "g1"),
    )
    assert feed.records() == 35
    feed.send(rows("a/T.csv", "h2", V1[:12]), SourceComplete.for_file("a/T.csv", {"T": 12}, "h2"))
    assert feed.records() == 17 and feed.agent.sources["T"].files == {"a/T.csv": 12, "b/T.csv": 5}
    feed.send([], SourceComplete.for_file("b/T.csv", {"T": 0}))  # b/T.csv deleted
    assert feed.records() == 12 and feed.agent.sources["T"].files == {"a/T.csv": 12}


def test_state_round_trips_mid_edit() -> None:
    feed = Feed()
    feed.send(rows("T.csv", "h1", V1), SourceComplete.for_file("T.csv", {"T": 30}, "h1"))
    new = rows("T.csv", "h2", V2)
    feed.send(new[:20], SourceComplete.for_file("T.csv", {"T": 35}, "h2"))
    feed.agent = ContractAgent.from_state(feed.agent.to_state())  # a restart in the middle of the new version
    assert feed.records() == 30
    feed.send(new[20:])
    assert feed.records() == 35 and "colour" in feed.fields()


def test_version_1_state_is_read() -> None:
    feed = Feed()
    feed.send(rows("T.csv", "h1", V1), SourceComplete.for_file("T.csv", {"T": 30}, "h1"))
    state = feed.agent.to_state()
    src = state["sources"]["T"]
    v1 = {
        "profile": feed.agent.sources["T"].profile.to_dict(),
        "format": src["format"],
        "parent": None,
        "array_path": None,
        "files": {"T.csv": 30},
        "completed": {"T.csv": 30},
        "last_seen": 1.0,
        "settled": True,
        "ever_settled": True,
    }
    old = {**state, "state_version": 1, "sources": {"T": v1}}
    agent = ContractAgent.from_state(old)
    assert agent.sources["T"].profile.records == 30 and agent.sources["T"].waiting() == []
