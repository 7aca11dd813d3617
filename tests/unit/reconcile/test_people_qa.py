"""The reconciliation packs' questions over reconciled data (bench/_reconcile_qa.py): EM floors, every conflict
question answered with ``conflicts`` that cite each disagreeing source, no confident wrong answer, every question
about a person or supplier who does not exist declined. The people pack was the first test set; the suppliers pack
(another domain, written before tuning) the second."""

from __future__ import annotations

from bench._reconcile_qa import people_qa, suppliers_qa

EM_FLOOR = 0.95
"""Measured 1.000 (0.902 before the time, unit and scope work); the issue's goal is 0.85."""
SUPPLIERS_EM_FLOOR = 0.9
"""Measured 0.980 (0.647 before); the one miss is a link the matcher cannot prove (a name and a city only)."""


def test_people_pack_questions() -> None:
    report = people_qa(verbose=True)
    assert report["exact_match"] >= EM_FLOOR, report["wrong"]
    assert report["conflicts_missing"] == [], report["conflicts_missing"]
    assert report["confident_wrong"] == 0, report["wrong"]
    assert report["by_category"]["abstain"] == 1.0


def test_suppliers_pack_questions() -> None:
    report = suppliers_qa(verbose=True)
    assert report["exact_match"] >= SUPPLIERS_EM_FLOOR, report["wrong"]
    assert report["conflicts_missing"] == [], report["conflicts_missing"]
    assert report["confident_wrong"] == 0, report["wrong"]
    assert report["by_category"]["abstain"] == 1.0
