"""Small, documented compatibility shims for faust-streaming 0.15 (with aiokafka 0.14)."""

from __future__ import annotations

from typing import Any


def patch_faust_for_aiokafka_014() -> None:
    """faust's ``Producer.supports_headers`` reads ``client.api_version``, which aiokafka 0.14 removed.

    Every broker ESC supports (Kafka >= 0.11; we run 3.9) supports headers, so answer True.
    """
    from faust.transport.drivers import aiokafka as faust_aiokafka

    def supports_headers(self: object) -> bool:
        return True

    faust_aiokafka.Producer.supports_headers = supports_headers  # type: ignore[method-assign]


def patch_faust_commit_floor() -> None:
    """Never commit an offset past a message that is still being processed (faust-streaming issue #606).

    faust commits the end of the first run of consecutive acked offsets, and skips a head gap of exactly one offset
    (``min(acked) - committed > 1``) as if it were a compacted-away record. When that one offset is a message still
    in a stream (our profiler buffers a batch while the extractor has acked the same offsets), the commit goes over
    it, and a kill -9 before it finishes loses it for good: the restarted worker starts after it. Here the offsets
    faust may consider stop below the smallest in-flight (tracked, not yet acked) message of the partition.
    """
    from faust.transport.consumer import Consumer

    original = Consumer._new_offset
    if getattr(original, "_esc_commit_floor", False):
        return
    original_filter = Consumer._filter_committable_offsets

    def _new_offset(self: Any, tp: Any) -> int | None:
        return new_offset_below_in_flight(self, tp, original)

    def _filter_committable_offsets(self: Any, tps: Any) -> Any:
        # One pass over the in-flight messages per commit, not one per partition: with batches held for their
        # write (write_behind.py) they are thousands, and a commit asks for every assigned partition.
        self._esc_floors = in_flight_floors(self)
        try:
            return original_filter(self, tps)
        finally:
            self._esc_floors = None

    _new_offset._esc_commit_floor = True  # type: ignore[attr-defined]
    _new_offset.__wrapped__ = original  # type: ignore[attr-defined]
    Consumer._new_offset = _new_offset  # type: ignore[method-assign]
    Consumer._filter_committable_offsets = _filter_committable_offsets  # type: ignore[method-assign]


def in_flight_floors(consumer: Any) -> dict[Any, int]:
    """The smallest offset of a tracked, not yet acked message, per partition."""
    floors: dict[Any, int] = {}
    for m in list(consumer._unacked_messages):
        if not m.acked:
            low = floors.get(m.tp)
            if low is None or m.offset < low:
                floors[m.tp] = m.offset
    return floors


def new_offset_below_in_flight(consumer: Any, tp: Any, new_offset: Any) -> int | None:
    """``new_offset(consumer, tp)`` computed over the acked offsets below the partition's oldest in-flight message."""
    floors = getattr(consumer, "_esc_floors", None)  # set for the span of one commit's partitions
    floor = (floors if floors is not None else in_flight_floors(consumer)).get(tp)
    if floor is None:
        return new_offset(consumer, tp)  # type: ignore[no-any-return]
    acked: list[int] = consumer._acked[tp]
    held = [o for o in acked if o > floor]
    acked[:] = [o for o in acked if o < floor]
    try:
        offset: int | None = new_offset(consumer, tp)
        # faust also counts gaps between fetched offsets as acked, and its gap ends on the fetched message itself
        return None if offset is None else min(offset, floor)
    finally:
        acked.extend(held)
        acked.sort()
