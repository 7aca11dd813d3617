"""Consumer lag of a Faust worker, per topic: what ``esc_consumer_lag`` exports (ops/prometheus/rules/esc.yml)."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from esc.agents import metrics


def consumer_lag(consumer: Any) -> dict[str, int]:
    """Messages behind the log end, summed over the partitions assigned to this worker, per topic. A partition
    whose end is not known yet (no fetch so far) is left out; one not read yet counts from its committed offset."""
    lag: dict[str, int] = defaultdict(int)
    for tp in consumer.assignment():
        end = consumer.highwater(tp)
        if end is None:
            continue
        read = consumer._read_offset.get(tp)
        position = read + 1 if read is not None else consumer._committed_offset.get(tp)
        if position is None:
            continue
        lag[tp.topic] += max(0, int(end) - int(position))
    return dict(lag)


def export_consumer_lag(consumer: Any) -> None:
    for topic, n in consumer_lag(consumer).items():
        metrics.CONSUMER_LAG.labels(topic).set(n)
