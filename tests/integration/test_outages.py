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

from esc.contract.entities import entity_name
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
    from esc.agents.stores.weaviate import collection_name

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
        if len(during) > 12:  # near the bound: show what took the room
            print("\n".join(line[:200] for line in during))
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


@pytest.mark.parametrize("service", ["neo4j", "weaviate", "kafka"])
def test_an_outage_during_a_backfill_loses_nothing(
    service: str, kafka_bootstrap: str, neo4j_driver: Any, tmp_path: Path
) -> None:
    """A file rewritten with a new column makes the worker replay the source to give its nodes the attribute; the
    server goes away while that replay runs. After it is back every node has the attribute, none twice, and the
    outage cost at most ~20 log lines. (The replayed rows hold no prose: with Weaviate down the graph backfill
    goes on, and ``/readyz`` still says Weaviate is unreachable, from the worker's probe.)"""
    worker = Worker(tmp_path).start()
    tag = worker.run
    source = f"Purchase{tag}_a"
    label = worker.label(entity_name(source))
    path = worker.data / f"{source}.csv"
    n = 2 * ORDERS  # a replay long enough (several seconds) to be stopped in the middle

    def noted() -> tuple[int, int]:
        rec = neo4j_driver.execute_query(
            f"MATCH (n:`{label}`) RETURN count(n) AS c, count(n.note) AS noted"
        ).records[0]
        return int(rec["c"]), int(rec["noted"])

    try:
        rows = "".join(f"{i},{1 + i % CUSTOMERS},{i * 7 % 1000}.5\n" for i in range(1, n + 1))
        path.write_text("purchase_id,client_id,amount\n" + rows, "utf-8")
        poll(noted, lambda c: c == (n, 0), 180, "the first version", worker.log)
        mark = worker.log.stat().st_size
        tmp = worker.data / f".{source}.part"  # the same rows, now with a note on each: a backfill of all of them
        noted_rows = "".join(f"{i},{1 + i % CUSTOMERS},{i * 7 % 1000}.5,note {i}\n" for i in range(1, n + 1))
        tmp.write_text("purchase_id,client_id,amount,note\n" + noted_rows, "utf-8")
        tmp.rename(path)
        poll(lambda: "backfill for contract" in worker.log.read_bytes()[mark:].decode("utf-8", "replace"),
             lambda seen: seen, 120, "the backfill starting", worker.log)  # fmt: skip
        started = worker.log.stat().st_size
        stack("down", service)
        down_at = time.monotonic()
        at_down = noted() if service != "neo4j" else None
        _status, report = poll(lambda: ready(worker), lambda r: r[0] == 503, OUTAGE_SECONDS, "/readyz 503",
                               worker.log)  # fmt: skip
        assert any(service in reason for reason in report["reasons"]), report
        time.sleep(max(0.0, OUTAGE_SECONDS - (time.monotonic() - down_at)))
        assert worker.health()["ok"]
        stack("up", service)
        back_at = time.monotonic()
        poll(noted, lambda c: c == (n, n), 90, "every node with its note after the outage", worker.log)
        poll(lambda: ready(worker)[0], lambda s: s == 200, 60, "/readyz 200 again", worker.log)
        caught_up = time.monotonic() - back_at
        sources = neo4j_driver.execute_query(
            f"MATCH (s:`{worker.label('SourceRecord')}`) WHERE s.source = $source RETURN count(s) AS c", source=source
        ).records[0]["c"]
        assert sources == n  # one source record per row: the replay wrote nothing twice
        during = worker.log.read_bytes()[started:].decode("utf-8", "replace").splitlines()
        print(f"\n{service} during a backfill: caught up {caught_up:.0f} s after it was back"
              + (f" ({at_down[1]} of {n} nodes had their note when it went down)" if at_down else "")
              + f"; {len(during)} log lines since it went down")
        if len(during) > 12:
            print("\n".join(line[:200] for line in during))
        assert len(during) <= 20, "\n".join(during[:80])
    finally:
        stack("up", service)
        worker.stop()
        neo4j_driver.execute_query(
            f"MATCH (n:`{label}`) OPTIONAL MATCH (n)-[:DERIVED_FROM]->(s) DETACH DELETE n, s"
        )
