"""The commit-floor shim: faust must not commit past a message still in a stream (faust-streaming #606)."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

from faust.transport.consumer import Consumer
from faust.types import TP
from intervaltree import IntervalTree

from esc.streams.runtime.compat import new_offset_below_in_flight, patch_faust_commit_floor

# faust's own computation, whether or not another test already installed the shim
FAUST_NEW_OFFSET = getattr(Consumer._new_offset, "__wrapped__", Consumer._new_offset)
RECORDS = TP("esc.records", 0)
OTHER = TP("esc.records", 1)


@dataclass(eq=False)
class Msg:
    tp: TP
    offset: int
    acked: bool = False


def consumer(committed: int | None, acked: list[int], in_flight: list[tuple[TP, int]]) -> Any:
    return SimpleNamespace(
        _acked=defaultdict(list, {RECORDS: list(acked)}),
        _acked_index=defaultdict(set, {RECORDS: set(acked)}),
        _gap=defaultdict(IntervalTree),
        _committed_offset=defaultdict(lambda: None, {RECORDS: committed}),
        _unacked_messages={Msg(tp, o) for tp, o in in_flight},
    )


def test_unpatched_faust_commits_over_a_single_in_flight_head_message() -> None:
    """The bug the shim exists for: committed 292 (next to read), 292 still in a stream, 293..300 acked."""
    c = consumer(292, list(range(293, 301)), [(RECORDS, 292)])
    assert FAUST_NEW_OFFSET(c, RECORDS) == 301


def test_in_flight_head_message_holds_the_commit_until_it_is_acked() -> None:
    c = consumer(292, list(range(293, 301)), [(RECORDS, 292)])
    assert new_offset_below_in_flight(c, RECORDS, FAUST_NEW_OFFSET) is None
    assert c._acked[RECORDS] == list(range(293, 301))  # nothing acked was forgotten
    c._unacked_messages = set()
    c._acked[RECORDS].insert(0, 292)
    assert new_offset_below_in_flight(c, RECORDS, FAUST_NEW_OFFSET) == 301


def test_commit_stops_below_an_in_flight_message_in_the_middle() -> None:
    c = consumer(None, [10, 11, 12, 14, 15], [(RECORDS, 13)])
    assert new_offset_below_in_flight(c, RECORDS, FAUST_NEW_OFFSET) == 13
    assert c._acked[RECORDS] == [14, 15]


def test_in_flight_messages_of_other_partitions_and_acked_ones_do_not_hold_the_commit() -> None:
    c = consumer(None, [10, 11, 12], [(OTHER, 5)])
    c._unacked_messages.add(Msg(RECORDS, 11, acked=True))
    assert new_offset_below_in_flight(c, RECORDS, FAUST_NEW_OFFSET) == 13


def test_a_fetch_gap_is_never_committed_past_the_in_flight_message_it_ends_on() -> None:
    """faust's gap for a jump from 10 to 15 covers 11..15, the fetched message 15 included."""
    c = consumer(None, [9, 10, 16], [(RECORDS, 15)])
    c._gap[RECORDS].addi(11, 16)
    assert FAUST_NEW_OFFSET(consumer(None, [9, 10, 16], []), RECORDS) == 11  # (without the gap)
    unpatched = consumer(None, [9, 10, 16], [(RECORDS, 15)])
    unpatched._gap[RECORDS].addi(11, 16)
    assert FAUST_NEW_OFFSET(unpatched, RECORDS) == 17  # faust alone: over 15
    assert new_offset_below_in_flight(c, RECORDS, FAUST_NEW_OFFSET) <= 15


def test_the_patch_is_installed_once() -> None:
    patch_faust_commit_floor()
    patched = Consumer._new_offset
    patch_faust_commit_floor()
    assert Consumer._new_offset is patched
    c = consumer(292, list(range(293, 301)), [(RECORDS, 292)])
    assert c and Consumer._new_offset(c, RECORDS) is None


class CountingSet(set[Msg]):
    """The consumer's unacked messages, counting the passes over them."""

    passes = 0

    def __iter__(self) -> Any:
        type(self).passes += 1
        return super().__iter__()


def test_a_commit_takes_one_pass_over_the_in_flight_messages_for_all_partitions() -> None:
    patch_faust_commit_floor()
    c = consumer(None, [10, 11, 12, 14], [(RECORDS, 13), (OTHER, 3)])
    c._acked[OTHER] = [1, 2]
    c._unacked_messages = CountingSet(c._unacked_messages)
    c._should_commit = lambda tp, offset: True
    c._new_offset = lambda tp: Consumer._new_offset(c, tp)
    CountingSet.passes = 0
    offsets = Consumer._filter_committable_offsets(c, [RECORDS, OTHER])
    assert offsets == {RECORDS: 13, OTHER: 3}
    assert CountingSet.passes == 1
    assert c._esc_floors is None  # only for the span of the commit
