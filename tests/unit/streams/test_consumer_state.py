"""``partition_lines``: the worker's SIGUSR1 dump says per partition how far it was fetched, read and committed."""

from __future__ import annotations

from types import SimpleNamespace

from faust.types import TP

from esc.streams.runtime.consumer_state import partition_lines

P0, P1 = TP("t.profiles", 0), TP("t.records", 1)


def test_a_line_per_partition_with_its_offsets_and_the_flags_set() -> None:
    """The shape of the stall the leaving test hit: read far past the committed offset, nothing paused."""
    states = {P0: SimpleNamespace(_position=124, paused=False, highwater=124),
              P1: SimpleNamespace(_position=None, paused=True, highwater=None)}  # fmt: skip
    subscription = SimpleNamespace(assignment=SimpleNamespace(state_value=states.__getitem__))
    fetcher = SimpleNamespace(_subscriptions=SimpleNamespace(subscription=subscription), _records={P1: []},
                              _in_flight=set())  # fmt: skip
    consumer = SimpleNamespace(
        assignment=lambda: {P0, P1}, _thread=SimpleNamespace(_consumer=SimpleNamespace(_fetcher=fetcher)),
        flow_active=True, _active_partitions={P0}, _paused_partitions=set(), _buffered_partitions=set(),
        _read_offset={P0: 123}, _committed_offset={P0: 40},
    )  # fmt: skip
    assert partition_lines(consumer).splitlines() == [
        "Consumer: 2 partitions, flow active True",
        "Consumer partition t.profiles/0: position 124, read 123, committed 40",
        "Consumer partition t.records/1: position None, read None, committed None aiokafka-paused inactive "
        "fetched-unread",
    ]


def test_a_consumer_it_cannot_read_gives_a_line_not_an_error() -> None:
    def not_started() -> set[TP]:
        raise RuntimeError("not started")

    assert partition_lines(SimpleNamespace(assignment=not_started)).startswith("Consumer: no assignment")
    bare = SimpleNamespace(assignment=lambda: {P0})  # none of the private attributes
    lines = partition_lines(bare).splitlines()
    assert lines[0].startswith("Consumer: 1 partitions, flow active None, Faust's state unread")
    assert lines[1] == "Consumer partition t.profiles/0: position None, read None, committed None"
