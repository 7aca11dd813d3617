"""Data drift windows of each source, kept beside the contract agent; metrics and the contract's ``drift``.

A **window** closes when a source is settled (agents/contract_agent.py) and the evidence that counts for it
changed since the last window:

* a file-fed source whose files were replaced or removed (a new version of a file, a deleted file): the window is
  the whole source as it now counts, and it is compared with the previous window;
* a source that only grew (records pushed, or a file added beside the ones it had): the window is what was added
  since the last window (profiles are counts: later minus earlier, contract/drift.py), once that is at least
  :data:`MIN_WINDOW_RECORDS` records; fewer wait for more;
* the first window of a source is compared with nothing (its rates are reported; no shift).

Windows of files never depend on timing (a file version is a window, and a source is only looked at when it has
settled); windows of pushed records follow how records arrive, as any time window does.

The tracker's state (per source: the evidence seen, the whole source then, the last window and its report)
round-trips through :meth:`DriftTracker.to_state` in the contract writer's state.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from esc.agents import metrics
from esc.agents.source_state import SourceState
from esc.contract.drift import Window, compare
from esc.contract.model import Contract
from esc.contract.reports import SourceDrift

MIN_WINDOW_RECORDS = 100
"""Records a grown source needs since its last window before they make a window of their own."""


@dataclass
class SourceTrack:
    evidence: dict[str, Any]  # {"files": {file: version hash in use}, "loose": pushed records}
    seen: Window  # the whole source when the last window closed
    last: Window  # the last window (the next one is compared with it)
    report: SourceDrift

    def to_dict(self) -> dict[str, Any]:
        return {"evidence": self.evidence, "seen": self.seen.to_dict(), "last": self.last.to_dict(),
                "report": self.report.model_dump(mode="json", exclude_none=True)}  # fmt: skip

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> SourceTrack:
        return cls(dict(d["evidence"]), Window.from_dict(d["seen"]), Window.from_dict(d["last"]),
                   SourceDrift.model_validate(d["report"]))  # fmt: skip


def _evidence(st: SourceState) -> dict[str, Any]:
    return {"files": dict(sorted(st.current.items())), "loose": st.loose.records if st.loose is not None else 0}


def _grew(before: Mapping[str, Any], now: Mapping[str, Any]) -> bool:
    """The source kept every file version it had (and its pushed records) and only gained."""
    files = now["files"]
    return all(files.get(f) == h for f, h in before["files"].items()) and now["loose"] >= before["loose"]


def _ids(contract: Contract, source: str) -> dict[str, str]:
    spec = contract.sources.get(source)
    return {f.name: f.id for f in spec.fields} if spec is not None else {}


class DriftTracker:
    def __init__(self, min_window: int = MIN_WINDOW_RECORDS) -> None:
        self.min_window = min_window
        self.sources: dict[str, SourceTrack] = {}

    def observe(self, sources: Mapping[str, SourceState], contract: Contract) -> list[str]:
        """Close the windows that are due; returns the sources whose drift report changed."""
        closed = []
        for name, st in sorted(sources.items()):
            if not st.settled or not st.profile.records:
                continue
            evidence = _evidence(st)
            track = self.sources.get(name)
            if track is not None and track.evidence == evidence:
                continue
            whole = Window.of(st.profile)
            if track is None:
                window, previous, n = whole, None, 1
            else:
                window = whole.minus(track.seen) if _grew(track.evidence, evidence) else whole
                if window is not whole and window.records < self.min_window:
                    continue  # too few new records yet: they join the next window
                previous, n = track.last, track.report.window + 1
            report = compare(previous, window, n, _ids(contract, name))
            self.sources[name] = SourceTrack(evidence, whole, window, report)
            closed.append(name)
            metrics.DRIFT_WINDOWS.labels(metrics.source_label(name)).inc()
        if closed:
            self.export()
        return closed

    def reports(self) -> dict[str, SourceDrift]:
        return {s: t.report for s, t in sorted(self.sources.items())}

    def annotate(self, contract: Contract) -> Contract:
        """The contract with the current drift reports."""
        return contract.model_copy(update={"drift": self.reports()})

    def export(self) -> None:
        """Set the drift gauges from every report; series beyond the label cap share one ``_other`` series that
        holds the largest value of what it stands for."""
        gauges = {
            "null_rate": metrics.FIELD_NULL_RATE,
            "null_rate_change": metrics.FIELD_NULL_RATE_CHANGE,
            "type_shift": metrics.FIELD_TYPE_SHIFT,
            "distinct": metrics.FIELD_DISTINCT,
            "psi": metrics.FIELD_PSI,
            "ks": metrics.FIELD_KS,
        }
        values: dict[str, dict[tuple[str, str], float]] = defaultdict(dict)
        for source, report in self.reports().items():
            for name, fd in report.fields.items():
                labels = metrics.field_labels(source, name)
                for attr in gauges:
                    v = getattr(fd, attr)
                    if v is not None:
                        have = values[attr].get(labels)
                        values[attr][labels] = float(v) if have is None else max(have, float(v))
        for attr, gauge in gauges.items():
            for labels, v in values[attr].items():
                gauge.labels(*labels).set(v)

    def to_state(self) -> dict[str, Any]:
        return {"min_window": self.min_window, "sources": {s: t.to_dict() for s, t in sorted(self.sources.items())}}

    @classmethod
    def from_state(cls, state: Mapping[str, Any] | None) -> DriftTracker:
        tracker = cls(int(state.get("min_window", MIN_WINDOW_RECORDS)) if state else MIN_WINDOW_RECORDS)
        for s, d in (state or {}).get("sources", {}).items():
            tracker.sources[s] = SourceTrack.from_dict(d)
        if tracker.sources:
            tracker.export()  # a restarted worker shows the drift it had
        return tracker
