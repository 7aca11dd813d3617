"""Runs a contract version's example queries (contract/examples.py) against a graph store.

Each example becomes a query plan of the query side (agents/query/plan.py), is validated against the contract
(agents/query/validate.py) and run through the store's own compiler (Cypher on Neo4j, SQL on the embedded
store), read-only, values as parameters. A lookup first reads the smallest identity key of its type (a plan too),
then looks that key up. An example passes when it returns something: a count of at least one, at least one row.
Failures are logged and counted (``esc_contract_examples_failed``); the report goes back to the contract writer
(agents/contract_reports.py), so ``esc schema --json`` shows it under ``examples``.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from esc.agents import metrics
from esc.agents.contract_reports import examples_update
from esc.agents.query.plan import Filter, Hop, NodePattern, OrderBy, PlanRow, QueryPlan, ReturnItem
from esc.agents.query.validate import ensure_valid
from esc.agents.stores.base import GraphStore
from esc.contract.examples import ExampleQuery, example_queries
from esc.contract.model import Contract
from esc.contract.reports import ExampleReport, ExampleResult

if TYPE_CHECKING:
    from esc.agents.pipeline import ExtractionWorker

log = logging.getLogger(__name__)

SHOWN_ROWS = 3


def count_plan(ex: ExampleQuery) -> QueryPlan:
    return QueryPlan(kind="count", start=NodePattern(var="n0", label=ex.entity),
                     returns=[ReturnItem(var="n0", agg="count", alias="n")])  # fmt: skip


def hop_plan(ex: ExampleQuery) -> QueryPlan:
    assert ex.relationship is not None and ex.target is not None
    return QueryPlan(
        kind="traverse",
        start=NodePattern(var="n0", label=ex.entity),
        hops=[Hop(rel_type=ex.relationship, direction="out", target=NodePattern(var="n1", label=ex.target))],
        returns=[ReturnItem(var="n1", agg="count", alias="n")],
    )


def probe_plan(ex: ExampleQuery) -> QueryPlan:
    """The smallest identity key of the example's type (what the lookup then looks up)."""
    return QueryPlan(
        kind="list",
        start=NodePattern(var="n0", label=ex.entity, filters=[Filter(prop=k, op="notnull", value=None) for k in ex.key]),
        returns=[ReturnItem(var="n0", prop=k, alias=f"k{i}") for i, k in enumerate(ex.key)],
        order_by=OrderBy(var="n0", prop=ex.key[0], desc=False),
        limit=1,
    )


def lookup_plan(ex: ExampleQuery, values: list[Any]) -> QueryPlan:
    return QueryPlan(
        kind="lookup",
        start=NodePattern(var="n0", label=ex.entity,
                          filters=[Filter(prop=k, op="eq", value=v) for k, v in zip(ex.key, values, strict=True)]),
        returns=[ReturnItem(var="n0", prop=k, alias=k) for k in ex.key],
        cite=["n0"],
    )  # fmt: skip


@dataclass
class ExampleRun:
    example: ExampleQuery
    plans: list[QueryPlan] = field(default_factory=list)
    rows: list[PlanRow] = field(default_factory=list)
    result: ExampleResult | None = None
    seconds: float = 0.0  # what its queries took


def _count(rows: list[PlanRow]) -> int:
    return int(rows[0].values.get("n") or 0) if rows else 0


def run_one(ex: ExampleQuery, contract: Contract, graph: GraphStore) -> ExampleRun:
    run = ExampleRun(ex)
    error: str | None = None
    n = 0
    t0 = time.perf_counter()
    try:
        if ex.kind == "lookup":
            run.plans.append(probe_plan(ex))
            ensure_valid(run.plans[0], contract)
            probe = graph.run_plan(run.plans[0])
            if not probe:
                error = f"no {ex.entity} with a key to look up"
            else:
                run.plans.append(lookup_plan(ex, [probe[0].values.get(f"k{i}") for i in range(len(ex.key))]))
                ensure_valid(run.plans[1], contract)
                run.rows = graph.run_plan(run.plans[1])
                n = len(run.rows)
        else:
            run.plans.append(count_plan(ex) if ex.kind == "count" else hop_plan(ex))
            ensure_valid(run.plans[0], contract)
            run.rows = graph.run_plan(run.plans[0])
            n = _count(run.rows)
    except Exception as exc:  # a failing example is reported, never raised: the worker goes on
        error = f"{type(exc).__name__}: {exc}"[:300]
    if error is None and n == 0:
        error = "empty result"
    run.seconds = time.perf_counter() - t0
    run.result = ExampleResult(name=ex.name, kind=ex.kind, entity=ex.entity, ok=error is None, rows=n, error=error)
    return run


def run_examples(contract: Contract, graph: GraphStore, store: str = "") -> tuple[ExampleReport, list[ExampleRun]]:
    """Run every example of ``contract`` against ``graph``; log and count the failures."""
    runs = [run_one(ex, contract, graph) for ex in example_queries(contract)]
    return report_runs(contract, runs, store), runs


def report_runs(contract: Contract, runs: list[ExampleRun], store: str = "") -> ExampleReport:
    """The report of a version's example runs; the failures logged and counted."""
    results = [r.result for r in runs if r.result is not None]
    failed = [r for r in results if not r.ok]
    report = ExampleReport(version=contract.version, content_hash=contract.content_hash, store=store,
                           ran=len(results), failed=len(failed), results=results)  # fmt: skip
    metrics.EXAMPLES_FAILED.set(len(failed))
    metrics.EXAMPLES_RUN.labels("ok").inc(len(results) - len(failed))
    metrics.EXAMPLES_RUN.labels("failed").inc(len(failed))
    if failed:
        log.warning("contract v%s: %d of %d example queries failed: %s", contract.version, len(failed), len(results),
                    "; ".join(f"{r.name} ({r.error})" for r in failed[:5]))  # fmt: skip
    elif runs:
        slow = max(runs, key=lambda r: r.seconds)
        log.info("contract v%s: %d example queries passed on %s (%.2f s, the slowest %s %.2f s)", contract.version,
                 len(results), store or "the store", sum(r.seconds for r in runs), slow.example.name, slow.seconds)
    return report


class ExampleChecker:
    """Runs the examples once per contract version (and content), when the runtime says the store is current."""

    def __init__(self, store: str = "") -> None:
        self.store = store
        self.checked: tuple[int, str] | None = None
        self._partial: tuple[tuple[int, str], list[ExampleRun]] | None = None  # a check that gave way, so far

    def due(self, contract: Contract | None) -> bool:
        return contract is not None and bool(contract.entities) and (contract.version, contract.content_hash) != self.checked

    def check(
        self, contract: Contract, graph: GraphStore, stop: Callable[[], bool] | None = None
    ) -> ExampleReport | None:
        """Run the version's examples and report them. With ``stop``, asked after each example: when it says so
        (graph work came in: a count over a large type takes the store seconds), the runs so far are kept, None
        is returned, and the next check of the same version goes on from there."""
        key = (contract.version, contract.content_hash)
        runs = self._partial[1] if self._partial is not None and self._partial[0] == key else []
        self._partial = None
        # A kept run that failed runs again: the graph work the check gave way to may be the data it missed (a
        # version can arrive before its records).
        runs = [r if r.result is None or r.result.ok else run_one(r.example, contract, graph) for r in runs]
        for i, ex in enumerate(example_queries(contract)[len(runs):]):
            if i and stop is not None and stop():  # one example a check at least: a resumed check moves on
                self._partial = (key, runs)
                log.info("contract v%s: example queries gave way to graph work after %d (%.2f s)", contract.version,
                         len(runs), sum(r.seconds for r in runs))  # fmt: skip
                return None
            runs.append(run_one(ex, contract, graph))
        self.checked = key
        return report_runs(contract, runs, self.store)

    async def when_idle(
        self, worker: ExtractionWorker, publish: Callable[[bytes], Awaitable[None]], quiet: float = 0.0
    ) -> bool:
        """Check the worker's contract if it is new and nothing is being replayed or deferred (the store holds the
        version), no record batch came in the last ``quiet`` seconds and the version is at least that old (a
        version can now arrive before its records: a scan's files are profiled before they are sent,
        ``streams/connectors/file_profiles.py``; checked at once, a count ran on a type still empty);
        ``publish`` sends the report (agents/contract_reports.examples_update) to the contract writer. A check
        gives way to graph work that comes in meanwhile and goes on at the next quiet moment (False until done)."""
        contract = worker.contract
        if contract is None or not self.due(contract) or worker.busy(within=quiet):
            return False
        if time.monotonic() - worker.contract_since < quiet:
            return False  # its records may not have come in yet: a version's first batch can follow it by seconds
        def stop() -> bool:
            return worker.busy(within=quiet)

        report = await asyncio.to_thread(self.check, contract, worker.ingestor.graph, stop)
        if report is None:
            return False
        await publish(examples_update(report))
        return True
