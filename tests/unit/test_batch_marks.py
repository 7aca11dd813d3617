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
