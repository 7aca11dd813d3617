"""Outages on the real stack: Kafka, Neo4j or Weaviate stopped for 30 s while a worker ingests. The worker never
exits, ``/readyz`` says not ready (naming the service) while it is down, everything is current soon after it is
back, nothing is lost or written twice, and the outage costs at most ~20 log lines."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from contract.entities import entity_name
from tests.integration.worker import Worker, poll

pytestmark = pytest.mark.integration

OUTAGE_SECONDS = 30
CUSTOMERS = 300
ORDERS = 20_000
BIO = "{} has been a customer since the spring. They prefer long letters to short calls, and they write often."


def stack(action: str, service: str) -> None:
    """``esc stack down|up --only SERVICE`` on the test session's stack (its ESC_STATE_DIR, not the worker's)."""
    subprocess.run([sys.executable, "-m", "esc.cli", "stack", action, "--only", service], check=True,
                   capture_output=True, timeout=300)  # fmt: skip


def ready(worker: Worker) -> tuple[int, dict[str, Any]]:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{worker.web_port}/readyz", timeout=5) as resp:
            return int(resp.status), dict(json.load(resp))
    except urllib.error.HTTPError as exc:
        return int(exc.code), dict(json.loads(exc.read()))


def write_files(data: Path, tag: str, part: str) -> None:
    customers = "".join(f'{i},Customer {i},"{BIO.format(f"Customer {i}")}"\n' for i in range(1, CUSTOMERS + 1))
    (data / f"Client{tag}.csv").write_text("client_id,name,bio\n" + customers, "utf-8")
    half = ORDERS // 2
    lo, hi = (1, half) if part == "a" else (half + 1, ORDERS)
    rows = "".join(f"{i},{1 + i % CUSTOMERS},{i * 7 % 1000}.5\n" for i in range(lo, hi + 1))
    (data / f"Purchase{tag}_{part}.csv").write_text("purchase_id,client_id,amount\n" + rows, "utf-8")


@pytest.mark.parametrize("service", ["neo4j", "weaviate", "kafka"])
def test_an_outage_during_ingest_loses_nothing(
    service: str, kafka_bootstrap: str, neo4j_driver: Any, weaviate_client: Any, tmp_path: Path
) -> None:
    from agents.stores.weaviate import collection_name

    worker = Worker(tmp_path).start()
    tag = worker.run
    labels = [worker.label(entity_name(s)) for s in (f"Client{tag}", f"Purchase{tag}_a", f"Purchase{tag}_b")]
    client = labels[0]
    collection = collection_name(worker.app_id)

    def count(label: str) -> int:
        return int(neo4j_driver.execute_query(f"MATCH (n:`{label}`) RETURN count(n) AS c").records[0]["c"])

    try:
        write_files(worker.data, tag, "a")
        poll(lambda: count(client), lambda c: c > 0, 120, "the first nodes", worker.log)
        started = worker.log.stat().st_size
        stack("down", service)
        down_at = time.monotonic()
        write_files(worker.data, tag, "b")  # more work arrives during the outage
        _status, report = poll(lambda: ready(worker), lambda r: r[0] == 503, OUTAGE_SECONDS, "/readyz 503",
                              worker.log)  # fmt: skip
        assert any(service in reason for reason in report["reasons"]), report
        time.sleep(max(0.0, OUTAGE_SECONDS - (time.monotonic() - down_at)))
        assert worker.health()["ok"]  # alive all along (health() fails the test if the process exited)
        stack("up", service)
        back_at = time.monotonic()
        total = {client: CUSTOMERS, labels[1]: ORDERS // 2, labels[2]: ORDERS // 2}
        poll(lambda: {label: count(label) for label in labels}, lambda c: c == total, 90,
             "every node after the outage", worker.log)  # fmt: skip
        poll(lambda: weaviate_client.collections.get(collection).aggregate.over_all(total_count=True).total_count,
             lambda n: n == CUSTOMERS, 90, "every vector after the outage", worker.log)  # fmt: skip
        poll(lambda: ready(worker)[0], lambda s: s == 200, 60, "/readyz 200 again", worker.log)
        caught_up = time.monotonic() - back_at
        # nothing written twice: one SourceRecord per row, one DERIVED_FROM per node, every purchase linked
        rows = neo4j_driver.execute_query(
            f"MATCH (s:`{worker.label('SourceRecord')}`) WHERE s.source IN $sources RETURN count(s) AS c",
            sources=[f"Client{tag}", f"Purchase{tag}_a", f"Purchase{tag}_b"],
        ).records[0]["c"]
        assert rows == CUSTOMERS + ORDERS
        linked = neo4j_driver.execute_query(
            f"MATCH (p)-[r]->(:`{client}`) WHERE (p:`{labels[1]}` OR p:`{labels[2]}`) AND type(r) <> 'DERIVED_FROM' "
            "RETURN count(r) AS c"
        ).records[0]["c"]
        assert linked == ORDERS
        during = worker.log.read_bytes()[started:].decode("utf-8", "replace").splitlines()
        print(f"\n{service}: caught up {caught_up:.0f} s after it was back; {len(during)} log lines since it went down")
        assert len(during) <= 20, "\n".join(during[:80])
    finally:
        stack("up", service)  # never leave the stack broken for the next test
        worker.stop()
        for label in labels:
            neo4j_driver.execute_query(
                f"MATCH (n:`{label}`) OPTIONAL MATCH (n)-[:DERIVED_FROM]->(s) DETACH DELETE n, s"
            )
        if weaviate_client.collections.exists(collection):
            weaviate_client.collections.delete(collection)
