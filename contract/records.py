"""Records as readers produce them: one observation of one source, with the place it came from.

A reader yields ``Record`` for good rows and ``Rejected`` for rows (or whole files) it could not read; callers
route ``Rejected`` to the dead-letter topic with its reason. Values are keyed by the field *name* relative to
the source: a column name, or a dotted path for nested objects (``address.city``). Arrays of objects are not
values: they become records of a child source ``<parent>.<key>``.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class Location(BaseModel):
    """Where a record sits inside its file: exactly the coordinates that apply are set."""

    model_config = ConfigDict(frozen=True)

    file: str
    row: int | None = None  # 1-based data row for tables (header excluded), sheet row for Excel
    line: int | None = None  # 1-based physical line for JSONL / text
    page: int | None = None  # 1-based page for PDF
    sheet: str | None = None
    json_path: str | None = None  # e.g. "$[3].InvoiceLine[1]"

    def render(self) -> str:
        parts = [self.file]
        if self.sheet is not None:
            parts.append(f"sheet={self.sheet}")
        if self.row is not None:
            parts.append(f"row={self.row}")
        if self.line is not None:
            parts.append(f"line={self.line}")
        if self.page is not None:
            parts.append(f"page={self.page}")
        if self.json_path is not None:
            parts.append(self.json_path)
        return ":".join(parts)


_LOCATION_TYPES: dict[str, type] = {"file": str, "sheet": str, "row": int, "line": int, "page": int, "json_path": str}


def render_location(location: dict[str, Any]) -> str:
    """``Location(**location).render()``; without building the model when every value already has its type (a
    record envelope's location, read back from JSON). Raises as the model does on a value it rejects."""
    if type(location.get("file")) is not str or any(
        v is not None and type(v) is not _LOCATION_TYPES.get(k, type(v)) for k, v in location.items()
    ):
        return Location(**location).render()
    parts = [location["file"]]
    if (sheet := location.get("sheet")) is not None:
        parts.append(f"sheet={sheet}")
    for name in ("row", "line", "page"):
        if (v := location.get(name)) is not None:
            parts.append(f"{name}={v}")
    if (path := location.get("json_path")) is not None:
        parts.append(path)
    return ":".join(parts)


class ParentLink(BaseModel):
    """For a record of a nested child source: which parent record holds it."""

    model_config = ConfigDict(frozen=True)

    source: str
    location: Location
    values: dict[str, Any] = Field(default_factory=dict)  # the parent's scalar values (for key lookup)


class Record(BaseModel):
    """One observed record of one source."""

    source: str
    format: str
    values: dict[str, Any]
    location: Location
    parent: ParentLink | None = None
    array_path: str | None = (
        None  # for nested children: JSON path of the embedded array, e.g. "$[*].InvoiceLine"
    )

    def content_hash(self) -> str:
        """Stable hash of source + values (used to make re-delivery idempotent)."""
        blob = json.dumps([self.source, self.values], sort_keys=True, default=str, ensure_ascii=False)
        return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:32]


class Rejected(BaseModel):
    """Something a reader could not turn into a record: a whole file or a single row/line."""

    file: str
    reason: str
    location: Location | None = None
    raw: str | None = None  # the offending bytes/text, truncated, for the dead-letter entry


def field_id(source: str, path: str) -> str:
    """Stable field id: the same source and path give the same id in every run and version."""
    return "f_" + hashlib.sha1(f"{source}\x1f{path}".encode()).hexdigest()[:16]
