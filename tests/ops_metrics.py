"""The metric names ops/ (alert and recording rules, Grafana dashboards) query, for tests that check they exist."""

from __future__ import annotations

import json
import re
from pathlib import Path

import yaml

OPS = Path(__file__).resolve().parents[1] / "ops"
_NAME = re.compile(r"\besc_[a-z_]+\b")
_SUFFIXES = ("_total", "_bucket", "_sum", "_count", "_created")


def ops_exprs() -> list[str]:
    exprs = []
    for path in sorted((OPS / "prometheus" / "rules").glob("*.yml")):
        for group in yaml.safe_load(path.read_text("utf-8"))["groups"]:
            exprs += [rule["expr"] for rule in group["rules"]]
    for path in sorted((OPS / "grafana" / "dashboards").glob("*.json")):
        dash = json.loads(path.read_text("utf-8"))
        exprs += [t["expr"] for p in dash["panels"] for t in p.get("targets", []) if "expr" in t]
    return exprs


def family(sample_name: str) -> str:
    for suffix in _SUFFIXES:
        if sample_name.endswith(suffix):
            return sample_name[: -len(suffix)]
    return sample_name


def ops_metric_families() -> set[str]:
    """Metric families (``esc_dlq`` for ``esc_dlq_total``) used by an expression in ops/."""
    return {family(n) for expr in ops_exprs() for n in _NAME.findall(expr)}
