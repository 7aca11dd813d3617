"""Prometheus metrics every ESC worker exposes on ``/metrics``. Label cardinality is bounded."""

from __future__ import annotations

import threading

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest

REGISTRY = CollectorRegistry(auto_describe=True)

MAX_SOURCE_LABELS = 200
_OTHER = "_other"
_sources: set[str] = set()
_lock = threading.Lock()


def source_label(source: str) -> str:
    """Map a source name to a label value, capping the number of distinct values at MAX_SOURCE_LABELS."""
    with _lock:
        if source in _sources:
            return source
        if len(_sources) < MAX_SOURCE_LABELS:
            _sources.add(source)
            return source
    return _OTHER


RECORDS_IN = Counter("esc_records_in", "Records consumed from esc.records", ["source"], registry=REGISTRY)
RECORDS_OUT = Counter(
    "esc_records_out", "Records written to the stores", ["source", "store"], registry=REGISTRY
)
RECORDS_PRODUCED = Counter(
    "esc_records_produced", "Records produced to esc.records by connectors", ["source"], registry=REGISTRY
)
DLQ = Counter("esc_dlq", "Entries sent to esc.dlq", ["stage", "reason"], registry=REGISTRY)
BATCH_LATENCY = Histogram(
    "esc_extraction_batch_seconds",
    "Time to write one extraction batch",
    ["store"],
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10),
    registry=REGISTRY,
)
_LATENCY_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 30, 60, 90, 120, 180, 300, 600, 1200)
FRESHNESS = Histogram(
    "esc_freshness_seconds",
    "Record event time to upsert in the stores (new records; backfills are esc_backfill_latency_seconds)",
    buckets=_LATENCY_BUCKETS,
    registry=REGISTRY,
)
BACKFILL_LATENCY = Histogram(
    "esc_backfill_latency_seconds",
    "Record event time to its rewrite by a backfill (a new contract version replayed it)",
    buckets=_LATENCY_BUCKETS,
    registry=REGISTRY,
)
RECORDS_REPLAYED = Counter(
    "esc_records_replayed", "Records written again by a backfill (not counted in esc_records_in)", ["source"],
    registry=REGISTRY,
)
CONTRACT_VERSION = Gauge("esc_contract_version", "Current contract version", registry=REGISTRY)
DEPENDENCY_UP = Gauge(
    "esc_dependency_up", "1 while the worker reaches this dependency (kafka, neo4j, weaviate), 0 during an outage",
    ["dependency"], registry=REGISTRY,
)
PROFILE_UPDATES = Counter(
    "esc_profile_updates", "Profile deltas published by profilers", ["source"], registry=REGISTRY
)
SCHEMA_DIFF_EVENTS = Counter(
    "esc_schema_diffs", "Schema-diff events emitted (one per new contract version)", registry=REGISTRY
)
CONSUMER_LAG = Gauge(
    "esc_consumer_lag", "Messages behind the log end, summed over this worker's partitions of a topic", ["topic"],
    registry=REGISTRY,
)
SCHEMA_DIFFS = Counter(
    "esc_schema_diff_items", "Items added by schema diffs, by kind", ["kind"], registry=REGISTRY
)
DEFERRED = Counter(
    "esc_records_deferred",
    "Records not written yet: the contract does not cover their source",
    ["source"],
    registry=REGISTRY,
)
NEO4J_DEADLOCKS = Counter(
    "esc_neo4j_deadlock_retries",
    "Graph write transactions retried after Neo4j aborted them to end a deadlock between concurrent lanes",
    registry=REGISTRY,
)
RETRACTED = Counter("esc_records_retracted", "Source records retracted (deleted files)", registry=REGISTRY)
BACKFILL_PENDING = Gauge(
    "esc_backfill_pending_records",
    "Records waiting to be replayed under a newer contract version",
    registry=REGISTRY,
)
VECTOR_PENDING = Gauge(
    "esc_vector_outbox_pending",
    "Text chunks written to the graph's outbox and not yet embedded into the vector store",
    registry=REGISTRY,
)
CLUSTER_EVENTS = Counter(
    "esc_cluster_events",
    "Entity resolution: clusters merged (a record linked two of them) or split (a record that linked them went)",
    ["kind"],
    registry=REGISTRY,
)

QUERY_LATENCY = Histogram(
    "esc_query_latency_seconds",
    "Question to answer, by route (lookup, traverse, aggregate, vector, abstain)",
    ["route"],
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30),
    registry=REGISTRY,
)
QUERY_ABSTENTIONS = Counter(
    "esc_query_abstentions", "Questions answered with an abstention (no grounded answer)", registry=REGISTRY
)
QUERY_CONFIDENCE = Histogram(
    "esc_query_confidence",
    "Confidence of the answers given (abstentions excluded)",
    buckets=(0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0),
    registry=REGISTRY,
)

# Data drift per source and field (agents/drift.py), against the previous window of the source; labels are capped.
MAX_FIELD_LABELS = 500
_fields: set[tuple[str, str]] = set()
_DRIFT_LABELS = ["source", "field"]
FIELD_NULL_RATE = Gauge("esc_field_null_rate", "Null rate of a field in the latest window of its source",
                        _DRIFT_LABELS, registry=REGISTRY)  # fmt: skip
FIELD_NULL_RATE_CHANGE = Gauge("esc_field_null_rate_change", "Null rate of the latest window minus the previous",
                               _DRIFT_LABELS, registry=REGISTRY)  # fmt: skip
FIELD_TYPE_SHIFT = Gauge("esc_field_type_shift", "Total variation distance between the type mixes of the last two "
                         "windows (0..1)", _DRIFT_LABELS, registry=REGISTRY)  # fmt: skip
FIELD_DISTINCT = Gauge("esc_field_distinct", "Distinct values of a field (estimate)", _DRIFT_LABELS,
                       registry=REGISTRY)  # fmt: skip
FIELD_PSI = Gauge("esc_field_psi", "Population stability index of a numeric field, latest window against the "
                  "previous (> 0.25: a significant shift)", _DRIFT_LABELS, registry=REGISTRY)  # fmt: skip
FIELD_KS = Gauge("esc_field_ks", "Kolmogorov-Smirnov distance of a numeric field, latest window against the previous",
                 _DRIFT_LABELS, registry=REGISTRY)  # fmt: skip
DRIFT_WINDOWS = Counter("esc_drift_windows", "Drift windows closed per source", ["source"], registry=REGISTRY)
# The contract's example queries (agents/examples_runner.py), run against the store on every new version.
EXAMPLES_FAILED = Gauge("esc_contract_examples_failed", "Example queries of the latest checked contract version that "
                        "failed (an error or an empty result)", registry=REGISTRY)  # fmt: skip
EXAMPLES_RUN = Counter("esc_contract_examples", "Example queries run, by outcome (ok, failed)", ["outcome"],
                       registry=REGISTRY)  # fmt: skip


def field_labels(source: str, name: str) -> tuple[str, str]:
    """(source, field) label values, at most MAX_FIELD_LABELS pairs; the rest share ("_other", "_other")."""
    key = (source_label(source), name[:100])
    with _lock:
        if key in _fields:
            return key
        if key[0] != _OTHER and len(_fields) < MAX_FIELD_LABELS:
            _fields.add(key)
            return key
    return _OTHER, _OTHER


def render() -> bytes:
    return generate_latest(REGISTRY)


def dlq_reason_label(reason: str) -> str:
    """Reasons are free text; the label keeps only the leading category (text before ':'), bounded length."""
    head = reason.split(":", 1)[0].strip().lower()
    return head[:60] or "unknown"
