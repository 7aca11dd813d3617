"""The topics ESC uses, as frozen specs. Names are ``<ESC_TOPIC_PREFIX>.<logical>`` (default prefix ``esc``)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class TopicSpec:
    logical: str  # e.g. "records"
    key: str  # what the message key is
    value: str  # name of the pydantic model in streams.events
    compacted: bool = False
    partitions: int = 1

    def name(self, prefix: str = "esc") -> str:
        return f"{prefix}.{self.logical}"


RECORDS = TopicSpec("records", key="source + record id", value="RecordEnvelope", partitions=4)
SCHEMA_DIFFS = TopicSpec("schema.diffs", key="contract id", value="CloudEvent (esc.schema.diff)")
SCHEMA_CONTRACTS = TopicSpec(
    "schema.contracts", key="contract id", value="CloudEvent (esc.schema.contract, data = Contract)", compacted=True
)
QUERIES = TopicSpec("queries", key="request id", value="QueryRequest")
ANSWERS = TopicSpec("answers", key="request id", value="Answer")
DLQ = TopicSpec("dlq", key="source", value="DeadLetter")

ALL: tuple[TopicSpec, ...] = (RECORDS, SCHEMA_DIFFS, SCHEMA_CONTRACTS, QUERIES, ANSWERS, DLQ)

PROFILES = TopicSpec("profiles", key="source | scan | examples | tick", value="profile update (internal to workers)")
"""The Faust workers' internal topic from the profilers to the single contract agent (one partition)."""

WORKER: tuple[TopicSpec, ...] = (*ALL, PROFILES)
"""Every topic a Faust worker subscribes to that ESC names itself: created, and visible in the broker's metadata,
before the worker's consumer subscribes (a topic missing from the first metadata is only assigned after the
consumer's next metadata refresh)."""
