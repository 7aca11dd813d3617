"""What the consumer knows about some partitions, for the log lines of the watches (``recovery_watch.py``,
``stream_watch.py``): aiokafka's fetch position, paused flag, end offset, buffered records and in-flight fetches;
Faust's read offset and whether it fetches the partition (active), paused it, or took it out for a full stream
buffer; whether the flow is active. Private attributes of faust-streaming 0.15 and aiokafka 0.14."""

from __future__ import annotations

from typing import Any


def consumer_state(consumer: Any, tps: list[Any]) -> dict[str, Any]:
    """What the consumer knows about ``tps``, for the log: best effort (private attributes, read from another
    thread), never raises."""
    state: dict[str, Any] = {"flow_active": getattr(consumer, "flow_active", None)}
    try:
        active = consumer._active_partitions or set()
        paused = consumer._paused_partitions or set()
        full = consumer._buffered_partitions or set()
        state["faust"] = {
            str(tp): {
                "read_offset": consumer._read_offset.get(tp),
                "committed": consumer._committed_offset.get(tp),
                "active": tp in active,
                "paused": tp in paused,
                "buffer_full": tp in full,
            }
            for tp in tps
        }
    except Exception as exc:  # diagnostics only
        state["faust"] = repr(exc)
    try:
        kafka = consumer._thread._consumer
        fetcher = kafka._fetcher
        assignment = fetcher._subscriptions.subscription.assignment
        rows = {}
        for tp in tps:
            st = assignment.state_value(tp) if assignment is not None else None
            rows[str(tp)] = {
                "position": getattr(st, "_position", None),
                "paused": getattr(st, "paused", None),
                "highwater": getattr(st, "highwater", None),
                "buffered": tp in fetcher._records,
            }
        state["aiokafka"] = {"partitions": rows, "in_flight": sorted(map(str, fetcher._in_flight))}
    except Exception as exc:  # diagnostics only
        state["aiokafka"] = repr(exc)
    return state
