"""After a rebalance every partition is read again from its committed offset, and nothing a rebalance overtook is
committed (shims for faust-streaming 0.15 with aiokafka 0.14 and mode 0.4).

Found with two workers loading TPC-H (``bench/ingest.py --workers 2 --sf 0.01``: no contract within 430 s while
one worker published v1 in 62 s). Records that no worker ever profiled nor wrote had their offsets committed, so
the partition's owner after the rebalance (the same worker) resumed after them; their source never reached the
record count its end-of-file announced and no contract was published. Four ways, each seen in one run or another:

1. Faust's stream skips a message it reads while a rebalance is under way (flow control suspended) or whose fetch
   generation is older than the consumer's, and *acknowledges* what it skips ("otherwise the lag would increase").
   The revocation had dropped the partition's acknowledgements and committed offset, so those late ones start a
   fresh run that faust commits: 11 ``supplier`` records (offsets 8..18 of a partition) were lost.
2. ``seek_to_committed`` (aiokafka) seeks only partitions whose committed offset is above 0: a partition with no
   commit yet keeps the fetch position of the generation being revoked, and faust commits the first run of
   acknowledged offsets wherever it starts when nothing is committed: 13,000 ``part`` .. ``orders`` records were
   skipped (fetched before the rebalance into a stream buffer the revocation cleared).

3. A fetch issued before the seek can still deliver records of the old position after it (seen: offset 6,673
   right after the seek to 0). Faust then dropped 0..6,672 when they came, as below its last read offset: read
   by nobody, committed. (Let through, they came out of order and the contract agent, whose re-delivery check
   assumes a partition's offsets grow, dropped the next deltas of those partitions as re-delivered; dropped
   without seeking again, the records of such a fetch that did come from the new position were lost.)

4. Faust's recovery resumes the flow to read the tables' changelogs, then resumes the stream partitions, seeks
   them to their committed offsets, and resumes the flow once more (and again when its standby recovery starts):
   mode's ``FlowControlEvent.resume`` clears every stream queue each time, flowing or not. Records fetched after
   the seek were in a queue then, their read offsets recorded: dropped, read by nobody, never committed past.
   Found with two workers, one leaving in the middle of an ingest (``tests/integration/test_two_workers.py``, ~1 run
   in 3): the contract agent's queue lost profile updates 29..44 of its partition; a source whose completion was
   among such lost updates never settled, and no contract was ever published.

So: an acknowledgement counts only for a message fetched in the consumer generation that is current and not being
revoked (``install`` records the generation each rebalance starts from), and after the seek to the committed
offsets, every partition without a committed offset (other than tables' changelogs, which recovery positions) is
sought to its earliest offset, as ``auto_offset_reset=earliest`` says; the records of a fetch that overlapped a
seek are dropped and their partition sought again to the seek's position (read again from there, in order), and no
other fetched message is dropped as read before (a message read twice is harmless here, one never read is not);
resuming a flow that is not suspended leaves the queues alone (what is in them was fetched while flowing, and its
read offsets are recorded; a suspended flow's queues are still cleared when it resumes: their partitions are
sought after the rebalance). Whatever a rebalance overtook is read again; profiling drops re-reads through the
seen-index and writes are idempotent.
"""

from __future__ import annotations

from typing import Any

from faust.transport.consumer import Consumer, ensure_TP
from mode.utils.queues import FlowControlEvent

SOUGHT = "_esc_sought"
"""Consumer attribute: where the last seek put each partition (its committed offset, else its earliest)."""
SEEKS = "_esc_seeks"
"""Consumer attribute: seeks begun and ended (a fetch that saw it change may hold records of the old position)."""
REVOKING = "_esc_revoking_generation"
"""App attribute: the consumer generation the last rebalance started from (its messages are stale)."""


def stale(app: Any, message: Any) -> bool:
    """The message was fetched in a generation a rebalance has started to revoke (or already replaced)."""
    fetched = getattr(message, "generation_id", None)
    revoking = getattr(app, REVOKING, None)
    return fetched is not None and revoking is not None and fetched <= revoking


def install(app: Any) -> None:
    """Record each rebalance's starting generation on ``app``; patch the consumer (once per process)."""
    start = app.on_rebalance_start

    def on_rebalance_start() -> None:
        # Called synchronously by the rebalance listener, before any revocation work: from here on, every message
        # fetched so far is read again after the next assignment.
        setattr(app, REVOKING, app.consumer_generation_id)
        start()

    app.on_rebalance_start = on_rebalance_start
    _patch_ack()
    _patch_seek()
    _patch_getmany()
    _patch_resume()


def _patch_ack() -> None:
    original = Consumer.ack
    if getattr(original, "_esc_reread", False):
        return

    def ack(self: Any, message: Any) -> bool:
        if stale(self.app, message):
            message.acked = True  # counted by nobody: the partition is read again from its committed offset
            self._unacked_messages.discard(message)
            return False
        return bool(original(self, message))

    ack._esc_reread = True  # type: ignore[attr-defined]
    ack.__wrapped__ = original  # type: ignore[attr-defined]
    Consumer.ack = ack  # type: ignore[method-assign]


async def seek_uncommitted(consumer: Any, committed: dict[Any, int | None]) -> dict[Any, int]:
    """Seek the partitions ``seek_to_committed`` left alone (no committed offset, or 0) to their earliest offset;
    tables' changelogs are left to recovery. Returns the partitions sought and where."""
    fresh = [tp for tp, off in committed.items() if not off and not consumer._is_changelog_tp(tp)]
    if not fresh:
        return {}
    earliest = await consumer.earliest_offsets(*fresh)
    to = {tp: max(int(earliest.get(tp) or 0), 0) for tp in fresh}
    await consumer.seek_wait(to)  # also resets the read offsets the consumer drops older messages by
    return to


def _patch_seek() -> None:
    original = Consumer.perform_seek
    if getattr(original, "_esc_reread", False):
        return

    async def perform_seek(self: Any) -> None:
        """faust's ``Consumer.perform_seek`` (same steps), then the partitions it could not seek. A fetch that
        overlaps the seek is dropped (see ``_patch_getmany``)."""
        setattr(self, SEEKS, getattr(self, SEEKS, 0) + 1)
        committed = await self.seek_to_committed()
        self._read_offset.update({tp: off if off is not None and off >= 0 else None for tp, off in committed.items()})
        self._committed_offset.update({ensure_TP(tp): off or None for tp, off in committed.items() if off is not None})
        fresh = await seek_uncommitted(self, dict(committed))
        setattr(self, SOUGHT, {**{tp: off for tp, off in committed.items() if off}, **fresh})
        setattr(self, SEEKS, getattr(self, SEEKS, 0) + 1)

    perform_seek._esc_reread = True  # type: ignore[attr-defined]
    perform_seek.__wrapped__ = original  # type: ignore[attr-defined]
    Consumer.perform_seek = perform_seek  # type: ignore[method-assign]


def keep(consumer: Any, tp: Any, offset: int) -> None:
    """Before faust's fetch loop sees a message: if its last read offset for the partition is above the message's
    (a record of the old position delivered after a seek back), forget it, so the message is not dropped."""
    read = consumer._read_offset.get(tp)
    if read is not None and offset < read:
        consumer._read_offset[tp] = None


async def in_order(consumer: Any, fetched: Any) -> Any:
    """The (partition, message) pairs of one fetch, less the records of a fetch that overlapped a seek: whether
    they came from the old position or the new one cannot be told, so they are dropped and their partition is
    sought again to where the seek put it (read again from there, in order). Each message is let past faust's
    already-read check (``keep``)."""
    seeks = getattr(consumer, SEEKS, 0)
    again: set[Any] = set()
    async for tp, message in fetched:
        if getattr(consumer, SEEKS, 0) != seeks and not consumer._is_changelog_tp(tp):
            at = getattr(consumer, SOUGHT, {}).get(tp)
            if at is not None and tp not in again:
                again.add(tp)
                await consumer.seek(tp, at)
            continue
        keep(consumer, tp, message.offset)
        yield tp, message


def _patch_getmany() -> None:
    original = Consumer.getmany
    if getattr(original, "_esc_reread", False):
        return

    def getmany(self: Any, timeout: float) -> Any:
        return in_order(self, original(self, timeout))

    getmany._esc_reread = True  # type: ignore[attr-defined]
    getmany.__wrapped__ = original  # type: ignore[attr-defined]
    Consumer.getmany = getmany  # type: ignore[method-assign]


def _patch_resume() -> None:
    original = FlowControlEvent.resume
    if getattr(original, "_esc_reread", False):
        return

    def resume(self: Any) -> None:
        """mode's ``FlowControlEvent.resume``, which clears the queues, only when the flow was suspended."""
        if self.is_active():
            return  # flowing: the queues hold records fetched since, whose read offsets are recorded (point 4)
        original(self)

    resume._esc_reread = True  # type: ignore[attr-defined]
    resume.__wrapped__ = original  # type: ignore[attr-defined]
    FlowControlEvent.resume = resume  # type: ignore[method-assign]
