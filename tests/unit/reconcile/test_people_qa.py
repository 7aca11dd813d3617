"""The people pack's questions over reconciled data (bench/_reconcile_qa.py): EM floor, every conflict question
answered with ``conflicts`` that cite each disagreeing source, no confident wrong answer, every question about a
person who does not exist declined."""

from __future__ import annotations

from bench._reconcile_qa import people_qa

EM_FLOOR = 0.85


def test_people_pack_questions() -> None:
    report = people_qa(verbose=True)
    assert report["exact_match"] >= EM_FLOOR, report["wrong"]
    assert report["conflicts_missing"] == [], report["conflicts_missing"]
    assert report["confident_wrong"] == 0, report["wrong"]
    assert report["by_category"]["abstain"] == 1.0
