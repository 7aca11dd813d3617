"""A generated corpus of hostile input for the ingest (issue 14, point 8): every case is made, deterministically,
in a folder the test gives (``tests/unit/test_hostile_corpus.py`` runs them; ``runner`` says how)."""

from __future__ import annotations

from tests.hostile import binary_cases, csv_cases, encoding_cases, fs_cases, injection_cases, json_cases
from tests.hostile.model import Case, Env, Expect, Numbering

__all__ = ["Case", "Env", "Expect", "corpus"]


def corpus() -> list[Case]:
    """Every case, numbered in a fixed order (c001, c002, ...)."""
    ids = Numbering()
    return [
        *csv_cases.cases(ids),
        *encoding_cases.cases(ids),
        *json_cases.cases(ids),
        *binary_cases.cases(ids),
        *injection_cases.cases(ids),
        *fs_cases.cases(ids),
    ]
