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

import asyncio
import csv
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from esc.agents.coerce import coerce
from esc.agents.embedding import HashingEmbedder
from esc.agents.query.agent import QueryAgent
from esc.agents.stores.base import GraphStore
from esc.contract.model import Contract
from esc.contract.records import Record
from esc.settings import Settings, load
from esc.streams.events import envelope_for
from esc.streams.readers import read, scan_with_errors
from tests.conformance.helpers import lookup
from tests.integration.conftest import require

EXAMPLES = Path(__file__).resolve().parents[2] / "esc" / "examples"
STACK_TIMEOUT_S = 240.0
BACKENDS = ["embedded", pytest.param("stack", marks=pytest.mark.integration)]


# ----------------------------------------------------------------------------------------------- the data


@dataclass
class Shop:
    """The example shop under unique source names (``customers_<tag>`` ...), and what its files hold."""

    root: Path
    tag: str
    sources: dict[str, str] = field(default_factory=dict)  # logical name -> source name

    @classmethod
    def create(cls, root: Path) -> Shop:
        shop = cls(root, uuid.uuid4().hex[:10])
        root.mkdir(parents=True, exist_ok=True)
        for f in sorted((EXAMPLES / "shop").iterdir()):
            stem, dot, ext = f.name.partition(".")
            shop.sources[stem] = f"{stem}_{shop.tag}"
            shutil.copy(f, root / f"{stem}_{shop.tag}{dot}{ext}")
        shop.sources["reviews"] = f"{shop.sources['products']}.reviews"
        return shop

    def file(self, logical: str) -> Path:
        return next(self.root.glob(f"{self.sources[logical]}.*"))

    def drift(self) -> None:
        shutil.copy(EXAMPLES / "drift" / "customers.csv", self.file("customers"))

    def records(self) -> dict[str, list[Record]]:
        """Every record the readers produce, by source (what the connector emits)."""
        out: dict[str, list[Record]] = {}
        files, _ = scan_with_errors(self.root)
        for sf in files:
            for item in read(sf):
                if isinstance(item, Record):
                    out.setdefault(item.source, []).append(item)
        return out

    def customers(self) -> list[dict[str, str]]:
        with self.file("customers").open(encoding="utf-8", newline="") as fh:
            return list(csv.DictReader(fh, delimiter=";"))

    def orders(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.file("orders").read_text("utf-8").splitlines() if line.strip()]

    def products(self) -> list[dict[str, Any]]:
        data: list[dict[str, Any]] = json.loads(self.file("products").read_text("utf-8"))
        return data


def record_ref(record: Record, shop: Shop) -> tuple[str, str, str]:
    rel = next(shop.root.glob(f"{record.source.split('.')[0]}.*")).name
    env = envelope_for(record, rel, "conformance")
    return (env.source, env.resolved_id(), record.location.render())


# ------------------------------------------------------------------------------------------------ backends


class Backend:
    """What a test needs from a runtime: feed the folder, wait until it is current, read the results."""

    name: str
    shop: Shop

    def until(self, what: str, ok: Callable[[Contract | None], bool]) -> Contract:
        raise NotImplementedError

    def contract(self) -> Contract | None:
        raise NotImplementedError

    def diffs(self) -> list[dict[str, Any]]:
        raise NotImplementedError

    def graph(self) -> GraphStore:
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError


class EmbeddedBackend(Backend):
    name = "embedded"

    def __init__(self, root: Path) -> None:
        self.shop = Shop.create(root / "data")
        self.settings = load().replace(state_dir=root / "state", app_id=f"c{self.shop.tag}")
        self._graph: GraphStore | None = None

    def until(self, what: str, ok: Callable[[Contract | None], bool]) -> Contract:
        """One-shot ingest (``esc ingest --embedded``): when it returns, the result must already hold."""
        from esc.streams.runtime.inprocess import ingest_embedded

        self._close_graph()
        ingest_embedded(self.settings, self.shop.root, embedder=HashingEmbedder())
        contract = self.contract()
        assert contract is not None and ok(contract), f"embedded: after ingest, not {what}"
        return contract

    def contract(self) -> Contract | None:
        from esc.streams.runtime.inprocess import load_contract

        return load_contract(self.settings.state_dir)

    def diffs(self) -> list[dict[str, Any]]:
        from esc.streams.runtime.inprocess import load_diffs

        return load_diffs(self.settings.state_dir)

    def graph(self) -> GraphStore:
        if self._graph is None:
            from esc.agents.stores.embedded import open_embedded

            graph, vectors = open_embedded(self.settings.state_dir)
            vectors.close()
            self._graph = graph
        return self._graph

    def _close_graph(self) -> None:
        if self._graph is not None:
            self._graph.close()
            self._graph = None

    def close(self) -> None:
        self._close_graph()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class StackBackend(Backend):
    """A Faust worker subprocess watching the shop folder, on the shared Kafka / Neo4j / Weaviate."""

    name = "stack"

    def __init__(self, root: Path, settings: Settings) -> None:
        self.shop = Shop.create(root / "data")
        app = f"c{self.shop.tag}"
        self.settings = settings.replace(
            app_id=app, topic_prefix=app, state_dir=root / "state", web_port=_free_port(),
            kafka_bootstrap_env=settings.kafka_bootstrap,
        )  # fmt: skip
        env = dict(os.environ)
        env.update(
            ESC_APP_ID=app, ESC_TOPIC_PREFIX=app, ESC_STATE_DIR=str(root / "state"),
            ESC_WEB_PORT=str(self.settings.web_port), ESC_KAFKA_BOOTSTRAP=settings.kafka_bootstrap,
            ESC_EMBEDDER="hashing",
        )  # fmt: skip
        self.log = root / "worker.log"
        with self.log.open("ab") as out:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "esc.cli", "up", "--data", str(self.shop.root)],
                env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
            )  # fmt: skip
        self._graph: GraphStore | None = None
        self._labels: set[str] = set()

    def _tail(self) -> str:
        return self.log.read_text("utf-8", errors="replace")[-4000:] if self.log.exists() else "(no log)"

    def until(self, what: str, ok: Callable[[Contract | None], bool]) -> Contract:
        deadline = time.monotonic() + STACK_TIMEOUT_S
        last: Any = None
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                pytest.fail(f"the stack worker exited with {self.proc.returncode}\n{self._tail()}")
            try:
                contract = self.contract()
                if contract is not None:
                    self._labels |= {e.name for e in contract.entities}
                    if ok(contract):
                        return contract
                last = contract.version if contract else None
            except Exception as exc:  # topics or labels may not exist yet
                last = exc
            time.sleep(1.0)
        pytest.fail(f"stack: timed out after {STACK_TIMEOUT_S}s waiting until {what}; last={last!r}\n{self._tail()}")

    def _read(self, topic: str, key: bytes | None = None) -> list[bytes]:
        from esc.streams.runtime.kafka_io import read_topic

        async def fetch() -> list[bytes]:
            out = []
            async for msg in read_topic(self.settings, topic, key_filter=(lambda k: k == key) if key else None):
                if msg.value is not None:
                    out.append(msg.value)
            return out

        return asyncio.run(asyncio.wait_for(fetch(), 30))

    def contract(self) -> Contract | None:
        from esc.streams.schema_events import latest_key, parse_contract

        values = self._read(self.settings.topic("schema.contracts"), latest_key(self.settings.app_id))
        return parse_contract(values[-1]) if values else None

    def diffs(self) -> list[dict[str, Any]]:
        return [json.loads(v) for v in self._read(self.settings.topic("schema.diffs"))]

    def graph(self) -> GraphStore:
        if self._graph is None:
            from esc.agents.stores.neo4j import Neo4jGraphStore, label_namespace

            self._graph = Neo4jGraphStore(self.settings.neo4j_uri, namespace=label_namespace(self.settings.app_id))
        return self._graph

    def close(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        if self._graph is not None:
            self._graph.close()
        self._cleanup()

    def _cleanup(self) -> None:
        """Remove everything this run wrote to the shared stack (labels, source records, constraints, vectors,
        topics)."""
        from neo4j import GraphDatabase

        from esc.agents.stores.cypher import ident
        from esc.agents.stores.neo4j import label_namespace

        ns = label_namespace(self.settings.app_id)  # the worker's graph
        stored = {ns + label for label in self._labels}
        with GraphDatabase.driver(self.settings.neo4j_uri, auth=None) as driver:
            for label in stored:
                driver.execute_query(f"MATCH (n:{ident(label)}) DETACH DELETE n")
            for source in self.shop.sources.values():
                driver.execute_query(
                    f"MATCH (s:{ident(ns + 'SourceRecord')}) WHERE s.sid STARTS WITH $p DETACH DELETE s", p=source + "\x1f"
                )
            constraints, _, _ = driver.execute_query("SHOW CONSTRAINTS YIELD name, labelsOrTypes RETURN *")
            for c in constraints:
                if any(label in stored or (label == ns + "SourceRecord" and ns) for label in c["labelsOrTypes"] or []):
                    driver.execute_query(f"DROP CONSTRAINT {ident(c['name'])} IF EXISTS")
        try:
            from esc.agents.stores.weaviate import WeaviateVectorStore, collection_name

            store = WeaviateVectorStore(self.settings.weaviate_url, grpc_port=self.settings.weaviate_grpc_port)
            try:
                name = collection_name(self.settings.app_id)
                if store._client.collections.exists(name):
                    store.drop(name)
            finally:
                store.close()
        finally:
            self._delete_topics()

    def _delete_topics(self) -> None:
        from aiokafka.admin import AIOKafkaAdminClient

        async def delete() -> None:
            admin = AIOKafkaAdminClient(bootstrap_servers=self.settings.kafka_bootstrap)
            await admin.start()
            try:
                mine = [t for t in await admin.list_topics() if t.startswith(self.settings.topic_prefix + ".")
                        or t.startswith(self.settings.app_id + "-")]  # fmt: skip
                if mine:
                    await admin.delete_topics(mine)
            finally:
                await admin.close()

        asyncio.run(delete())


def _require_stack(settings: Settings) -> None:
    from esc.stack.kafka import describe_cluster
    from esc.stack.neo4j import bolt_ping
    from esc.stack.process import http_ok

    require(settings, "kafka", settings.kafka_bootstrap, lambda: describe_cluster(settings.kafka_bootstrap, timeout_s=5.0))
    require(settings, "neo4j", settings.neo4j_uri, lambda: bolt_ping(settings.neo4j_uri, timeout_s=5.0))
    require(settings, "weaviate", settings.weaviate_url, lambda: http_ok(f"{settings.weaviate_url}/v1/.well-known/ready"))


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
