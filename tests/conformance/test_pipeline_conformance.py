"""One pipeline, two runtimes: the same behaviours end to end on the embedded runtime and on the real stack.

``embedded``: ``esc ingest --embedded``'s code path (the in-process runtime on DuckDB stores in a temp
ESC_STATE_DIR). ``stack`` (marked integration): a real Faust worker, ``esc up --data DIR`` as a subprocess, on the
running Kafka, Neo4j and Weaviate, with a unique ESC_APP_ID / ESC_TOPIC_PREFIX / ESC_STATE_DIR / ESC_WEB_PORT and
unique source names (a uuid suffix in every file stem) so the shared graph is not polluted; its labels, source
records, constraints, vector collection and topics are removed at the end. The stack param FAILS when a service is
down, never skips.

Data: the example shop shipped in ``esc/examples`` (CSV with ';', JSON lines, nested JSON, markdown), then its
drift step (a new column). Expected values are computed from the files here, never written into the test:

- counts: graph entities per source == records in the files;
- provenance: every entity's citation is the (source, record id, location) the connector gives its record;
- schema diffs: the drift adds exactly one contract version whose diff names the new field;
- answers: the QueryAgent answers the same questions with the values in the files and cites their records.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from esc.agents.coerce import coerce
from esc.agents.query.agent import QueryAgent
from esc.contract.model import Contract
from esc.contract.records import Record
from esc.settings import load
from tests.conformance.helpers import lookup
from tests.conformance.pipeline_backends import (  # noqa: F401
    BACKENDS,
    EXAMPLES,
    STACK_TIMEOUT_S,
    Backend,
    EmbeddedBackend,
    Shop,
    StackBackend,
    _require_stack,
    record_ref,
)

# ---------------------------------------------------------------------------------------------- the run


@dataclass
class Run:
    backend: Backend
    before: Contract  # after the example shop
    after: Contract  # after the drift step
    truth: dict[str, list[Record]]  # records per source, after the drift


def _complete(shop: Shop, expected: dict[str, int]) -> Callable[[Contract | None], bool]:
    """The contract covers every source with its records counted and an identity key, and the graph holds them."""

    def ok(contract: Contract | None) -> bool:
        if contract is None or set(contract.sources) != set(expected):
            return False
        return all(contract.sources[s].identity_key for s in expected)

    return ok


@pytest.fixture(scope="module", params=BACKENDS)
def run(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Run]:
    root = tmp_path_factory.mktemp(f"pipeline-{request.param}")
    backend: Backend
    if request.param == "embedded":
        backend = EmbeddedBackend(root)
    else:
        settings = load()
        _require_stack(settings)
        backend = StackBackend(root, settings)
    try:
        shop = backend.shop
        first = shop.records()
        expected = {s: len(rs) for s, rs in first.items()}
        before = backend.until("every source is in the contract with a key", _complete(shop, expected))
        _await_counts(backend, before, expected)
        shop.drift()
        after = backend.until(
            "the contract has customers.loyalty_tier",
            lambda c: c is not None and any(f.name == "loyalty_tier" for f in c.sources[shop.sources["customers"]].fields),
        )
        truth = shop.records()
        _await_counts(backend, after, {s: len(rs) for s, rs in truth.items()})
        _await_values(backend, after, "loyalty_tier")
        yield Run(backend, before, after, truth)
    finally:
        backend.close()


def _label(contract: Contract, source: str) -> str:
    return next(e.name for e in contract.entities if e.source == source)


def _counts(backend: Backend, contract: Contract, sources: list[str]) -> dict[str, int]:
    return {s: backend.graph().count(_label(contract, s)) for s in sources}


def _await_counts(backend: Backend, contract: Contract, expected: dict[str, int]) -> None:
    """The embedded ingest is done when it returns; the stack worker is polled until its graph holds them."""
    deadline = time.monotonic() + (STACK_TIMEOUT_S if backend.name == "stack" else 0)
    while True:
        got = _counts(backend, contract, sorted(expected))
        if got == expected or time.monotonic() >= deadline:
            break
        time.sleep(1.0)
    assert got == expected, f"{backend.name}: entity counts {got} != records in the files {expected}"


def _typed(contract: Contract, source: str, name: str, value: Any) -> Any:
    """A file value as the graph holds it (coerced by the contract's field type)."""
    spec = next(f for f in contract.sources[source].fields if f.name == name)
    return coerce(value, spec.type)


def _await_values(backend: Backend, contract: Contract, prop: str) -> None:
    """After the drift, every customer has the new attribute (replay / re-delivery done)."""
    source = backend.shop.sources["customers"]
    label = _label(contract, source)
    want = {c["customer_id"]: c[prop] for c in backend.shop.customers()}

    def read() -> dict[str, Any]:
        out = {}
        for cid in want:
            rows = lookup(backend.graph(), label, "customer_id", _typed(contract, source, "customer_id", cid), [prop])
            out[cid] = rows[0].values.get(prop) if len(rows) == 1 else rows
        return out

    deadline = time.monotonic() + (STACK_TIMEOUT_S if backend.name == "stack" else 0)
    while True:
        got = read()
        if got == want or time.monotonic() >= deadline:
            break
        time.sleep(1.0)
    assert got == want, f"{backend.name}: {prop} after the drift {got} != the file {want}"


# ----------------------------------------------------------------------------------------------- the tests


def test_counts_match_the_records_in_the_files(run: Run) -> None:
    sources = sorted(run.truth)
    assert set(run.after.sources) == set(sources)
    got = _counts(run.backend, run.after, sources)
    assert got == {s: len(run.truth[s]) for s in sources}


def test_every_entity_cites_the_record_it_came_from(run: Run) -> None:
    shop = run.backend.shop
    graph = run.backend.graph()
    checks = {"customers": "customer_id", "orders": "order_id", "products": "sku", "reviews": "review_id"}
    for logical, key in checks.items():
        source = shop.sources[logical]
        label = _label(run.after, source)
        for record in run.truth[source]:
            rows = lookup(graph, label, key, _typed(run.after, source, key, record.values[key]), [key])
            assert len(rows) == 1, (source, record.values[key], rows)
            cited = {(c["source"], c["record_id"], c["location"]) for c in rows[0].citations}
            assert cited == {record_ref(record, shop)}, (source, record.values[key])


def test_a_new_column_is_one_new_version_whose_diff_names_the_field(run: Run) -> None:
    shop = run.backend.shop
    field_id = f"{shop.sources['customers']}.loyalty_tier"  # a diff target: <source>.<field name>
    assert not any(f.name == "loyalty_tier" for f in run.before.sources[shop.sources["customers"]].fields)
    events = run.backend.diffs()
    assert all(e["type"] == "esc.schema.diff" for e in events)
    adding = [e["data"] for e in events if any(i.get("target") == field_id for i in e["data"]["added"].get("field", []))]
    assert len(adding) == 1, adding
    assert adding[0]["from_version"] == run.before.version
    assert adding[0]["to_version"] == run.before.version + 1
    # versions are a gap-free sequence of diffs from 0 to the latest
    versions = sorted((e["data"]["from_version"], e["data"]["to_version"]) for e in events)
    assert versions == [(v, v + 1) for v in range(run.after.version)]


def test_questions_get_the_values_in_the_files_with_citations(run: Run) -> None:
    shop = run.backend.shop
    agent = QueryAgent(run.after, run.backend.graph())
    customers = shop.customers()
    ada = next(c for c in customers if c["first_name"] == "Ada")
    products = shop.products()
    keyboard = next(p for p in products if p["name"] == "Mechanical Keyboard")
    review = next(r for p in products for r in p["reviews"] if r["review_id"] == "R4")
    ada_orders = [o for o in shop.orders() if str(o["customer_id"]) == ada["customer_id"]]
    name = f"{ada['first_name']} {ada['last_name']}"
    cases = [
        (f"What is the email address of the customer {name}?", ada["email"], shop.sources["customers"]),
        (f"What is the loyalty tier of the customer {name}?", ada["loyalty_tier"], shop.sources["customers"]),
        (f"How many orders did the customer {name} place?", len(ada_orders), shop.sources["orders"]),
        ("What is the price of the Mechanical Keyboard?", keyboard["price"], shop.sources["products"]),
        ("What is the rating of review R4?", review["rating"], shop.sources["reviews"]),
    ]
    for question, expected, cited_source in cases:
        answer = agent.ask(question)
        assert answer.route != "abstain", (question, answer.reason)
        assert answer.answer == expected or str(answer.answer) == str(expected), (question, answer.answer, expected)
        assert cited_source in {c.source for c in answer.citations}, (question, answer.citations)
