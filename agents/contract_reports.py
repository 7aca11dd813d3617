"""What the contract writer adds to the contract beside its structure: data drift (agents/drift.py) and the results
of the version's example queries, which workers send back on the profiles topic once they ran them
(agents/examples_runner.py). Either change republishes the latest contract (no new version: reports are
statistics, contract/reports.py)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from esc.agents.drift import DriftTracker
from esc.agents.source_state import SourceState
from esc.contract.model import Contract
from esc.contract.reports import ExampleReport

EXAMPLES_KIND = "examples"


def examples_update(report: ExampleReport) -> bytes:
    """The profiles-topic message that carries a version's example results to the contract writer."""
    return json.dumps({"kind": EXAMPLES_KIND, "report": report.model_dump(mode="json")}).encode("utf-8")


class ContractReports:
    def __init__(self, drift: DriftTracker | None = None) -> None:
        self.drift = drift or DriftTracker()
        self._examples: list[ExampleReport] = []

    def take(self, msg: Mapping[str, Any]) -> bool:
        """A profiles-topic message this owns (an example report); False for anything else."""
        if msg.get("kind") != EXAMPLES_KIND:
            return False
        self._examples.append(ExampleReport.model_validate(msg["report"]))
        return True

    def update(self, contract: Contract, sources: Mapping[str, SourceState]) -> Contract | None:
        """The contract with fresh reports, or None when they did not change. An example report counts only for
        the version (and content) it ran on."""
        reports, self._examples = self._examples, []
        changed = False
        examples = contract.examples
        for r in reports:
            if r.version == contract.version and r.content_hash in ("", contract.content_hash) and r != examples:
                examples, changed = r, True
        if self.drift.observe(sources, contract):
            changed = True
        if not changed:
            return None
        return self.drift.annotate(contract).model_copy(update={"examples": examples})

    def to_state(self) -> dict[str, Any]:
        return self.drift.to_state()

    @classmethod
    def from_state(cls, state: Mapping[str, Any] | None) -> ContractReports:
        return cls(DriftTracker.from_state(state))
