"""Compiled DuckDB plans and how their result rows decode back into plan values (agents/stores/embedded/sql.py
compiles; this module holds what the compiled plan carries and reads)."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any, Literal

Decode = Literal["json", "int", "float", "sum", "node"]


def json_pointer(prop: str) -> str:
    """RFC 6901 pointer to a top-level property: ``~`` and ``/`` are escaped, everything else is literal."""
    return "/" + prop.replace("~", "~0").replace("/", "~1")


def render(value: Any) -> str | None:
    """A value as text for ``ieq``/``contains``/``startswith`` (integral floats without ``.0``, booleans lower)."""
    if value is None or isinstance(value, (list, dict)):
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return str(int(value))
    return str(value)


@dataclass
class Column:
    alias: str
    decode: Decode
    width: int = 1


@dataclass
class CompiledPlan:
    sql: str
    params: dict[str, Any]
    columns: list[Column]
    cite_count: int = 0
    cite_cap: int | None = None  # aggregate rows cite at most this many source records

    @property
    def value_width(self) -> int:
        return sum(c.width for c in self.columns)

    def cited_ids(self, row: tuple[Any, ...]) -> list[int]:
        ids: list[int] = []
        start = self.value_width
        for cell in row[start : start + self.cite_count]:
            ids.extend(i for i in (cell or []) if i is not None)
        return ids


def loads_cell(cell: str) -> Any:
    if cell[:1] == '"' and "\\" not in cell:  # a JSON string without escapes: its text between the quotes
        return cell[1:-1]
    try:
        return json.loads(cell)
    except ValueError:  # inf / nan from arithmetic
        return float(cell)


def decode_row(compiled: CompiledPlan, row: tuple[Any, ...]) -> dict[str, Any]:
    values: dict[str, Any] = {}
    i = 0
    for col in compiled.columns:
        cell = row[i]
        if col.decode in ("json", "node"):
            values[col.alias] = None if cell is None else loads_cell(cell)
        elif col.decode == "int":
            values[col.alias] = int(cell or 0)
        elif col.decode == "float":
            values[col.alias] = None if cell is None else float(cell)
        else:  # sum: integer part and float part; a sum of integers stays an integer, of nothing is null
            ints, floats = cell, row[i + 1]
            if ints is None and floats is None:
                values[col.alias] = None
            elif floats is None:
                values[col.alias] = int(ints)
            else:
                values[col.alias] = float(ints or 0) + float(floats)
        i += col.width
    return values
