"""Value coercion by contract field type, so the same value from any format lands as the same graph value.

A CSV ``"1"``, a JSON ``1`` and a JSON ``1.0`` in an ``int`` field all become ``1``; ``"2009-01-01 00:00:00"`` and
``"2009-01-01T00:00:00"`` in a ``datetime`` field both become ``"2009-01-01T00:00:00"``. Identity keys MERGE on
these values, so the rules are deterministic and shared by keys, foreign-key targets and attributes.

Graph values stay within what every store holds: ``int``, ``float``, ``bool``, ``str`` (dates and datetimes as ISO
8601 text), and JSON-able lists/objects for ``json`` fields. ``decimal`` becomes ``float``.

:func:`coerce` raises :class:`CoercionError` when a value does not fit its type (used for keys, which must not
guess); :func:`coerce_lenient` keeps such a value as it came (used for attributes: the contract may not have
widened the type yet, and dropping data is worse than an untyped value).
"""

from __future__ import annotations

import json
import math
from datetime import date, datetime
from decimal import Decimal, InvalidOperation
from typing import Any

from esc.contract.errors import CoercionError
from esc.contract.typing import PhysicalType

_TRUE = {"true", "t", "yes", "y", "1"}
_FALSE = {"false", "f", "no", "n", "0"}
MAX_SAFE_FLOAT_INT = 2**53


def _fail(value: Any, type_: str) -> CoercionError:
    shown = repr(value)
    if len(shown) > 60:
        shown = shown[:57] + "..."
    return CoercionError(f"cannot read {shown} as {type_}")


def _to_int(v: Any) -> int:
    t = type(v)
    if t is int:
        return v  # type: ignore[no-any-return]
    if t is str:
        s = v.strip()
        if s.isascii() and (s.isdigit() or (s[:1] in ("-", "+") and s[1:].isdigit())):
            return int(s)
        if "_" in s:  # int("1_000") would succeed; data never means that
            raise _fail(v, "int")
        try:
            d = Decimal(s)
        except InvalidOperation:
            raise _fail(v, "int") from None
        if d.is_finite() and d == d.to_integral_value():
            return int(d)
        raise _fail(v, "int")
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, int):
        return v
    if isinstance(v, float | Decimal):
        f = float(v)
        if math.isfinite(f) and f == math.floor(f) and abs(f) < MAX_SAFE_FLOAT_INT:
            return int(f)
    raise _fail(v, "int")


def _to_float(v: Any, type_: str) -> float:
    if isinstance(v, bool):
        return float(v)
    if isinstance(v, int | float | Decimal):
        f = float(v)
    elif isinstance(v, str):
        try:
            f = float(v.strip().replace("_", "x"))
        except ValueError:
            raise _fail(v, type_) from None
    else:
        raise _fail(v, type_)
    if not math.isfinite(f):
        raise _fail(v, type_)
    return f


def _to_bool(v: Any) -> bool:
    if isinstance(v, bool):
        return v
    if isinstance(v, int | float) and v in (0, 1):
        return bool(v)
    if isinstance(v, str):
        s = v.strip().lower()
        if s in _TRUE:
            return True
        if s in _FALSE:
            return False
    raise _fail(v, "bool")


def _parse_datetime(s: str) -> datetime:
    s = s.strip()
    if s.endswith(("Z", "z")):
        s = s[:-1] + "+00:00"
    return datetime.fromisoformat(s)


def _to_date(v: Any) -> str:
    if isinstance(v, datetime):
        return v.date().isoformat()
    if isinstance(v, date):
        return v.isoformat()
    if isinstance(v, str):
        try:
            return date.fromisoformat(v.strip()).isoformat()
        except ValueError:
            pass
        try:
            return _parse_datetime(v).date().isoformat()
        except ValueError:
            pass
    raise _fail(v, "date")


def _to_datetime(v: Any) -> str:
    if isinstance(v, datetime):
        return v.isoformat()
    if isinstance(v, date):
        return datetime(v.year, v.month, v.day).isoformat()
    if isinstance(v, str):
        try:
            return _parse_datetime(v).isoformat()
        except ValueError:
            pass
    raise _fail(v, "datetime")


def _to_string(v: Any) -> str:
    if isinstance(v, str):
        return v
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float) and math.isfinite(v) and v == math.floor(v) and abs(v) < MAX_SAFE_FLOAT_INT:
        return str(int(v))  # a JSON 1.0 and a CSV "1" in a string column are the same text
    if isinstance(v, int | float | Decimal):
        return str(v)
    if isinstance(v, datetime | date):
        return v.isoformat()
    if isinstance(v, dict | list | tuple):
        return json.dumps(v, sort_keys=True, default=str, ensure_ascii=False)
    return str(v)


def _to_json(v: Any) -> Any:
    if isinstance(v, dict | list | str | int | float | bool):
        return v
    if isinstance(v, tuple):
        return list(v)
    return _to_string(v)


_TEXTUAL = frozenset(("string", "text", "json"))
_TO: dict[str, Any] = {
    "int": _to_int,
    "float": lambda v: _to_float(v, "float"),
    "decimal": lambda v: _to_float(v, "decimal"),
    "bool": _to_bool,
    "date": _to_date,
    "datetime": _to_datetime,
    "string": _to_string,
    "text": _to_string,
    "json": _to_json,
}


MEMO_MAX = 1 << 14
"""Distinct strings remembered per type (:func:`coerce`, :func:`coerce_lenient`); a full memo starts again."""
_MISS = object()
_MEMOS: dict[str, dict[str, Any]] = {t: {} for t in _TO if t not in _TEXTUAL}
_LENIENT_MEMOS: dict[str, dict[str, Any]] = {t: {} for t in _TO if t not in _TEXTUAL}


class _Failed:
    """A memoised mismatch: its message, raised as a new :class:`CoercionError` each time."""

    __slots__ = ("message",)

    def __init__(self, message: str) -> None:
        self.message = message


def _remember(memo: dict[str, Any], value: str, result: Any) -> Any:
    if len(memo) >= MEMO_MAX:
        memo.clear()
    memo[value] = result
    return result


def coerce(value: Any, type_: PhysicalType | str) -> Any:
    """``value`` as the graph value of a field of physical type ``type_``; ``None`` stays ``None``.

    An empty or blank string is ``None`` for every non-text type. Raises :class:`CoercionError` on a mismatch.
    Strings (what CSV cells and most payload values are) are converted once per distinct value and type: the
    planner coerces every key, foreign-key and attribute value of every record, mostly repeats.
    """
    if value.__class__ is str:
        if type_ in _TEXTUAL:
            return value
        memo = _MEMOS.get(type_)
        if memo is not None:
            hit = memo.get(value, _MISS)
            if hit is _MISS:
                try:
                    hit = _remember(memo, value, _coerce(value, type_))
                except CoercionError as exc:
                    hit = _remember(memo, value, _Failed(str(exc)))
            if hit.__class__ is _Failed:
                raise CoercionError(hit.message)
            return hit
    return _coerce(value, type_)


def _coerce(value: Any, type_: PhysicalType | str) -> Any:
    if value is None:
        return None
    if isinstance(value, str) and type_ not in _TEXTUAL and not value.strip():
        return None
    # "null" (nothing observed yet) or an unknown type: keep it JSON-able
    return _TO.get(type_, _to_json)(value)


def coerce_lenient(value: Any, type_: PhysicalType | str) -> Any:
    """Like :func:`coerce`, but a value that does not fit keeps its own (JSON-able) form."""
    if value.__class__ is str:
        if type_ in _TEXTUAL:
            return value
        memo = _LENIENT_MEMOS.get(type_)
        if memo is not None:
            hit = memo.get(value, _MISS)
            if hit is _MISS:
                try:
                    hit = _coerce(value, type_)
                except CoercionError:
                    hit = value
                _remember(memo, value, hit)
            return hit
    try:
        return coerce(value, type_)
    except CoercionError:
        return _to_json(value)
