"""``bench/ingest.py``: the worker's Prometheus histograms and counters (quantiles as ``histogram_quantile``
computes them) and plain percentiles."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from bench._ingest_proc import Worker

# ------------------------------------------------------------------------------------------------ histograms


def buckets(metrics: dict[str, Any], name: str, **labels: str) -> list[tuple[float, float]]:
    """Cumulative (le, count) pairs of a histogram (the series with ``labels``), sorted by le."""
    rows = [
        (float(lb["le"]), v)
        for n, lb, v in metrics.get(name, [])
        if n == f"{name}_bucket" and all(lb.get(k) == x for k, x in labels.items())
    ]
    return sorted(rows)


def total(metrics: dict[str, Any], name: str, sample: str, **labels: str) -> float:
    return sum(
        v for n, lb, v in metrics.get(name, []) if n == sample and all(lb.get(k) == x for k, x in labels.items())
    )


def minus(a: list[tuple[float, float]], b: list[tuple[float, float]]) -> list[tuple[float, float]]:
    before = dict(b)
    return [(le, c - before.get(le, 0.0)) for le, c in a]


def quantile(q: float, cum: list[tuple[float, float]]) -> float | None:
    """``histogram_quantile``: linear interpolation inside the bucket holding rank q * total; a rank in the
    +Inf bucket returns the largest finite bound (the true value is larger)."""
    if not cum or cum[-1][1] <= 0:
        return None
    rank = q * cum[-1][1]
    lower, below = 0.0, 0.0
    for le, c in cum:
        if c >= rank:
            if le == float("inf"):
                return lower
            return lower + (le - lower) * ((rank - below) / (c - below) if c > below else 1.0)
        lower, below = le, c
    return lower


def summary(cum: list[tuple[float, float]]) -> dict[str, Any]:
    top = max((le for le, _ in cum if le != float("inf")), default=0.0)
    p50, p95 = quantile(0.5, cum), quantile(0.95, cum)
    return {"count": int(cum[-1][1]) if cum else 0, "p50_s": _r(p50), "p95_s": _r(p95),
            "p50_beyond_last_bucket": p50 is not None and p50 >= top,
            "p95_beyond_last_bucket": p95 is not None and p95 >= top}


def show(h: dict[str, Any], q: str) -> str:
    """A histogram quantile for printing: '> 300' when it lies in the +Inf bucket."""
    v = h[f"{q}_s"]
    return "n/a" if v is None else (f"> {v:g}" if h.get(f"{q}_beyond_last_bucket") else f"{v:g}")


def _r(x: float | None, nd: int = 3) -> float | None:
    return None if x is None else round(x, nd)


def pct(xs: list[float], q: float) -> float | None:
    if not xs:
        return None
    s = sorted(xs)
    return s[min(len(s) - 1, max(0, round(q * (len(s) - 1))))]


def written(m: dict[str, Any], source: str) -> float:
    return total(m, "esc_records_out", "esc_records_out_total", source=source, store="neo4j")


def wait_metrics(worker: Worker, ready: Callable[[dict[str, Any]], bool], timeout: float) -> tuple[dict[str, Any], float | None]:
    """Poll /metrics until ``ready``; (metrics, seconds waited), or (last metrics, None) after ``timeout``."""
    t0 = time.perf_counter()
    while True:
        m = worker.metrics()
        if ready(m):
            return m, round(time.perf_counter() - t0, 2)
        if time.perf_counter() - t0 > timeout:
            return m, None
        time.sleep(0.5)
