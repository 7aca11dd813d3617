"""Every metric the alert rules and dashboards query is defined by the worker (agents/metrics.py), and the consumer
lag it exports is the distance to the log end."""

from __future__ import annotations

from collections import defaultdict
from types import SimpleNamespace

from faust.types import TP

from esc.agents import metrics
from esc.streams.runtime.lag import consumer_lag, export_consumer_lag
from tests.ops_metrics import ops_metric_families


def test_every_metric_ops_queries_is_defined_by_the_worker() -> None:
    used = ops_metric_families()
    assert {"esc_records_in", "esc_schema_diffs", "esc_consumer_lag", "esc_freshness_seconds"} <= used
    drift = {"esc_field_null_rate", "esc_field_null_rate_change", "esc_field_type_shift", "esc_field_distinct",
             "esc_field_psi", "esc_field_ks", "esc_contract_examples_failed"}  # fmt: skip
    assert drift <= used, f"drift and example metrics missing from ops/: {sorted(drift - used)}"
    defined = {m.name for m in metrics.REGISTRY.collect()}
    assert used <= defined, f"queried by ops/ but exported by no worker: {sorted(used - defined)}"


def test_consumer_lag_sums_the_distance_to_the_log_end_per_topic() -> None:
    a0, a1, b0, c0 = TP("t.records", 0), TP("t.records", 1), TP("t.profiles", 0), TP("t.dlq", 0)
    ends = {a0: 100, a1: 50, b0: 7, c0: None}
    consumer = SimpleNamespace(
        assignment=lambda: {a0, a1, b0, c0},
        highwater=lambda tp: ends[tp],
        _read_offset=defaultdict(lambda: None, {a0: 89}),  # last offset read
        _committed_offset=defaultdict(lambda: None, {a1: 20}),  # nothing read yet: from the commit
    )
    assert consumer_lag(consumer) == {"t.records": 10 + 30}  # profiles: no position yet; dlq: no end yet
    export_consumer_lag(consumer)
    assert metrics.REGISTRY.get_sample_value("esc_consumer_lag", {"topic": "t.records"}) == 40
