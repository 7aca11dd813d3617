"""bench/qa.py scoring: exact match as the eval README defines it, abstentions, confident-wrong answers,
calibration (reliability buckets) and the release thresholds ``--check`` applies."""

from __future__ import annotations

import statistics
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from esc.agents.query.answer import Answer

CONFIDENT = 0.8
BUCKETS: tuple[tuple[float, float], ...] = (
    (0.0, 0.2),
    (0.2, 0.4),
    (0.4, 0.6),
    (0.6, 0.8),
    (0.8, 0.9),
    (0.9, 1.0),
)
ABSTAIN_ROW = "abstain"
CHECK_EM = {"questions": 0.95, "paraphrases": 0.8}
CHECK_CONFIDENT_WRONG = 0.05
HTTP_TIMEOUT_S = 60.0
TPCH_WARM_PASSES = 3


# -- exact match ------------------------------------------------------------------------------------------------


def _num(v: Any) -> float | None:
    if isinstance(v, bool):
        return None
    if isinstance(v, int | float):
        return float(v)
    try:
        return float(str(v).strip())
    except ValueError:
        return None


def same(got: Any, gold: Any) -> bool:
    """Exact match after normalisation: strings trimmed and case-folded, numbers within 0.005, lists as sets
    (a one-element list equals its element)."""
    if isinstance(gold, list) or isinstance(got, list):
        a = got if isinstance(got, list) else [got]
        b = gold if isinstance(gold, list) else [gold]
        return len(a) == len(b) and {_key(x) for x in a} == {_key(x) for x in b}
    if got is None:
        return False
    ng, nd = _num(got), _num(gold)
    if ng is not None and nd is not None:
        return abs(ng - nd) < 0.005
    return str(got).strip().casefold() == str(gold).strip().casefold()


def _key(v: Any) -> str:
    n = _num(v)
    return f"{n:.2f}" if n is not None else str(v).strip().casefold()


# -- scoring helpers (pure) -------------------------------------------------------------------------------------


def gold_abstains(q: dict[str, Any]) -> bool:
    """An out-of-scope question: the gold says ``"abstain": true`` or has a null answer."""
    return bool(q.get("abstain")) or q.get("answer") is None


def bucket(confidence: float | None, route: str) -> str:
    """The reliability row of one answer: ``abstain`` for abstentions, else its confidence bucket's label."""
    if route == "abstain":
        return ABSTAIN_ROW
    c = min(max(float(confidence or 0.0), 0.0), 1.0)
    for lo, hi in BUCKETS:
        if lo <= c < hi or (hi == BUCKETS[-1][1] and c == hi):
            return bucket_label(lo, hi)
    return bucket_label(*BUCKETS[-1])  # unreachable: the buckets cover [0, 1]


def bucket_label(lo: float, hi: float) -> str:
    return f"[{lo:.1f},{hi:.1f}{']' if hi == BUCKETS[-1][1] else ')'}"


@dataclass
class Scored:
    """One question's verdict."""

    q: dict[str, Any]
    answer: Any
    route: str
    confidence: float
    reason: str | None = None
    latency_ms: float = 0.0
    wall_ms: float = 0.0
    citations: list[tuple[str, str]] = field(default_factory=list)

    @property
    def abstained(self) -> bool:
        return self.route == "abstain"

    @property
    def out_of_scope(self) -> bool:
        return gold_abstains(self.q)

    @property
    def ok(self) -> bool:
        """Right: an abstention on an out-of-scope question, or a non-abstained exact match on any other."""
        if self.out_of_scope:
            return self.abstained
        return not self.abstained and same(self.answer, self.q.get("answer"))

    @property
    def confident_wrong(self) -> bool:
        return not self.ok and not self.abstained and self.confidence >= CONFIDENT

    @property
    def category(self) -> str:
        return str(self.q.get("category") or self.q.get("kind") or "-")


def scored(q: dict[str, Any], ans: Answer, wall_ms: float = 0.0) -> Scored:
    return Scored(
        q=q,
        answer=ans.answer,
        route=ans.route,
        confidence=float(ans.confidence or 0.0),
        reason=ans.reason,
        latency_ms=float(ans.latency_ms or 0.0),
        wall_ms=wall_ms,
        citations=[(c.source, c.record_id) for c in ans.citations],
    )


def _rate(num: int, den: int) -> float:
    return round(num / den, 4) if den else 0.0


def _share(items: Iterable[Scored], key: Callable[[Scored], str]) -> dict[str, float]:
    groups: dict[str, list[int]] = {}
    for s in items:
        g = groups.setdefault(key(s), [0, 0])
        g[0] += s.ok
        g[1] += 1
    return {k: _rate(v[0], v[1]) for k, v in sorted(groups.items())}


def reliability(items: list[Scored]) -> list[dict[str, Any]]:
    """n and accuracy per confidence bucket (every bucket listed), abstentions last in a row of their own."""
    rows = [bucket_label(lo, hi) for lo, hi in BUCKETS] + [ABSTAIN_ROW]
    counts = {r: [0, 0] for r in rows}
    for s in items:
        c = counts[bucket(s.confidence, s.route)]
        c[0] += s.ok
        c[1] += 1
    return [{"bucket": r, "n": counts[r][1], "accuracy": _rate(counts[r][0], counts[r][1]) if counts[r][1] else None}
            for r in rows]  # fmt: skip


def score_set(items: list[Scored]) -> dict[str, Any]:
    """The answer-quality part of a report (no latency, no citations)."""
    n = len(items)
    oos = [s for s in items if s.out_of_scope]
    confident = [s for s in items if not s.abstained and s.confidence >= CONFIDENT]
    cw = sum(s.confident_wrong for s in items)
    return {
        "questions": n,
        "exact_match": _rate(sum(s.ok for s in items), n),
        "abstained": sum(s.abstained for s in items),
        "out_of_scope": len(oos),
        "out_of_scope_right": sum(s.ok for s in oos),
        "out_of_scope_answered": sum(not s.abstained for s in oos),
        "in_scope_abstained": sum(s.abstained for s in items if not s.out_of_scope),
        "confident_wrong": cw,
        "confident_wrong_rate": _rate(cw, n),
        "acc_at_conf": {"min_confidence": CONFIDENT, "n": len(confident),
                        "accuracy": _rate(sum(s.ok for s in confident), len(confident)) if confident else None},
        "by_category": _share(items, lambda s: s.category),
        "by_kind": _share(items, lambda s: str(s.q.get("kind") or "-")),
        "reliability": reliability(items),
    }  # fmt: skip


def check(report: dict[str, Any]) -> list[str]:
    """The release thresholds one pack+set report misses (empty when it passes)."""
    where = f"{report['pack']} {report['set']}"
    if report.get("error"):
        return [f"{where}: did not run ({report['error']})"]
    out = []
    floor = CHECK_EM.get(report["set"])
    if floor is not None and report["exact_match"] < floor:
        out.append(f"{where}: EM {report['exact_match']:.3f} < {floor}")
    if report["out_of_scope_answered"]:
        out.append(f"{where}: {report['out_of_scope_answered']} out-of-scope question(s) answered")
    if report["confident_wrong_rate"] > CHECK_CONFIDENT_WRONG:
        out.append(
            f"{where}: confident-wrong rate {report['confident_wrong_rate']:.1%} > {CHECK_CONFIDENT_WRONG:.0%}"
            f" ({report['confident_wrong']} of {report['questions']})"
        )
    return out


def _p95(xs: list[float]) -> float:
    if not xs:
        return 0.0
    s = sorted(xs)
    return s[min(len(s) - 1, round(0.95 * (len(s) - 1)))]


def _lat(xs: list[float]) -> tuple[float | None, float | None]:
    return (round(statistics.median(xs), 2), round(_p95(xs), 2)) if xs else (None, None)
