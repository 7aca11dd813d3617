"""Two workers, one app (issue 13): a second worker joins while the first ingests Sakila, so the records topic's
four partitions are rebalanced in the middle of the ingest. The contract (keys, foreign keys, records per
source) and the graph must equal a clean run's: nothing lost, nothing counted or written twice across the
rebalance."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from esc.contract.entities import entity_name
from tests.integration.test_kill9 import SAKILA, drop_with_prose, embedded_clean_run, worker_contract
from tests.integration.truth import expected_counts, graph_counts, pack_truth, wipe_labels
from tests.integration.worker import Worker, poll

pytestmark = pytest.mark.integration

JOIN_AFTER = 3.0
"""Seconds after the drop when the second worker joins: the first is profiling and writing by then."""


def test_a_rebalance_in_the_middle_of_an_ingest_changes_nothing(
    kafka_bootstrap: str, neo4j_driver: Any, tmp_path: Path
) -> None:
    truth = pack_truth(SAKILA)
    want = expected_counts(truth)
    first = Worker(tmp_path / "a").start()
    second = Worker(tmp_path / "b", run=first.run)  # same app id: same consumer group, same topics
    ns = first.label("")
    try:
        drop_with_prose(first.data)
        time.sleep(JOIN_AFTER)
        second.start()
        got = poll(lambda: graph_counts(neo4j_driver, truth, ns), lambda g: g == want, 300,
                   "the graph of a clean run with two workers", first.log)  # fmt: skip
        assert got == want
        _, facts = embedded_clean_run(tmp_path)

        def contract() -> dict[str, Any] | None:
            return worker_contract(first) or worker_contract(second)

        same = poll(contract, lambda c: c == facts, 120, "the contract of a clean run", first.log)
        assert same == facts
    finally:
        second.stop()
        first.stop()
        wipe_labels(neo4j_driver, [entity_name(s) for s in [*truth["sources"], "essays"]], [*truth["sources"], "essays"], ns)


LEAVE_AFTER = 6.0
"""Seconds after the drop when the second worker stops: both are profiling and deferring records by then."""


def test_a_worker_leaving_in_the_middle_of_an_ingest_changes_nothing(
    kafka_bootstrap: str, neo4j_driver: Any, tmp_path: Path
) -> None:
    """Both workers share the four partitions from the start; the one without the drop folder stops (SIGTERM)
    while the ingest runs, so its partitions move back to the first in the middle of the ingest: what it had
    profiled counts once, and what it had received but not written yet is not lost."""
    truth = pack_truth(SAKILA)
    want = expected_counts(truth)
    first = Worker(tmp_path / "a").start()
    second = Worker(tmp_path / "b", run=first.run).start()
    ns = first.label("")
    try:
        poll(lambda: assigned(second), bool, 60, "the second worker's share of the partitions", second.log)
        drop_with_prose(first.data)
        time.sleep(LEAVE_AFTER)
        second.stop()
        got = poll(lambda: graph_counts(neo4j_driver, truth, ns), lambda g: g == want, 300,
                   "the graph of a clean run after a worker left", first.log)  # fmt: skip
        assert got == want
        _, facts = embedded_clean_run(tmp_path)
        same = poll(lambda: worker_contract(first), lambda c: c == facts, 120, "the contract of a clean run", first.log)
        assert same == facts
    finally:
        second.stop()
        first.stop()
        wipe_labels(neo4j_driver, [entity_name(s) for s in [*truth["sources"], "essays"]], [*truth["sources"], "essays"], ns)


def assigned(worker: Worker) -> bool:
    """The worker's seen-index is ready for some records partitions (it logs them once recovered)."""
    text = worker.log.read_text("utf-8", errors="replace") if worker.log.exists() else ""
    lines = [line for line in text.splitlines() if "seen-index ready for records partitions" in line]
    return bool(lines) and "partitions []" not in lines[-1]
