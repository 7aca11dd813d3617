"""Cypher identifier escaping and value conversion. Identifiers from data are always escaped; values are params."""

from __future__ import annotations

import json
from typing import Any

from esc.contract.errors import UnsafeIdentifier


def ident(name: str) -> str:
    """Backtick-quote a label / property / relationship type; backticks inside are doubled."""
    if not isinstance(name, str) or name == "":
        raise UnsafeIdentifier("empty identifier")
    if "\x00" in name or len(name) > 500:
        raise UnsafeIdentifier(f"identifier not allowed: {name[:40]!r}")
    return "`" + name.replace("`", "``") + "`"


def to_property(value: Any) -> Any:
    """Neo4j properties hold primitives and homogeneous lists of primitives; anything else becomes JSON text."""
    t = type(value)
    if t is str or t is float or t is bool:  # (the planner's values, almost always)
        return value
    if value is None or isinstance(value, (bool, int, float, str)):
        if isinstance(value, int) and not isinstance(value, bool) and not -(2**63) <= value < 2**63:
            return str(value)
        return value
    if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
        return value
    if isinstance(value, list) and value and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value):
        return value
    return json.dumps(value, sort_keys=True, default=str, ensure_ascii=False)


_INT64 = (-(2**63), 2**63 - 1)


def to_properties(values: dict[str, Any]) -> dict[str, Any]:
    """``to_property`` of every value that is not null (a plain string, float, bool or 64-bit int as it is,
    without the call: the planner's values almost always are)."""
    lo, hi = _INT64
    out: dict[str, Any] = {}
    for k, v in values.items():
        c = v.__class__
        if c is str or c is float or c is bool or (c is int and lo <= v <= hi):
            out[k] = v
        elif v is not None:
            out[k] = to_property(v)
    return out


class Sent(list[Any]):
    """A statement's parameter list as handed to the Neo4j driver: a plain list to the encoder (the packed bytes
    are the same), but with a short ``repr``. The driver (6.x, every Bolt version) builds its ``C: RUN`` debug line
    with ``repr`` of all parameters before it asks whether debug logging is on: that ``repr`` of a batch of rows
    cost as much as encoding them (2,000 rows: ~8.5 ms each) and was ~4.5 % of the worker's samples under
    ``bench/ingest.py``."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"<{len(self)} parameter rows>"
