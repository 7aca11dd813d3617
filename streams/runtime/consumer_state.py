"""What the consumer knows about some partitions, for the log lines of the watches (``recovery_watch.py``,
``stream_watch.py``): aiokafka's fetch position, paused flag, end offset, buffered records and in-flight fetches;
Faust's read offset and whether it fetches the partition (active), paused it, or took it out for a full stream
buffer; whether the flow is active. Private attributes of faust-streaming 0.15 and aiokafka 0.14. ``partition_lines``:
the same for every assigned partition, a line each (the worker's SIGUSR1 dump, ``await_chains.py``)."""

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


def partition_lines(consumer: Any) -> str:
    """A line per assigned partition: fetch position, Faust's read and committed offsets, and the flags that are
    set (a partition read far past its committed offset while its agent idles lost records on the way)."""
    try:
        tps = sorted(consumer.assignment())
    except Exception as exc:  # diagnostics only: a consumer not started or stopping
        return f"Consumer: no assignment ({exc!r})"
    state = consumer_state(consumer, tps)
    faust, kafka = state.get("faust"), state.get("aiokafka")
    rows = kafka.get("partitions", {}) if isinstance(kafka, dict) else {}
    lines = [f"Consumer: {len(tps)} partitions, flow active {state['flow_active']}"
             + ("" if isinstance(faust, dict) else f", Faust's state unread: {faust}")
             + ("" if isinstance(kafka, dict) else f", aiokafka's state unread: {kafka}")]  # fmt: skip
    for tp in tps:
        f = faust.get(str(tp), {}) if isinstance(faust, dict) else {}
        k = rows.get(str(tp), {})
        flags = [name for name, on in (("paused", f.get("paused")), ("aiokafka-paused", k.get("paused")),
                                       ("buffer-full", f.get("buffer_full")), ("inactive", f.get("active") is False),
                                       ("fetched-unread", k.get("buffered"))) if on]  # fmt: skip
        where = f"position {k.get('position')}, read {f.get('read_offset')}, committed {f.get('committed')}"
        lines.append(f"Consumer partition {tp.topic}/{tp.partition}: {where}" + "".join(f" {x}" for x in flags))
    return "\n".join(lines)
