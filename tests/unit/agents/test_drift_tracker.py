"""Drift windows beside the contract agent (agents/drift.py): a file version is a window, pushed records make a
window once there are enough of them, the state survives a restart, and the gauges follow the reports."""

from __future__ import annotations

import random

import pytest

from esc.agents import metrics
from esc.agents.drift import DriftTracker
from esc.agents.source_state import SourceState
from esc.contract.model import Contract
from esc.contract.profile import SourceProfile


@pytest.fixture(autouse=True)
def fresh_label_caps(monkeypatch: pytest.MonkeyPatch) -> None:
    """The label caps are process-wide: tests run before these may have used up the source and field labels."""
    monkeypatch.setattr(metrics, "_sources", set())
    monkeypatch.setattr(metrics, "_fields", set())


def prof(n: int, mean: float, null_share: float, seed: int) -> SourceProfile:
    rnd = random.Random(seed)
    return SourceProfile.of_rows(
        "m", [{"id": i, "v": None if rnd.random() < null_share else round(rnd.gauss(mean, 1), 3)} for i in range(n)]
    )


def gauge(name: str, field: str = "v") -> float | None:
    return metrics.REGISTRY.get_sample_value(name, {"source": "m", "field": field})


def test_a_new_file_version_is_a_window_compared_with_the_one_before() -> None:
    st = SourceState("m", "csv", settled=True)
    st.add(prof(400, 10, 0.0, 1), 400, "m.csv", "h1")
    tracker = DriftTracker()
    assert tracker.observe({"m": st}, Contract()) == ["m"]
    assert tracker.observe({"m": st}, Contract()) == []  # nothing new: no window
    assert tracker.reports()["m"].window == 1
    st.add(prof(400, 30, 0.5, 2), 400, "m.csv", "h2")
    st.complete("m.csv", "h2", 400)  # the new version replaces the old one whole
    assert tracker.observe({"m": st}, Contract()) == ["m"]
    v = tracker.reports()["m"].fields["v"]
    assert tracker.reports()["m"].window == 2 and tracker.reports()["m"].previous_records == 400
    assert v.psi is not None and v.psi > 1 and (v.null_rate_change or 0) > 0.4
    assert gauge("esc_field_psi") == v.psi and gauge("esc_field_null_rate_change") == v.null_rate_change
    assert gauge("esc_field_ks") == v.ks and gauge("esc_field_null_rate") == v.null_rate


def test_pushed_records_make_a_window_of_what_was_added_once_there_are_enough() -> None:
    st = SourceState("m", "topic", settled=True)
    st.add(prof(300, 10, 0.0, 1), 300, None, None)
    tracker = DriftTracker(min_window=100)
    tracker.observe({"m": st}, Contract())
    st.add(prof(50, 50, 0.0, 2), 50, None, None)
    assert tracker.observe({"m": st}, Contract()) == []  # 50 new records: not a window yet
    st.add(prof(60, 50, 0.0, 3), 60, None, None)
    assert tracker.observe({"m": st}, Contract()) == ["m"]
    report = tracker.reports()["m"]
    assert report.records == 110 and report.previous_records == 300  # the added records, not the whole source
    assert (report.fields["v"].ks or 0) > 0.9
    restored = DriftTracker.from_state(tracker.to_state())
    assert restored.reports() == tracker.reports()
    st.add(prof(100, 50, 0.0, 4), 100, None, None)
    assert restored.observe({"m": st}, Contract()) == ["m"]
    assert (restored.reports()["m"].fields["v"].ks or 1) < 0.2  # the same as the window before


def test_unsettled_sources_make_no_window_and_the_contract_carries_the_reports() -> None:
    st = SourceState("m", "csv")
    st.add(prof(100, 10, 0.0, 1), 100, "m.csv", "h1")
    tracker = DriftTracker()
    assert tracker.observe({"m": st}, Contract()) == []
    st.settled = True
    tracker.observe({"m": st}, Contract())
    annotated = tracker.annotate(Contract())
    assert set(annotated.drift) == {"m"} and annotated.drift["m"].fields["v"].null_rate == 0.0


def test_field_labels_are_capped_with_an_other_bucket(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(metrics, "_fields", set())
    monkeypatch.setattr(metrics, "MAX_FIELD_LABELS", 2)
    assert metrics.field_labels("a", "x") == ("a", "x")
    assert metrics.field_labels("a", "y") == ("a", "y")
    assert metrics.field_labels("a", "z") == ("_other", "_other")
    assert metrics.field_labels("a", "x") == ("a", "x")
