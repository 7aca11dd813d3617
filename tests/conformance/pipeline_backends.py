"""The two backends of the pipeline conformance suite (embedded runtime, real Faust worker) and the example shop
they ingest; split from test_pipeline_conformance.py."""

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
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from esc.agents.embedding import HashingEmbedder
from esc.agents.stores.base import GraphStore
from esc.contract.model import Contract
from esc.contract.records import Record
from esc.settings import Settings, load
from esc.streams.events import envelope_for
from esc.streams.readers import read, scan_with_errors
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


