"""How rows become an answer (values rendered for display, citations collected). The answer model itself is
``esc.streams.events.Answer``: one model for every surface."""

from __future__ import annotations

import re
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from esc.agents.query.plan import PlanRow
from esc.streams.events import Answer, Citation, Conflict, ConflictValue, Route

__all__ = [
    "MAX_CITATIONS", "Answer", "Citation", "Conflict", "ConflictValue", "Route", "citations_of", "render_value",
    "round_2",
]

MAX_CITATIONS = 50
MAX_LIST = 200
_MIDNIGHT = re.compile(r"^(\d{4}-\d{2}-\d{2})[T ]00:00(?::00(?:\.0+)?)?(?:Z|[+-]00:?00)?$")


def render_value(value: Any) -> Any:
    """Display form of one stored value: midnight datetimes as dates, whole floats kept as numbers, money as is."""
    if isinstance(value, str):
        m = _MIDNIGHT.match(value.strip())
        return m.group(1) if m else value
    if isinstance(value, float):
        return round_2(value) if abs(value - round(value, 2)) < 1e-9 or abs(value) >= 0.01 else value
    return value


def round_2(value: float) -> float:
    """Two decimals, half away from zero like SQL's ROUND, after dropping float noise: a mean of integers that is
    exactly x.875 arrives from a store's float accumulation as x.87499999999 and must still round to x.88."""
    snapped = Decimal(repr(round(value, 9)))
    return float(snapped.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP))


def _join(parts: list[Any]) -> Any:
    shown = [render_value(p) for p in parts if p is not None]
    if not shown:
        return None
    if len(shown) == 1:
        return shown[0]
    return " ".join(str(p).strip() for p in shown)


def citations_of(rows: list[PlanRow]) -> list[Citation]:
    seen: dict[tuple[str, str], Citation] = {}
    for row in rows:
        for c in row.citations:
            if not isinstance(c, dict) or c.get("source") is None or c.get("record_id") is None:
                continue
            key = (str(c["source"]), str(c["record_id"]))
            if key not in seen:
                seen[key] = Citation(source=key[0], record_id=key[1], location=str(c.get("location") or ""))
            if len(seen) >= MAX_CITATIONS:
                return list(seen.values())
    return list(seen.values())


def values_of(rows: list[PlanRow], aliases: list[str]) -> list[Any]:
    """Distinct answer values in row order (several aliases are joined: first + last name)."""
    out: list[Any] = []
    seen: set[str] = set()
    for row in rows:
        v = _join([row.values.get(a) for a in aliases])
        if v is None:
            continue
        key = str(v).strip().casefold()
        if key not in seen:
            seen.add(key)
            out.append(v.strip() if isinstance(v, str) else v)
    return out


def keep_ties(rows: list[PlanRow], alias: str, top: int) -> list[PlanRow]:
    """The first ``top`` rows of an ordered result, plus every further row that ties with the last one kept."""
    if len(rows) <= top:
        return rows
    cut = rows[top - 1].values.get(alias)
    out = rows[:top]
    for row in rows[top:]:
        if row.values.get(alias) != cut or cut is None:
            break
        out.append(row)
    return out


def compose(
    rows: list[PlanRow],
    aliases: list[str],
    scalar: bool,
    route: Route,
    confidence: float,
    contract_version: int,
    ties: str | None = None,
    top: int | None = None,
) -> Answer:
    """An answer from plan rows, or an abstention when nothing matched (never an invented value). With ``ties``
    (a superlative), rows past ``top`` that tie with the last one kept are kept too: two customers with the
    same highest total are both the answer."""
    if ties is not None and top is not None:
        rows = keep_ties([r for r in rows if r.values.get(ties) is not None], ties, top)
    values = values_of(rows, aliases)
    cites = citations_of(rows)
    if not values:
        return Answer.abstain("the query ran but no matching records were found", contract_version)
    if not cites:
        return Answer.abstain("matching values have no source records to cite", contract_version)
    answer: Any = values[0] if (scalar or len(values) == 1) else values[:MAX_LIST]
    conf = confidence
    if scalar and len(values) > 1:
        conf *= 0.5  # several different values where one was expected: say so through the confidence
        answer = values[:MAX_LIST]
    return Answer(
        answer=answer, citations=cites, route=route, confidence=round(conf, 3), contract_version=contract_version
    )
