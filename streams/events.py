"""Event models carried on ESC's topics (pydantic v2). Everything on a topic is JSON."""

from __future__ import annotations

import base64
import hashlib
import json
import re
import uuid
from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from esc.contract.labels import MAX_RECORD_ID_LEN, MAX_SOURCE_LEN, record_label, source_label
from esc.contract.records import Record


def now() -> datetime:
    return datetime.now(UTC)


_CONTROL = re.compile(r"[\x00-\x1f]")


def record_key(source: str, record_id: str) -> str:
    """The ``esc.records`` message key of one record: a tombstone under it retracts the record."""
    return f"{source}\x1f{record_id}"


class RecordEnvelope(BaseModel):
    """One record on ``esc.records``: the documented envelope for direct pushes and for the file connector.

    ``source`` names the source (file stem or any name a producer picks); ``record_id`` is optional — without it the
    id is the content hash of source + payload, so re-delivery of the same record is idempotent.
    """

    model_config = ConfigDict(extra="forbid")

    source: str = Field(min_length=1, max_length=MAX_SOURCE_LEN)
    record_id: str | None = Field(default=None, max_length=MAX_RECORD_ID_LEN)
    payload: dict[str, Any]
    event_time: datetime | None = None
    # Set by connectors (absent on direct pushes):
    format: str = "topic"
    location: dict[str, Any] = Field(default_factory=dict)
    parent: dict[str, Any] | None = None
    file_hash: str | None = None
    deleted: bool = False  # a tombstone-like retraction of this record (file deleted)

    @field_validator("source")
    @classmethod
    def _source_printable(cls, v: str) -> str:
        if _CONTROL.search(v):
            raise ValueError("source must not contain control characters")
        return v

    def key(self) -> str:
        return record_key(self.source, self.resolved_id())

    def resolved_id(self) -> str:
        if self.record_id:
            return self.record_id
        blob = json.dumps([self.source, self.payload], sort_keys=True, default=str, ensure_ascii=False)
        return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:24]


class DeadLetter(BaseModel):
    """Anything rejected, with the reason and the original bytes (base64 when not valid UTF-8)."""

    reason: str
    stage: str  # "push" | "connector" | "reader" | "extractor" | ...
    source: str | None = None
    location: str | None = None
    original: str = ""
    original_encoding: str = "utf-8"  # or "base64"
    time: datetime = Field(default_factory=now)

    @classmethod
    def of(cls, reason: str, stage: str, original: bytes | str | None, **kw: Any) -> DeadLetter:
        if original is None:
            return cls(reason=reason, stage=stage, **kw)
        if isinstance(original, str):
            return cls(reason=reason, stage=stage, original=original, **kw)
        try:
            return cls(reason=reason, stage=stage, original=original.decode("utf-8"), **kw)
        except UnicodeDecodeError:
            return cls(
                reason=reason,
                stage=stage,
                original=base64.b64encode(original).decode("ascii"),
                original_encoding="base64",
                **kw,
            )


class CloudEvent(BaseModel):
    """CloudEvents 1.0 structured-mode JSON."""

    specversion: str = "1.0"
    id: str = Field(default_factory=lambda: str(uuid.uuid4()))
    source: str
    type: str
    time: datetime = Field(default_factory=now)
    datacontenttype: str = "application/json"
    subject: str | None = None
    data: dict[str, Any] = Field(default_factory=dict)


# -- questions and answers (esc.queries -> esc.answers, POST /v1/ask) -------------------------------------------

MAX_QUESTION_LEN = 4000
QueryMode = Literal["deterministic", "llm", "auto"]


class QueryOptions(BaseModel):
    """How to answer: the planner (``deterministic`` by default; ``llm``/``auto`` need ESC_LLM_BASE_URL), whether a
    descriptive question may fall back to the vector index, and whether to include the plan and compiled query."""

    model_config = ConfigDict(extra="ignore")

    mode: QueryMode = "deterministic"
    vector_fallback: bool = True
    explain: bool = False


class QueryRequest(BaseModel):
    """One question on ``esc.queries`` (key = ``id``) or the body of ``POST /v1/ask``. The answer carries the same
    ``id`` and goes to ``reply_to`` (a topic name) when given, else to ``esc.answers``."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(default_factory=lambda: str(uuid.uuid4()), min_length=1, max_length=200)
    question: str = Field(min_length=1, max_length=MAX_QUESTION_LEN)
    reply_to: str | None = Field(default=None, max_length=249)  # Kafka topic names are at most 249 characters
    options: QueryOptions = Field(default_factory=QueryOptions)
    time: datetime = Field(default_factory=now)


Route = Literal["lookup", "traverse", "aggregate", "vector", "abstain"]


class Citation(BaseModel):
    """A source record an answer rests on."""

    source: str
    record_id: str
    location: str = ""


class ConflictValue(BaseModel):
    """One of the values linked records disagree on, with the records that hold it and the newest one's time."""

    value: Any = None
    citations: list[Citation] = Field(default_factory=list)
    as_of: str | None = None


class Conflict(BaseModel):
    """A field linked records disagree on (entity resolution): every value with its sources, the current first."""

    field: str
    values: list[ConflictValue] = Field(default_factory=list)


class Answer(BaseModel):
    """The answer every surface returns (``esc ask --json``, ``POST /v1/ask``, ``esc.answers``, the embedded API):
    DESIGN.md §3's ``{answer, citations, route, confidence, contract_version}`` plus additive diagnostics
    (``reason`` when abstaining, the ``plan`` and ``query`` that ran with ``explain``, ``low_confidence`` for weak
    vector evidence, ``unmatched`` words, ``latency_ms``) and, where entity resolution linked records that disagree
    on an answered field, ``conflicts``: ``[{"field", "values": [{"value", "citations", "as_of"}]}]``."""

    answer: Any = None
    citations: list[Citation] = Field(default_factory=list)
    route: Route
    confidence: float = 0.0
    contract_version: int = 0
    reason: str | None = None
    low_confidence: bool = False
    plan: dict[str, Any] | None = None
    query: str | None = None
    latency_ms: float | None = None
    text: str | None = None  # the answer phrased as a sentence (LLM mode)
    unmatched: list[str] | None = None  # words of the question the plan could not use
    extension: dict[str, Any] | None = None  # a query-scoped schema extension this answer used (LLM mode)
    conflicts: list[Conflict] | None = None  # linked records disagree on an answered field (entity resolution)
    note: str | None = None  # how the answer was reached where it matters ("counted 42 people, not 47 records")

    @classmethod
    def abstain(cls, reason: str, contract_version: int, **extra: Any) -> Answer:
        return cls(answer=None, route="abstain", confidence=0.0, contract_version=contract_version, reason=reason, **extra)


class AnswerEnvelope(Answer):
    """The answer to one ``QueryRequest`` on the topics and over HTTP: the answer plus the request's ``id``, the
    ``reply_to`` topic it went to and when it was answered."""

    id: str
    reply_to: str | None = None
    time: datetime = Field(default_factory=now)


def envelope_for(record: Record, rel: str, file_hash: str) -> RecordEnvelope:
    """The envelope of a record read from a file (``rel`` is its path in the drop folder)."""
    loc = record.location
    return RecordEnvelope(
        source=source_label(record.source),  # nested children and sheets are named from the data
        record_id=record_label(loc.render()),
        payload=record.values,
        event_time=datetime.now(UTC),
        format=record.format,
        location=loc.model_dump(exclude_none=True),
        parent=(
            {
                "source": source_label(record.parent.source),
                "record_id": record_label(record.parent.location.render()),
                "values": record.parent.values,
            }
            if record.parent
            else None
        ),
        file_hash=file_hash,
    )
