"""Units and scales of measures (issue #16 point 5): normalized "when the contract can tell (a unit column, a header
or description hint, value ranges across linked records), with the original value kept and the rule shown".

Three rules, in this order, each giving a :class:`~esc.contract.model.UnitMark` (the factor to the canonical unit,
the canonical attribute and the rule in words):

* **Header words**: a measure named with a scale word is in that scale: ``balance_cents`` (x 0.01 -> balance),
  ``revenue_thousands`` (x 1,000), ``sales_mn`` (x 1,000,000).
* **A unit column**: a short categorical text field of the same source whose observed values are all unit words
  (``cents`` / ``dollars``, ``k`` / ``m`` ...) gives each record's unit; it applies to the source's one measure, or
  to the measure whose name words its own name contains (``amount_unit`` -> amount).
* **Value ranges across linked sources**: measures of resolvable sources (contract/er_fields.py) that denote the same
  attribute (the same canonical name, e.g. ``balance`` / ``outstanding_balance``) and carry no unit word are
  compared by magnitude: the medians (log10) of the values their profiles keep and their maxima. When one is about
  10^k times the other (k = 2, 3 or 6; medians within half a decade of k, maxima within 0.35), the larger one is
  in a sub-unit when its values are whole numbers and the other's are not (cents to dollars for k = 2), or when it
  is alone against two or more sources that agree; it is scaled by 10^-k. Anything less clear is left unscaled.

A mark is a statement about the field; where it is applied (the canonical entity of resolved records, never the
record itself) is the resolver's decision (contract/er_fields.py).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from statistics import median

from esc.contract.model import FieldSpec, SourceSpec, UnitMark
from esc.contract.semantic import tokens

UNIT_SCALES: dict[str, float] = {"cents": 0.01, "cent": 0.01, "pence": 0.01, "centimes": 0.01, "thousands": 1e3,
                                 "thousand": 1e3, "millions": 1e6, "million": 1e6, "mio": 1e6, "mn": 1e6,
                                 "billions": 1e9, "bn": 1e9}  # fmt: skip
UNIT_WORDS = frozenset(UNIT_SCALES) | {"usd", "eur", "gbp", "dollars", "euros", "amt"}
COLUMN_UNITS: dict[str, float] = {**UNIT_SCALES, "ct": 0.01, "dollars": 1.0, "dollar": 1.0, "euros": 1.0,
                                  "euro": 1.0, "units": 1.0, "unit": 1.0, "k": 1e3, "m": 1e6, "b": 1e9,
                                  "ones": 1.0}  # fmt: skip
UNIT_NAMES = {0.01: "cents", 1e-3: "thousandths", 1e-6: "millionths", 1e3: "thousands", 1e6: "millions"}
MEASURE_SEMANTICS = ("money", "measure", "percent")
MIN_RANGE_VALUES = 3
CENTER_SLACK = 0.5
TOP_SLACK = 0.35
ORDERS = (2, 3, 6)


def is_measure(f: FieldSpec) -> bool:
    return f.type in ("int", "float", "decimal") and f.semantic in MEASURE_SEMANTICS


def header_unit(name: str) -> tuple[str, float] | None:
    """The scale word a field's name carries, with its factor."""
    for w in tokens(name):
        if w in UNIT_SCALES:
            return w, UNIT_SCALES[w]
    return None


def _numbers(f: FieldSpec) -> list[float]:
    out: list[float] = []
    for v in [*f.examples, *(t[0] for t in f.top_values), f.min, f.max]:
        if isinstance(v, bool) or v is None:
            continue
        try:
            x = float(v)
        except (TypeError, ValueError):
            continue
        if math.isfinite(x) and x not in out:
            out.append(x)
    return out


def _whole(xs: list[float]) -> bool:
    return all(x.is_integer() for x in xs)


def column_marks(src: SourceSpec, canon: Mapping[str, str]) -> dict[str, UnitMark]:
    """Measures of ``src`` whose unit another field of the same record gives."""
    out: dict[str, UnitMark] = {}
    measures = [f for f in src.fields if is_measure(f)]
    for c in src.fields:
        if c.type != "string" or not c.top_values or c.distinct > 10:
            continue
        seen = {str(v).strip().casefold() for v, _n in c.top_values} | {str(v).strip().casefold() for v in c.examples}
        if not seen or not seen <= set(COLUMN_UNITS) or all(COLUMN_UNITS[s] == 1.0 for s in seen):
            continue
        words = set(tokens(c.name))
        named = [m for m in measures if set(tokens(m.name)) - {"unit", "units"} and set(tokens(m.name)) <= words]
        target = named[0] if len(named) == 1 else measures[0] if len(measures) == 1 else None
        if target is None or target.name in out:
            continue
        scales = {s: COLUMN_UNITS[s] for s in sorted(seen)}
        out[target.name] = UnitMark(canonical=canon.get(target.name, target.name), scale=1.0, basis="column",
                                    column=c.name, scales=scales,
                                    rule=f"unit column '{c.name}' ({', '.join(f'{k} x {v:g}' for k, v in scales.items())})")  # fmt: skip
    return out


def header_mark(f: FieldSpec, canon: str) -> UnitMark | None:
    hit = header_unit(f.name)
    if hit is None or not is_measure(f):
        return None
    word, factor = hit
    return UnitMark(canonical=canon, unit=word, scale=factor, basis="header",
                    rule=f"header word '{word}': x {factor:g} -> {canon}")  # fmt: skip


@dataclass(frozen=True)
class _Side:
    source: str
    field: str
    center: float
    top: float
    whole: bool
    n: int


def _side(source: str, f: FieldSpec) -> _Side | None:
    xs = [x for x in _numbers(f) if x > 0]
    if len(xs) < MIN_RANGE_VALUES:
        return None
    logs = [math.log10(x) for x in xs]
    return _Side(source, f.name, median(logs), max(logs), _whole(xs), len(xs))


def _orders(a: _Side, b: _Side) -> int | None:
    """k when ``a``'s values are about 10^k times ``b``'s (k in ORDERS), 0 when alike, None when unclear."""
    dc, dt = a.center - b.center, a.top - b.top
    if abs(dc) <= CENTER_SLACK and abs(dt) <= TOP_SLACK:
        return 0
    for k in ORDERS:
        if abs(dc - k) <= CENTER_SLACK and abs(dt - k) <= TOP_SLACK:
            return k
    return None


def _fmt(x: float) -> str:
    v = 10**x
    return f"{v:,.0f}" if v >= 100 else f"{v:.4g}"


def range_marks(fields: Mapping[str, list[tuple[str, FieldSpec]]]) -> dict[tuple[str, str], UnitMark]:
    """``fields``: canonical attribute -> (source, field) of the measures of resolvable sources without a unit word.
    Returns (source, field) -> the scale of the ones the value ranges show to be in a sub-unit."""
    out: dict[tuple[str, str], UnitMark] = {}
    for canon in sorted(fields):
        sides = [s for s in (_side(src, f) for src, f in sorted(fields[canon], key=lambda x: (x[0], x[1].name))) if s]
        for a in sides:
            others = [b for b in sides if b.source != a.source]
            if not others:
                continue
            ks = [_orders(a, b) for b in others]
            k = ks[0]
            if k in (None, 0) or any(x != k for x in ks):
                continue
            agree = [b for b in others if all(_orders(b, c) == 0 for c in others if c is not b)]
            whole_vs_fraction = a.whole and all(not b.whole for b in others)
            if not (whole_vs_fraction or (len(others) >= 2 and len(agree) == len(others))):
                continue
            ref = others[0]
            factor = 10.0 ** -k
            unit = UNIT_NAMES.get(factor)
            why = "whole numbers against fractions" if whole_vs_fraction else f"{len(others)} other sources agree"
            rule = (f"values ~{10 ** k:g}x those of {ref.source}.{ref.field} (median {_fmt(a.center)} vs "
                    f"{_fmt(ref.center)}, max {_fmt(a.top)} vs {_fmt(ref.top)}; {why}): x {factor:g} -> {canon}")
            out[(a.source, a.field)] = UnitMark(canonical=canon, unit=unit, scale=factor, basis="range", rule=rule)
    return out
