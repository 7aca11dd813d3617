"""Scoring for bench/qa_tatqa.py: is the gold answer in the evidence, which gold paragraphs does it hold."""

from __future__ import annotations

import re
from pathlib import PurePath
from typing import Any

from esc.agents.query.retrieval import Evidence

SCALES = {"": 1.0, "thousand": 1e3, "million": 1e6, "billion": 1e9, "percent": 1.0}
_NUM = re.compile(r"\(?-?\$?\s?\d[\d,]*(?:\.\d+)?%?\)?")


def _norm(text: str) -> str:
    text = str(text).casefold().replace("’", "'").replace("–", "-").replace("—", "-")
    return " ".join(re.sub(r"[^\w%.\-']+", " ", text).split())


def _number(text: str) -> float | None:
    t = str(text).strip()
    neg = (t.startswith("(") and t.endswith(")")) or t.startswith("-")
    digits = re.sub(r"[^\d.]", "", t)
    if not digits or digits.count(".") > 1 or not any(c.isdigit() for c in digits):
        return None
    try:
        value = float(digits.strip("."))
    except ValueError:
        return None
    return -value if neg else value


def numbers_in(text: str) -> set[float]:
    out = set()
    for m in _NUM.finditer(text):
        n = _number(m.group(0))
        if n is not None:
            out.add(round(abs(n), 4))
    return out


def _num_found(gold: float, scale: str, found: set[float]) -> bool:
    targets = {abs(gold), abs(gold) * SCALES.get(scale, 1.0)}
    return any(
        abs(t - f) <= max(1e-6, 5e-4 * abs(t)) or round(t, 2) == round(f, 2) for t in targets for f in found
    )


def answer_in(q: dict[str, Any], texts: list[str]) -> bool:
    """Is the gold answer in the evidence texts (see the module docstring)?"""
    blob = "\n".join(texts)
    norm_blob = _norm(blob)
    found = numbers_in(blob)
    answer = q["answer"]
    spans = answer if isinstance(answer, list) else [answer]
    if not spans:
        return False
    for span in spans:
        if isinstance(span, int | float):
            if not _num_found(float(span), q.get("scale", ""), found):
                return False
            continue
        s = str(span).strip()
        n = _number(s) if re.fullmatch(r"[\s$()%\-\d.,]+", s) else None
        if n is not None:
            if not _num_found(n, q.get("scale", ""), found):
                return False
        elif _norm(s) not in norm_blob:
            return False
    return True


def paragraph_spans(doc: str) -> list[tuple[int, int]]:
    """Character spans of a doc's paragraphs (blank-line blocks; TAT-QA's paragraph ``order`` counts from 1)."""
    spans, pos = [], 0
    for part in doc.split("\n\n"):
        spans.append((pos, pos + len(part)))
        pos += len(part) + 2
    return spans


def paragraphs_found(evidence: list[Evidence], docs: dict[str, str]) -> set[tuple[str, int]]:
    """(context uid, paragraph order) pairs the evidence chunks hold (see the module docstring)."""
    found: set[tuple[str, int]] = set()
    for e in evidence:
        uid = PurePath(e.file.split(":", 1)[0]).stem if e.file else ""
        doc = docs.get(uid)
        if doc is None or not e.file.startswith("docs/"):
            continue
        at = doc.find(e.text)
        if at < 0:
            continue
        lo, hi = at, at + len(e.text)
        for order, (a, b) in enumerate(paragraph_spans(doc), start=1):
            overlap = min(hi, b) - max(lo, a)
            if overlap > 0 and (2 * overlap >= b - a or 2 * overlap >= hi - lo):
                found.add((uid, order))
    return found
