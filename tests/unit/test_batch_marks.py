"""Deltas of records read again after a rebalance below the highest offset applied (streams/runtime/seen_table.py
``SharedSeen._sequence``): the two-worker bench's case. Worker A profiled partition 0 up to offset 5,846 (a batch
that held a record of the old position); after the rebalance worker B read the partition again from its committed
offset and profiled records at 0..614 that nobody had profiled. Offsets alone say 'applied already'; the batch's
own sequence says it is new, and the same delta sent twice still counts once."""

from __future__ import annotations

from types import SimpleNamespace

from esc.agents.contract_agent import ContractAgent, SourceComplete
from esc.agents.profiler import Watermark, profile_batch
from esc.streams.events import RecordEnvelope
from esc.streams.runtime.seen_table import SharedSeen


def envs(lo: int, hi: int) -> list[RecordEnvelope]:
    return [RecordEnvelope(source="t", record_id=f"t.csv:row={i}", payload={"tId": i, "v": "x"}, format="csv",
                           location={"file": "t.csv", "row": i}) for i in range(lo, hi)]  # fmt: skip


def run(a_mark: dict[str, int], b_mark: dict[str, int]) -> ContractAgent:
    agent = ContractAgent()
    agent.apply([], [SourceComplete(source="t", file="t.csv", records=20)], now=0.0)
    a = profile_batch(envs(0, 10), Watermark(stream="r/0", offset=5846, first=5840, also=a_mark))
    b = profile_batch(envs(10, 20), Watermark(stream="r/0", offset=614, first=0, also=b_mark))
    agent.apply(a, now=1.0)
    agent.apply(b, now=2.0)
    agent.apply(b, now=3.0)  # re-delivered
    return agent


def test_offsets_alone_drop_new_records_read_again_below_the_applied_offset() -> None:
    agent = run({}, {})
    assert agent.sources["t"].profile.records == 10 and "t" not in agent.settled


def test_the_batch_sequence_keeps_them_and_still_drops_a_re_delivery() -> None:
    seen = SimpleNamespace(_last_sequence=0)
    s1, s2 = SharedSeen._sequence(seen), SharedSeen._sequence(seen)  # type: ignore[arg-type]
    assert s2 > s1
    agent = run({"r@A": s1}, {"r@B": s2})
    assert agent.sources["t"].profile.records == 20 and agent.settled == {"t"}
    assert agent.dropped == 1


def test_records_of_a_file_profiled_whole_are_not_profiled_and_forget_an_older_versions_mark() -> None:
    """streams/connectors/file_profiles.py: the record's evidence came with its file's profile update. A mark an
    earlier version left (read record by record) is forgotten, so that content read record by record again later
    (A, B, A) is counted for its new version."""
    import asyncio

    from esc.agents.stores.seen import content_hash
    from esc.streams.connectors.file_profiles import PROFILED_HEADER, PROFILED_VALUE

    def event(offset: int, key: bytes, value: bytes, whole: bool) -> SimpleNamespace:
        headers = [(PROFILED_HEADER, PROFILED_VALUE)] if whole else None
        return SimpleNamespace(key=key, value=value, message=SimpleNamespace(partition=0, offset=offset,
                                                                             headers=headers, acked=False))  # fmt: skip

    values = [env.model_dump_json().encode() for env in envs(0, 3)]
    data: dict[bytes, bytes] = {b"t\x1fold": content_hash(values[0])}
    staged: list[object] = []
    profiled: list[list[bytes | None]] = []

    async def profile(fresh: list[bytes | None], *args: object) -> list[object]:
        profiled.append(fresh)
        return []

    async def nothing() -> None:
        pass

    seen = SimpleNamespace(owned={0}, table=SimpleNamespace(data=data), records_topic="r", producer="w",
                           _sequence=lambda: 1, outbox=SimpleNamespace(stage=lambda *a: staged.append(a)),
                           send_staged=nothing)  # fmt: skip
    batch = [event(0, b"t\x1fold", values[0], True), event(1, b"t\x1fnew", values[1], True),
             event(2, b"t\x1fpushed", values[2], False)]  # fmt: skip
    asyncio.run(SharedSeen._profile(seen, batch, profile))  # type: ignore[arg-type]
    assert profiled == [[values[2]]]  # only the record without the header
    assert data == {b"t\x1fpushed": content_hash(values[2])}  # the old mark forgotten, none added for the new one
    ((_, _, marks),) = staged  # type: ignore[misc]
    assert marks == [(0, b"t\x1fold", None), (0, b"t\x1fpushed", content_hash(values[2]))]
