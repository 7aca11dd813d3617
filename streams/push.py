"""Turn pushed JSON (JSONL lines, a JSON array, or one object) into record envelopes or dead letters."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime

from pydantic import ValidationError

from streams.events import DeadLetter, RecordEnvelope


def envelopes_from_lines(
    source: str, lines: Iterable[bytes], id_field: str | None = None
) -> Iterator[RecordEnvelope | DeadLetter]:
    """One envelope per JSON object; a line that is not a JSON object becomes a dead letter with its bytes.

    A line holding a JSON array is expanded (so a whole JSON-array file on one line works too).
    """
    for lineno, raw in enumerate(lines, 1):
        text = raw.strip()
        if not text:
            continue
        try:
            value = json.loads(text)
        except (UnicodeDecodeError, ValueError) as exc:
            yield DeadLetter.of(f"invalid json: line {lineno}: {exc}", "push", raw, source=source)
            continue
        items = value if isinstance(value, list) else [value]
        for item in items:
            yield _envelope(source, item, id_field, lineno, raw)


def _envelope(
    source: str, item: object, id_field: str | None, lineno: int, raw: bytes
) -> RecordEnvelope | DeadLetter:
    if not isinstance(item, dict):
        return DeadLetter.of(
            f"invalid record: line {lineno}: expected a JSON object, got {type(item).__name__}", "push", raw, source=source
        )
    record_id = None
    if id_field is not None:
        if item.get(id_field) is None:
            return DeadLetter.of(f"missing record id: line {lineno}: field {id_field!r}", "push", raw, source=source)
        record_id = str(item[id_field])
    try:
        return RecordEnvelope(source=source, record_id=record_id, payload=item, event_time=datetime.now(UTC))
    except ValidationError as exc:
        return DeadLetter.of(f"invalid envelope: {exc.errors()[0]['msg']}", "push", raw, source=source)
