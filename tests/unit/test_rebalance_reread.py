"""Acknowledgements of messages a rebalance overtook never count (streams/runtime/rebalance_reread.py).

The case ``bench/ingest.py --workers 2 --sf 0.01`` found: offsets 8..18 of a records partition were fetched in
generation 1; the second worker joined; faust's stream skipped them during the rebalance and acknowledged them;
the revocation had dropped the partition's acknowledgements and committed offset, so faust committed 19 and the
partition's owner in generation 2 (the same worker) started after 11 records nobody had read."""

from __future__ import annotations

import asyncio
import threading
from collections import defaultdict
from types import SimpleNamespace
from typing import Any

from faust.transport.consumer import Consumer
from faust.types import TP
from faust.types.tuples import ConsumerMessage
from intervaltree import IntervalTree

from esc.streams.runtime import rebalance_reread

FAUST_ACK = getattr(Consumer.ack, "__wrapped__", Consumer.ack)  # faust's own, whether or not the patch is in
FAUST_PERFORM_SEEK = getattr(Consumer.perform_seek, "__wrapped__", Consumer.perform_seek)
FAUST_NEW_OFFSET = getattr(Consumer._new_offset, "__wrapped__", Consumer._new_offset)
P3 = TP("esc.records", 3)


def app(generation: int) -> Any:
    a = SimpleNamespace(consumer_generation_id=generation, topics=SimpleNamespace(acks_enabled_for=lambda t: True),
                        rebalances=0)  # fmt: skip

    def on_rebalance_start() -> None:
        a.rebalances += 1

    a.on_rebalance_start = on_rebalance_start
    return a


def consumer(a: Any) -> Any:
    return SimpleNamespace(
        app=a,
        _acked=defaultdict(list),
        _acked_index=defaultdict(set),
        _gap=defaultdict(IntervalTree),
        _committed_offset=defaultdict(lambda: None),
        _unacked_messages=set(),
        _n_acked=0,
        _waiting_for_ack=None,
        _lock=threading.Lock(),
    )


def message(offset: int, generation: int | None) -> ConsumerMessage:
    return ConsumerMessage(P3.topic, P3.partition, offset, 0.0, None, None, None, b"k", b"v", None,
                           generation_id=generation)  # fmt: skip


def revoke(c: Any) -> None:
    """What faust's Consumer.on_partitions_revoked forgets about a revoked partition."""
    for state in (c._gap, c._acked, c._acked_index, c._committed_offset):
        state.pop(P3, None)


def the_bench_case(patched: bool) -> int | None:
    """Generation 1 read 0..7 and committed 8; 8..18 were fetched; a rebalance starts; the stream skips and acks
    8..18; generation 2 assigns the partition back and seeks to the committed 8. Returns faust's next commit."""
    a = app(1)
    if patched:
        rebalance_reread.install(a)
    ack = Consumer.ack if patched else FAUST_ACK
    c = consumer(a)
    c._committed_offset[P3] = 8
    fetched = [message(o, 1) for o in range(8, 19)]
    a.on_rebalance_start()  # the rebalance listener, synchronously, before anything else
    revoke(c)
    for m in fetched:
        ack(c, m)
    a.consumer_generation_id = 2
    c._committed_offset[P3] = 8  # perform_seek after the assignment
    return FAUST_NEW_OFFSET(c, P3)  # type: ignore[no-any-return]


def test_faust_alone_commits_past_messages_skipped_during_a_rebalance() -> None:
    """The bug: offsets 8..18 were never processed, and faust commits 19."""
    assert the_bench_case(patched=False) == 19


def test_acks_of_messages_a_rebalance_overtook_are_ignored() -> None:
    a = app(1)
    rebalance_reread.install(a)
    assert Consumer.ack is not FAUST_ACK
    a.on_rebalance_start()
    assert a.rebalances == 1  # the app's own handler still runs
    c = consumer(a)
    c._committed_offset[P3] = 8
    stale = message(8, 1)
    c._unacked_messages.add(stale)
    assert Consumer.ack(c, stale) is False
    assert stale.acked and stale not in c._unacked_messages  # never acked again, never holds the commit floor
    assert c._acked[P3] == []


def test_the_bench_case_commits_nothing_past_unread_records() -> None:
    assert the_bench_case(patched=True) is None  # committed stays 8: generation 2 reads 8..18 again


def test_acks_in_the_generation_after_the_rebalance_count() -> None:
    a = app(1)
    rebalance_reread.install(a)
    a.on_rebalance_start()
    a.consumer_generation_id = 2
    c = consumer(a)
    c._committed_offset[P3] = 8
    for o in range(8, 12):
        assert Consumer.ack(c, message(o, 2)) is True
    assert FAUST_NEW_OFFSET(c, P3) == 12


def test_before_any_rebalance_every_ack_counts() -> None:
    a = app(1)
    c = consumer(a)
    rebalance_reread.install(app(1))  # (the patch is class-wide; this app never rebalanced)
    assert Consumer.ack(c, message(0, 1)) is True
    assert Consumer.ack(c, message(1, None)) is True


# -- partitions without a committed offset ------------------------------------------------------------------------
CHANGELOG = TP("app-seen-records-changelog", 2)


class Seeker:
    """What perform_seek uses of faust's consumer, with aiokafka's ``seek_to_committed`` semantics: a partition
    whose committed offset is None or 0 is not sought (its fetch position stays where it was)."""

    def __init__(self, committed: dict[TP, int | None], position: dict[TP, int]) -> None:
        self.committed, self.position = committed, position
        self._read_offset: dict[TP, int | None] = defaultdict(lambda: None)
        self._committed_offset: dict[TP, int | None] = defaultdict(lambda: None)

    def _is_changelog_tp(self, tp: TP) -> bool:
        return tp.topic.endswith("-changelog")

    async def seek_to_committed(self) -> dict[TP, int | None]:
        for tp, off in self.committed.items():
            if off and off > 0:
                self.position[tp] = off
        return dict(self.committed)

    async def earliest_offsets(self, *tps: TP) -> dict[TP, int]:
        return {tp: 0 for tp in tps}

    async def seek(self, tp: TP, offset: int) -> None:  # faust's Consumer.seek
        self.position[tp] = offset
        self._read_offset[tp] = offset or None

    async def seek_wait(self, to: dict[TP, int]) -> None:
        for tp, off in to.items():
            self.position[tp] = off
            if off > 0:
                self._read_offset[tp] = off
            else:
                self._read_offset.pop(tp, None)


P2 = TP("esc.records", 2)


def test_faust_alone_leaves_a_partition_without_commit_at_the_revoked_generations_position() -> None:
    """The second bench case: partition 2 had no commit when the rebalance began; generation 1 had fetched up to
    7,600 into a buffer the revocation cleared; generation 2 resumed there."""
    c = Seeker({P2: None, P3: 8, CHANGELOG: None}, {P2: 7600, P3: 40, CHANGELOG: 55})
    asyncio.run(FAUST_PERFORM_SEEK(c))
    assert c.position == {P2: 7600, P3: 8, CHANGELOG: 55}


def test_after_the_seek_every_partition_reads_from_its_committed_offset_or_its_start() -> None:
    rebalance_reread.install(app(1))
    c = Seeker({P2: None, P3: 8, CHANGELOG: None}, {P2: 7600, P3: 40, CHANGELOG: 55})
    asyncio.run(Consumer.perform_seek(c))  # type: ignore[arg-type]
    assert c.position == {P2: 0, P3: 8, CHANGELOG: 55}  # the changelog is recovery's to position
    assert c._read_offset[P2] is None and c._read_offset[P3] == 8
    assert c._committed_offset[P3] == 8 and c._committed_offset[P2] is None


# -- a record of the old position delivered after the seek back ---------------------------------------------------
def drain(c: Any, offsets: list[int], guard: bool) -> list[int]:
    """faust's fetch loop (Consumer._drain_messages): drops a message below the partition's read offset, else
    delivers it and sets the read offset to it. Returns the offsets delivered."""
    out = []
    for off in offsets:
        if guard:
            rebalance_reread.keep(c, P2, off)
        r = c._read_offset[P2]
        if r is None or off >= r:
            out.append(off)
            c._read_offset[P2] = off
    return out


def test_faust_alone_drops_the_records_read_again_after_a_stale_one() -> None:
    """Seen in the bench: after the seek to 0, a fetch issued before it delivered 6,673 first."""
    c = Seeker({}, {})
    assert drain(c, [6673, 0, 1, 2, 6673, 6674], guard=False) == [6673, 6673, 6674]


def test_no_message_is_dropped_as_read_before() -> None:
    c = Seeker({}, {})
    assert drain(c, [6673, 0, 1, 2, 6673, 6674], guard=True) == [6673, 0, 1, 2, 6673, 6674]


def test_records_of_a_fetch_that_overlapped_a_seek_are_read_again_from_the_seek() -> None:
    c = Seeker({P2: None, P3: 8, CHANGELOG: None}, {P2: 7600, P3: 40, CHANGELOG: 55})

    async def fetch() -> Any:  # a fetch issued before the seek, returning while it happens
        yield P2, SimpleNamespace(offset=7600)
        await Consumer.perform_seek(c)  # type: ignore[arg-type]
        yield P2, SimpleNamespace(offset=7601)  # old position or new: cannot be told
        c.position[P3] = 10  # (the consumer moved on as it fetched 8 and 9)
        yield P3, SimpleNamespace(offset=8)
        yield P3, SimpleNamespace(offset=9)
        yield CHANGELOG, SimpleNamespace(offset=56)  # changelogs are recovery's: never dropped here

    async def run() -> list[tuple[TP, int]]:
        rebalance_reread.install(app(1))
        return [(tp, m.offset) async for tp, m in rebalance_reread.in_order(c, fetch())]

    assert asyncio.run(run()) == [(P2, 7600), (CHANGELOG, 56)]
    assert c.position[P2] == 0 and c.position[P3] == 8  # sought again where the seek put them: read again in order


def test_resuming_a_flowing_flow_keeps_the_queues_and_a_suspended_one_still_clears_them() -> None:
    """Point 4: faust's recovery seeks the stream partitions, then resumes the flow that has been flowing since it
    read the changelogs; mode's resume cleared the queues, so records fetched after the seek (read offsets
    recorded) were read by nobody. A resume after a suspension still clears: those partitions are sought again."""
    from mode.utils.queues import FlowControlEvent, FlowControlQueue

    async def main() -> tuple[int, int]:
        rebalance_reread.install(app(1))
        flow = FlowControlEvent(initially_suspended=True)
        queue: FlowControlQueue[int] = FlowControlQueue(flow_control=flow, clear_on_resume=True)
        flow.resume()  # recovery: the changelogs are read
        for offset in (29, 30, 31):  # fetched after the seek, while flowing
            queue.put_nowait(offset)
        flow.resume()  # recovery: streams resumed after the seek
        kept = queue.qsize()
        flow.suspend()  # the next rebalance
        flow.resume()
        return kept, queue.qsize()

    kept, after_suspension = asyncio.run(main())
    assert kept == 3  # faust's own resume leaves 0 here
    assert after_suspension == 0
