"""Walking skeleton, end to end on the real stack: drop a CSV -> esc.records -> Neo4j + Weaviate -> Prometheus.

Runs ``esc up --data DIR`` as a real subprocess (its own app id, topic prefix and state dir), drops a CSV into
the watched folder, and polls each store until the rows arrive, failing with the worker's log otherwise.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.parse
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from esc.settings import load

pytestmark = pytest.mark.integration

ROWS = [("1", "Ada Lovelace", "ada@example.org"), ("2", "Alan Turing", "alan@example.org"), ("3", "Grace Hopper", "")]


def poll(fn: Callable[[], Any], ok: Callable[[Any], bool], timeout: float, what: str, log: Path) -> Any:
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        try:
            last = fn()
            if ok(last):
                return last
        except Exception as exc:  # the store may not be ready for our label yet
            last = exc
        time.sleep(0.5)
    tail = log.read_text("utf-8", errors="replace")[-4000:] if log.exists() else "(no log)"
    pytest.fail(f"timed out after {timeout}s waiting for {what}; last={last!r}\n--- worker log ---\n{tail}")


@pytest.fixture
def worker(tmp_path: Path) -> Iterator[dict[str, Any]]:
    run = uuid.uuid4().hex[:8]
    data = tmp_path / "drop"
    data.mkdir()
    env = dict(os.environ)
    env.update(
        ESC_APP_ID=f"skel{run}",
        ESC_TOPIC_PREFIX=f"skel{run}",
        ESC_STATE_DIR=str(tmp_path / "state"),
    )
    log = tmp_path / "worker.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "esc.cli", "up", "--data", str(data)],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        yield {"run": run, "data": data, "log": log, "proc": proc, "app_id": f"skel{run}"}
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def test_csv_drop_reaches_neo4j_weaviate_and_prometheus(
    kafka_bootstrap: str, neo4j_driver: Any, weaviate_client: Any, prometheus_url: str, worker: dict[str, Any]
) -> None:
    from agents.stores.neo4j import Neo4jGraphStore
    from agents.stores.weaviate import WeaviateVectorStore, collection_name

    settings = load()
    label = f"People{worker['run']}"
    lines = ["id,name,email"] + [",".join(r) for r in ROWS]
    tmp = worker["data"] / f".{label}.csv.part"
    tmp.write_text("\n".join(lines) + "\n", "utf-8")
    tmp.rename(worker["data"] / f"{label}.csv")  # appears atomically, as a well-behaved producer would do

    graph = Neo4jGraphStore(settings.neo4j_uri)
    vectors = WeaviateVectorStore(settings.weaviate_url, grpc_port=settings.weaviate_grpc_port)
    collection = collection_name(worker["app_id"])
    try:
        poll(lambda: graph.count(label), lambda c: c == len(ROWS), 90, f"{len(ROWS)} :{label} nodes", worker["log"])
        rows = graph.read(
            f"MATCH (n:`{label}`)-[:DERIVED_FROM]->(s:SourceRecord) "
            "RETURN n.name AS name, n.email AS email, s.source AS source, s.location AS location ORDER BY name"
        )
        assert [r["name"] for r in rows] == sorted(r[1] for r in ROWS)
        assert all(r["source"] == label for r in rows)
        assert all(r["location"].startswith(f"{label}.csv:row=") for r in rows)
        assert {r["email"] for r in rows} == {"ada@example.org", "alan@example.org", None}

        poll(lambda: vectors.count(collection), lambda c: c == len(ROWS), 60, "Weaviate objects", worker["log"])
        from agents.embedding import get_embedder

        hits = vectors.near_vector(collection, get_embedder().embed_one("Grace Hopper").tolist(), limit=1)
        assert hits and "Grace Hopper" in hits[0]["text"] and hits[0]["source"] == label

        query = f'sum(esc_records_in_total{{source="{label}"}})'
        url = f"{prometheus_url}/api/v1/query?" + urllib.parse.urlencode({"query": query})

        def prom() -> float:
            with urllib.request.urlopen(url, timeout=5) as resp:
                result = json.load(resp)["data"]["result"]
            return float(result[0]["value"][1]) if result else 0.0

        poll(prom, lambda v: v == len(ROWS), 45, "the records counter in Prometheus", worker["log"])
    finally:
        graph.close()
        neo4j_driver.execute_query(
            f"MATCH (n:`{label}`) OPTIONAL MATCH (n)-[:DERIVED_FROM]->(s:SourceRecord) DETACH DELETE n, s"
        )
        if vectors.count(collection):
            vectors.drop(collection)
        vectors.close()
