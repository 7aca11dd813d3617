"""Turn pushed JSON (JSONL lines, a JSON array in any formatting, or one object) into record envelopes or dead
letters. Each record is validated as the worker validates it, and a record whose envelope is over the size limit
(the limit the file readers use, well below the broker's maximum message size) becomes a dead letter with the
reason instead of a producer error."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime

from pydantic import ValidationError

from esc.agents.record_check import violation
from esc.contract.model import Contract
from esc.streams.events import DeadLetter, RecordEnvelope
from esc.streams.readers.base import DEFAULT_MAX_RECORD_BYTES

PUSH_STAGE = "push"  # DeadLetter.stage of what a client (esc push) rejects before Kafka
MAX_PUSH_RECORD_BYTES = DEFAULT_MAX_RECORD_BYTES
"""A pushed record's envelope may be up to 1 MiB of JSON."""
DLQ_ORIGINAL_BYTES = 64 << 10
"""How much of an oversized record its dead letter keeps."""


def envelopes_from_bytes(
    source: str, data: bytes, id_field: str | None = None, max_bytes: int = MAX_PUSH_RECORD_BYTES
) -> Iterator[RecordEnvelope | DeadLetter]:
    """A whole input: one JSON document (an array of objects, or one object), however it is laid out over lines;
    otherwise JSON lines."""
    text = data.strip()
    if text[:1] in (b"[", b"{"):
        try:
            value = json.loads(text)
        except (UnicodeDecodeError, ValueError):
            value = None  # not one document: JSON lines
        if value is not None:
            items = value if isinstance(value, list) else [value]
            for i, item in enumerate(items, 1):
                raw = json.dumps(item, ensure_ascii=False).encode("utf-8", "replace")
                yield _sized(_envelope(source, item, id_field, f"item {i}", raw), f"item {i}", raw, max_bytes)
            return
    yield from envelopes_from_lines(source, data.splitlines(keepends=True), id_field, max_bytes)


def envelopes_from_lines(
    source: str, lines: Iterable[bytes], id_field: str | None = None, max_bytes: int = MAX_PUSH_RECORD_BYTES
) -> Iterator[RecordEnvelope | DeadLetter]:
    """One envelope per JSON object; a line that is not a JSON object becomes a dead letter with its bytes.

    A line holding a JSON array is expanded (so a whole JSON-array file on one line works too).
    """
    for lineno, raw in enumerate(lines, 1):
        text = raw.strip()
        if not text:
            continue
        where = f"line {lineno}"
        try:
            value = json.loads(text)
        except (UnicodeDecodeError, ValueError) as exc:
            yield DeadLetter.of(f"invalid json: {where}: {exc}", PUSH_STAGE, _clip(raw), source=source)
            continue
        items = value if isinstance(value, list) else [value]
        for item in items:
            yield _sized(_envelope(source, item, id_field, where, raw), where, raw, max_bytes)


def _clip(raw: bytes) -> bytes:
    return raw if len(raw) <= DLQ_ORIGINAL_BYTES else raw[:DLQ_ORIGINAL_BYTES]


def _sized(
    item: RecordEnvelope | DeadLetter, where: str, raw: bytes, max_bytes: int
) -> RecordEnvelope | DeadLetter:
    if isinstance(item, DeadLetter):
        return item
    size = len(item.model_dump_json().encode("utf-8"))
    if size <= max_bytes:
        return item
    return DeadLetter.of(
        f"record too large: {where}: {size} bytes, the limit is {max_bytes}"
        + (f" (the first {DLQ_ORIGINAL_BYTES} bytes are kept here)" if len(raw) > DLQ_ORIGINAL_BYTES else ""),
        PUSH_STAGE, _clip(raw), source=item.source, location=item.record_id,
    )


def _envelope(
    source: str, item: object, id_field: str | None, where: str, raw: bytes
) -> RecordEnvelope | DeadLetter:
    if not isinstance(item, dict):
        return DeadLetter.of(
            f"invalid record: {where}: expected a JSON object, got {type(item).__name__}", PUSH_STAGE, _clip(raw),
            source=source,
        )
    record_id = None
    if id_field is not None:
        if item.get(id_field) is None:
            return DeadLetter.of(f"missing record id: {where}: field {id_field!r}", PUSH_STAGE, _clip(raw), source=source)
        record_id = str(item[id_field])
    try:
        return RecordEnvelope(source=source, record_id=record_id, payload=item, event_time=datetime.now(UTC))
    except ValidationError as exc:
        return DeadLetter.of(f"invalid envelope: {exc.errors()[0]['msg']}", PUSH_STAGE, _clip(raw), source=source)


def against_contract(
    items: Iterable[RecordEnvelope | DeadLetter], contract: Contract | None
) -> list[RecordEnvelope | DeadLetter]:
    """Pushed records checked against their source's record schema under ``contract`` (agents/record_check.py): one
    that does not fit becomes a dead letter with the reason, before it reaches Kafka."""
    out: list[RecordEnvelope | DeadLetter] = []
    for item in items:
        reason = None
        if contract is not None and isinstance(item, RecordEnvelope):
            reason = violation(contract, item.source, item.payload)
        if reason is None or not isinstance(item, RecordEnvelope):
            out.append(item)
            continue
        raw = json.dumps(item.payload, ensure_ascii=False).encode("utf-8", "replace")
        out.append(DeadLetter.of(reason, PUSH_STAGE, _clip(raw), source=item.source, location=item.record_id))
    return out
