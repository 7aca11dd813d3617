"""A few sample records per profile delta, cut to a bounded size: what the LLM pass in the stream shows the model
beside a new source's profile (``agents.llm_stream``). The contract agent sees profiles, never records; each delta
carries its batch's first ``SAMPLE_RECORDS`` records, each with at most ``SAMPLE_FIELDS`` top-level values, strings
cut to ``SAMPLE_CHARS`` characters and nested values shown as a short JSON text, so a delta grows by a few hundred
bytes at most (its profile is tens of kilobytes)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from esc.contract.records import Record

SAMPLE_RECORDS = 3
SAMPLE_FIELDS = 30
SAMPLE_CHARS = 60


def cut(value: Any) -> Any:
    """A JSON-able scalar no longer than ``SAMPLE_CHARS`` (nested values as their JSON text)."""
    if value is None or isinstance(value, bool | int | float):
        return value
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= SAMPLE_CHARS else text[: SAMPLE_CHARS - 1] + "…"


def sample_records(records: Sequence[Record], n: int = SAMPLE_RECORDS) -> list[dict[str, Any]]:
    out = []
    for rec in records[:n]:
        values = rec.values if isinstance(rec.values, dict) else {"value": rec.values}
        out.append({str(k): cut(v) for k, v in list(values.items())[:SAMPLE_FIELDS]})
    return out
