"""Example queries of a contract (contract/examples.py, agents/examples_runner.py): what is generated, a version
whose examples fail is reported (result, metric, log, and the report in the republished contract), and a report
counts only for the version it ran on."""

from __future__ import annotations

import json
import logging

import pytest

from esc.agents import metrics
from esc.agents.contract_reports import examples_update
from esc.agents.examples_runner import ExampleChecker, run_examples
from esc.agents.pipeline import ContractWriter
from esc.agents.query.memstore import MemoryGraphStore
from esc.agents.query.plan import PlanRow, QueryPlan
from esc.contract.entities import with_entities
from esc.contract.examples import example_queries
from esc.contract.model import Contract
from esc.contract.serde import load_json
from tests.fakes.contracts import chinook_like


def contract() -> Contract:
    c = with_entities(chinook_like())
    c.version, c.content_hash = 4, "h4"
    return c


def test_examples_are_a_count_and_a_lookup_per_type_and_a_hop_per_written_relationship() -> None:
    c = contract()
    examples = example_queries(c)
    for e in c.entities:
        assert f"{e.name}: count" in {x.name for x in examples}
    hops = {(x.entity, x.relationship, x.target) for x in examples if x.kind == "hop"}
    rels = {(r.from_entity, r.name, r.to_entity) for r in c.relationships}  # foreign keys and nesting
    assert hops == rels and {r.kind for r in c.relationships} == {"foreign_key", "nesting"}
    lookups = [x for x in examples if x.kind == "lookup"]
    assert lookups and all(x.key for x in lookups)
    assert example_queries(c) == examples  # deterministic


def test_failing_examples_are_reported_in_the_result_the_metric_the_log_and_the_contract(
    caplog: pytest.LogCaptureFixture,
) -> None:
    c = contract()
    with caplog.at_level(logging.WARNING, logger="esc.agents.examples_runner"):
        report, _ = run_examples(c, MemoryGraphStore(), "memory")  # an empty store: nothing is there
    assert report.ran == len(example_queries(c)) and report.failed == report.ran
    errors = {r.kind: r.error for r in report.results}
    assert errors["count"] == "empty result" and errors["hop"] == "empty result"
    assert str(errors["lookup"]).startswith("no ") and "to look up" in str(errors["lookup"])
    assert metrics.REGISTRY.get_sample_value("esc_contract_examples_failed") == report.failed
    assert f"contract v4: {report.failed} of {report.ran} example queries failed" in caplog.text

    writer = ContractWriter(contract_id="esc")
    writer.agent.contract = c
    stale = report.model_copy(update={"version": 3})
    assert writer.on_updates([examples_update(stale)]).contracts == []  # another version's report: not this one's
    out = writer.on_updates([examples_update(report)])
    assert [k for k, _ in out.contracts] == [b"esc"]  # the latest, republished; no new version
    published = load_json(json.dumps(json.loads(out.contracts[0][1])))
    assert published.version == 4 and published.examples is not None and published.examples.failed == report.failed
    assert writer.on_updates([examples_update(report)]).contracts == []  # the same report again changes nothing
    restored = ContractWriter.from_state(json.loads(json.dumps(writer.state())))
    assert restored.agent.contract.examples == published.examples


def test_a_checker_runs_once_per_version() -> None:
    checker = ExampleChecker("memory")
    c = contract()
    assert checker.due(c)
    checker.check(c, MemoryGraphStore())
    assert not checker.due(c) and checker.due(c.model_copy(update={"version": 5, "content_hash": "h5"}))
    assert not checker.due(None) and not checker.due(Contract())


def test_a_version_that_arrives_before_its_records_is_checked_once_they_stop_arriving() -> None:
    """A scan's contract now comes before its records (streams/connectors/file_profiles.py): checked while they
    still arrive, every example would fail on a store not holding them yet."""
    import asyncio
    import time
    from types import SimpleNamespace

    published: list[bytes] = []

    async def publish(value: bytes) -> None:
        published.append(value)

    worker = SimpleNamespace(contract=contract(), graph=MemoryGraphStore(), last=float("-inf"),
                             contract_since=time.monotonic())  # fmt: skip
    worker.ingestor = SimpleNamespace(graph=worker.graph)
    worker.busy = lambda within=1.0: time.monotonic() - worker.last < within
    checker = ExampleChecker("memory")
    # The version came just now and no batch yet: its records may be on their way (checked now, a count would run
    # on a type still empty and the report would say the example failed).
    assert not asyncio.run(checker.when_idle(worker, publish, quiet=5.0))
    worker.contract_since -= 6.0
    worker.last = time.monotonic()
    assert not asyncio.run(checker.when_idle(worker, publish, quiet=5.0))  # a batch came just now
    assert published == [] and checker.due(worker.contract)
    worker.last -= 6.0  # quiet for longer than that
    assert asyncio.run(checker.when_idle(worker, publish, quiet=5.0))
    assert len(published) == 1 and not checker.due(worker.contract)


class _CountingStore(MemoryGraphStore):
    def __init__(self, landed: bool = True) -> None:
        super().__init__()
        self.plans = 0
        self.landed = landed  # False: the type's records are not in the store yet (every example comes back empty)

    def run_plan(self, plan: QueryPlan) -> list[PlanRow]:
        self.plans += 1
        return [PlanRow(values={"n": 3, "k0": 1, "k1": 1}, citations=[])] if self.landed else []


def test_a_failed_example_runs_again_when_the_check_resumes() -> None:
    """The version came before its records: what ran before the check gave way to them ran on an empty type."""
    c = contract()
    store = _CountingStore(landed=False)
    checker = ExampleChecker("memory")
    assert checker.check(c, store, lambda: True) is None  # one example, empty, then the records came
    store.landed = True
    report = checker.check(c, store, lambda: False)
    assert report is not None and report.failed == 0 and report.ran == len(example_queries(c))


def test_a_check_gives_way_to_graph_work_and_goes_on_where_it_stopped() -> None:
    """A check asks ``stop`` after each example: when graph work came in, the runs so far are kept and the next
    check of the same version runs only the rest; the report then holds every example once, in order."""
    c = contract()
    n = len(example_queries(c))
    store = _CountingStore()
    checker = ExampleChecker("memory")
    asked = {"n": 0}

    def stop_after_three() -> bool:
        asked["n"] += 1
        return asked["n"] >= 3

    assert checker.check(c, store, stop_after_three) is None  # gave way after three examples
    assert checker.due(c)
    before = store.plans
    assert checker.check(c, store, lambda: True) is None  # one example per check at least: never stuck
    assert store.plans > before
    report = checker.check(c, store, lambda: False)
    assert report is not None and not checker.due(c)
    assert [r.name for r in report.results] == [x.name for x in example_queries(c)] and report.ran == n
    full_plans = _CountingStore()
    run_examples(c, full_plans)
    assert store.plans == full_plans.plans  # no example ran twice

    other = c.model_copy(update={"version": 5, "content_hash": "h5"})
    assert checker.check(other, store, lambda: True) is None  # a partial check of v5 ...
    assert checker.check(c.model_copy(update={"version": 6, "content_hash": "h6"}), store) is not None
    store.plans = 0
    assert checker.check(other, store) is not None  # ... is not reused once another version was checked
    assert store.plans == full_plans.plans


def test_a_contract_without_examples_reports_none() -> None:
    report, runs = run_examples(Contract(contract_id="empty"), MemoryGraphStore(), "memory")
    assert runs == [] and report.ran == 0 and report.failed == 0
