"""Data drift between two windows of a source: null rates, type mix, distinct counts and numeric distributions.

A :class:`Window` is the part of a source profile drift needs, per field: non-null count, count per physical
type, the numeric histogram (contract/histogram.py) and the distinct estimate; all but the distinct count are
plain counts, so the records added since an earlier window are ``later - earlier`` (:meth:`Window.minus`).
:func:`compare` turns the previous and the current window into a :class:`~contract.reports.SourceDrift`: the null
rate of each side and its change, the total variation distance between the type mixes, the distinct counts, and
PSI and Kolmogorov-Smirnov distance of the numeric values (only when both sides have at least
:data:`MIN_NUMERIC` of them: a handful of values shifts by chance). What a window is (a file version, a batch of
pushed records) is the contract agent's business: agents/drift.py.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from esc.contract import histogram
from esc.contract.profile import SourceProfile
from esc.contract.reports import FieldDrift, SourceDrift

MIN_NUMERIC = 30
"""Numeric values each window needs before PSI and KS are computed."""
DIGITS = 6
THRESHOLDS = {"null_rate_change": 0.2, "psi": 0.25, "ks": 0.3, "type_shift": 0.1}
"""Above these a field has drifted (ops/prometheus/rules/esc.yml alerts on the same numbers; ``esc schema`` lists
such fields)."""


@dataclass(frozen=True)
class FieldWindow:
    nonnull: int = 0
    types: Mapping[str, int] = field(default_factory=dict)
    hist: Mapping[int, int] = field(default_factory=dict)
    distinct: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {"nonnull": self.nonnull, "types": dict(self.types), "hist": histogram.to_list(self.hist),
                "distinct": self.distinct}  # fmt: skip

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> FieldWindow:
        return cls(int(d["nonnull"]), {str(k): int(v) for k, v in d["types"].items()},
                   histogram.from_list(d["hist"]), int(d["distinct"]))  # fmt: skip


@dataclass(frozen=True)
class Window:
    records: int
    fields: Mapping[str, FieldWindow]

    @classmethod
    def of(cls, profile: SourceProfile) -> Window:
        return cls(
            profile.records,
            {
                name: FieldWindow(f.nonnull, dict(f.types), dict(f.num_hist), round(f.distinct))
                for name, f in sorted(profile.fields.items())
            },
        )

    def minus(self, earlier: Window) -> Window:
        """The records added since ``earlier`` (a window this one contains). Distinct counts cannot be taken
        apart: each field keeps the distinct count of the whole (later) window."""
        out = {}
        for name, f in self.fields.items():
            e = earlier.fields.get(name, FieldWindow())
            types = {t: n - e.types.get(t, 0) for t, n in f.types.items()}
            out[name] = FieldWindow(
                max(f.nonnull - e.nonnull, 0),
                {t: n for t, n in sorted(types.items()) if n > 0},
                histogram.subtract(f.hist, e.hist),
                f.distinct,
            )
        return Window(max(self.records - earlier.records, 0), out)

    def to_dict(self) -> dict[str, Any]:
        return {"records": self.records, "fields": {n: f.to_dict() for n, f in sorted(self.fields.items())}}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Window:
        return cls(int(d["records"]), {n: FieldWindow.from_dict(f) for n, f in d["fields"].items()})


def _r(x: float | None) -> float | None:
    return None if x is None else round(x, DIGITS)


def _shares(types: Mapping[str, int]) -> dict[str, float]:
    total = sum(types.values())
    return {t: n / total for t, n in sorted(types.items())} if total else {}


def type_shift(a: Mapping[str, int], b: Mapping[str, int]) -> float | None:
    """Total variation distance between two type mixes (0: same shares; 1: no type in common)."""
    pa, pb = _shares(a), _shares(b)
    if not pa or not pb:
        return None
    return 0.5 * sum(abs(pa.get(t, 0.0) - pb.get(t, 0.0)) for t in set(pa) | set(pb))


def _null_rate(f: FieldWindow, records: int) -> float:
    return 1.0 - f.nonnull / records if records else 0.0


def field_drift(prev: FieldWindow | None, prev_records: int, cur: FieldWindow, records: int) -> FieldDrift:
    null_rate = _null_rate(cur, records)
    numeric = sum(cur.hist.values())
    out = FieldDrift(
        null_rate=round(null_rate, DIGITS),
        types={t: round(s, DIGITS) for t, s in _shares(cur.types).items()},
        distinct=cur.distinct,
        numeric=numeric,
    )
    if prev is None or not prev_records:
        return out
    before = _null_rate(prev, prev_records)
    out.previous_null_rate = round(before, DIGITS)
    out.null_rate_change = round(null_rate - before, DIGITS)
    out.type_shift = _r(type_shift(prev.types, cur.types))
    out.previous_distinct = prev.distinct
    if numeric >= MIN_NUMERIC and sum(prev.hist.values()) >= MIN_NUMERIC:
        out.psi = _r(histogram.psi(prev.hist, cur.hist))
        out.ks = _r(histogram.ks(prev.hist, cur.hist))
    return out


def compare(prev: Window | None, cur: Window, window: int, ids: Mapping[str, str] | None = None) -> SourceDrift:
    """Drift of the current window against the previous one (``None``: this is the first window). ``ids`` maps
    field names to catalog ids. A field one window lacks counts there as a field that was all null (a column
    gone from a new version of a file is a null rate jumping to 1)."""
    fields: dict[str, FieldDrift] = {}
    names = set(cur.fields) | (set(prev.fields) if prev is not None else set())
    for name in sorted(names):
        f = cur.fields.get(name, FieldWindow())
        before = None if prev is None else prev.fields.get(name, FieldWindow())
        fd = field_drift(before, prev.records if prev is not None else 0, f, cur.records)
        fd.id = (ids or {}).get(name)
        fields[name] = fd
    return SourceDrift(
        window=window,
        records=cur.records,
        previous_records=prev.records if prev is not None else None,
        fields=fields,
    )


def drifted(report: SourceDrift) -> dict[str, dict[str, float]]:
    """The fields of a report past :data:`THRESHOLDS`, with the measures that are."""
    out: dict[str, dict[str, float]] = {}
    for name, fd in report.fields.items():
        over = {m: float(v) for m, limit in THRESHOLDS.items() if (v := getattr(fd, m)) is not None and v > limit}
        if over:
            out[name] = over
    return out
