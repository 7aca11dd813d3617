"""Prometheus metrics of the LLM pass in the stream (``agents.llm_stream``), on the workers' registry
(``agents.metrics.REGISTRY``, served on ``/metrics``). Labels take a few fixed values each."""

from __future__ import annotations

from prometheus_client import Counter, Gauge, Histogram

from esc.agents.metrics import REGISTRY

LLM_CALLS = Counter(
    "esc_llm_calls",
    "LLM chat calls of the stream discovery, by pass (discover, validate) and outcome (ok, invalid_answer, timeout, "
    "rate_limited, http_error, connection, budget, error)",
    ["pass", "outcome"],
    registry=REGISTRY,
)
LLM_CALL_SECONDS = Histogram(
    "esc_llm_call_seconds",
    "Seconds of one LLM chat call of the stream discovery (retries included)",
    buckets=(0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300),
    registry=REGISTRY,
)
LLM_JOBS = Counter(
    "esc_llm_jobs",
    "Stream discovery jobs (one per batch of newly settled sources), by outcome: versioned (a new add-only version), "
    "nothing (no proposal survived the closed-world check), failed (no usable answer), dropped (the queue was full), "
    "rejected (the result broke the add-only check)",
    ["outcome"],
    registry=REGISTRY,
)
LLM_FIELD_REFS = Counter(
    "esc_llm_field_refs",
    "Field references in LLM proposals against the closed-world catalog: valid, repaired (an exact name), dropped "
    "(unknown field id: rejected)",
    ["status"],
    registry=REGISTRY,
)
LLM_PENDING = Gauge(
    "esc_llm_pending_jobs", "Stream discovery jobs queued or running (ingestion never waits for them)", registry=REGISTRY
)
LLM_VERSIONS = Counter(
    "esc_llm_versions", "Contract versions written from accepted LLM proposals", registry=REGISTRY
)
