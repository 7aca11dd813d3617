"""Each service of the stack does real work: Kafka produce/consume with a committed group offset, Neo4j MERGE,
Weaviate near-vector search, Prometheus scraping a target registered through file_sd. Everything created here
carries a random run id and is deleted afterwards."""

from __future__ import annotations

import asyncio
import ipaddress
import json
import os
import subprocess
import sys
import time
import urllib.parse
import urllib.request
import uuid
from pathlib import Path
from typing import Any

import pytest

from esc.settings import Settings

pytestmark = pytest.mark.integration


def run_id() -> str:
    return uuid.uuid4().hex[:10]


# --- Kafka -------------------------------------------------------------------------------------------------------


async def _kafka_round_trip(bootstrap: str, topic: str, group: str) -> dict[str, Any]:
    from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
    from aiokafka.admin import AIOKafkaAdminClient, NewTopic

    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        await admin.create_topics([NewTopic(name=topic, num_partitions=2, replication_factor=1)])
        producer = AIOKafkaProducer(bootstrap_servers=bootstrap, acks="all", enable_idempotence=True)
        await producer.start()
        try:
            for i in range(10):
                await producer.send_and_wait(topic, value=f"v{i}".encode(), key=f"k{i}".encode())
        finally:
            await producer.stop()

        async def consume(expected: int) -> tuple[list[bytes], dict[TopicPartition, int]]:
            consumer = AIOKafkaConsumer(
                topic,
                bootstrap_servers=bootstrap,
                group_id=group,
                enable_auto_commit=False,
                auto_offset_reset="earliest",
                session_timeout_ms=10000,
                heartbeat_interval_ms=1000,
            )
            await consumer.start()
            seen: list[bytes] = []
            try:
                deadline = time.monotonic() + 30
                while len(seen) < expected and time.monotonic() < deadline:
                    batches = await consumer.getmany(timeout_ms=500)
                    for messages in batches.values():
                        seen.extend(m.value for m in messages if m.value is not None)
                await consumer.commit()
                committed = {tp: await consumer.committed(tp) for tp in consumer.assignment()}
            finally:
                await consumer.stop()
            return seen, committed

        first, committed = await consume(10)
        # Committed offsets are durable group state: a new consumer in the same group resumes after them.
        producer = AIOKafkaProducer(bootstrap_servers=bootstrap)
        await producer.start()
        try:
            await producer.send_and_wait(topic, value=b"after-commit", key=b"k0")
        finally:
            await producer.stop()
        second, _ = await consume(1)
        group_offsets = await admin.list_consumer_group_offsets(group)
        await admin.delete_topics([topic])
        return {"first": first, "committed": committed, "second": second, "group_offsets": group_offsets}
    finally:
        await admin.close()


def test_kafka_produce_consume_and_commit(kafka_bootstrap: str) -> None:
    run = run_id()
    result = asyncio.run(_kafka_round_trip(kafka_bootstrap, f"esc.it.{run}", f"esc-it-{run}"))

    assert sorted(result["first"]) == sorted(f"v{i}".encode() for i in range(10))
    committed = result["committed"]
    assert len(committed) == 2, committed
    assert sum(committed.values()) == 10  # offsets of the next record per partition: 10 records in total
    assert result["second"] == [b"after-commit"]  # nothing re-delivered from before the commit
    group_offsets = {tp.partition: meta.offset for tp, meta in result["group_offsets"].items()}
    assert sum(group_offsets.values()) == 11


# --- Neo4j -------------------------------------------------------------------------------------------------------


def test_neo4j_merge_is_idempotent_and_readable(neo4j_driver: Any) -> None:
    run = run_id()
    merge = (
        "UNWIND $rows AS row "
        "MERGE (p:EscItPerson {run: $run, key: row.key}) SET p.name = row.name "
        "MERGE (c:EscItCity {run: $run, name: row.city}) "
        "MERGE (p)-[:LIVES_IN]->(c)"
    )
    rows = [
        {"key": "1", "name": "Ada", "city": "London"},
        {"key": "2", "name": "Alan", "city": "London"},
        {"key": "3", "name": "Grace", "city": "New York"},
    ]
    try:
        neo4j_driver.execute_query(merge, rows=rows, run=run)
        neo4j_driver.execute_query(merge, rows=rows, run=run)  # re-delivery must not duplicate
        records, _, _ = neo4j_driver.execute_query(
            "MATCH (p:EscItPerson {run: $run})-[:LIVES_IN]->(c:EscItCity {run: $run}) "
            "RETURN c.name AS city, collect(p.name) AS people ORDER BY city",
            run=run,
        )
        assert [(r["city"], sorted(r["people"])) for r in records] == [
            ("London", ["Ada", "Alan"]),
            ("New York", ["Grace"]),
        ]
        counts, _, _ = neo4j_driver.execute_query(
            "MATCH (n) WHERE (n:EscItPerson OR n:EscItCity) AND n.run = $run "
            "OPTIONAL MATCH (n)-[r:LIVES_IN]->() RETURN count(DISTINCT n) AS nodes, count(r) AS rels",
            run=run,
        )
        assert (counts[0]["nodes"], counts[0]["rels"]) == (5, 3)
    finally:
        neo4j_driver.execute_query(
            "MATCH (n) WHERE (n:EscItPerson OR n:EscItCity) AND n.run = $run DETACH DELETE n", run=run
        )
    left, _, _ = neo4j_driver.execute_query(
        "MATCH (n) WHERE (n:EscItPerson OR n:EscItCity) AND n.run = $run RETURN count(n) AS n", run=run
    )
    assert left[0]["n"] == 0


# --- Weaviate ----------------------------------------------------------------------------------------------------


def test_weaviate_insert_and_near_vector(weaviate_client: Any) -> None:
    from weaviate.classes.config import Configure, DataType, Property
    from weaviate.classes.query import MetadataQuery
    from weaviate.util import generate_uuid5

    name = f"EscIt{run_id()}"
    collection = weaviate_client.collections.create(
        name,
        vector_config=Configure.Vectors.self_provided(),
        properties=[
            Property(name="text", data_type=DataType.TEXT),
            Property(name="key", data_type=DataType.TEXT),
        ],
    )
    try:
        docs = {
            "north": [1.0, 0.0, 0.0, 0.0],
            "east": [0.0, 1.0, 0.0, 0.0],
            "up": [0.0, 0.0, 1.0, 0.0],
        }
        for key, vector in docs.items():
            collection.data.insert(
                properties={"text": f"pointing {key}", "key": key},
                vector=vector,
                uuid=generate_uuid5(key, name),
            )
        # Deterministic ids: re-delivering "north" replaces the object instead of adding one.
        collection.data.replace(
            uuid=generate_uuid5("north", name),
            properties={"text": "pointing north again", "key": "north"},
            vector=docs["north"],
        )
        assert collection.aggregate.over_all(total_count=True).total_count == 3

        result = collection.query.near_vector(
            near_vector=[0.9, 0.1, 0.0, 0.0], limit=2, return_metadata=MetadataQuery(distance=True)
        )
        keys = [o.properties["key"] for o in result.objects]
        assert keys == ["north", "east"]
        assert result.objects[0].properties["text"] == "pointing north again"
        distances = [o.metadata.distance for o in result.objects]
        assert distances[0] is not None and distances[1] is not None and distances[0] < distances[1]
    finally:
        weaviate_client.collections.delete(name)
    assert not weaviate_client.collections.exists(name)


# --- Prometheus --------------------------------------------------------------------------------------------------


def _query(prometheus_url: str, promql: str) -> list[dict[str, Any]]:
    url = f"{prometheus_url}/api/v1/query?" + urllib.parse.urlencode({"query": promql})
    with urllib.request.urlopen(url, timeout=5) as response:
        body = json.load(response)
    assert body["status"] == "success", body
    return list(body["data"]["result"])


def test_prometheus_scrapes_a_registered_target(prometheus_url: str, stack_settings: Settings) -> None:
    from prometheus_client import CollectorRegistry, Gauge, start_http_server

    from esc.stack import register_target, unregister_target

    run = run_id()
    registry = CollectorRegistry()
    gauge = Gauge("esc_it_probe", "Integration-test probe value", ["run"], registry=registry)
    gauge.labels(run=run).set(42.5)
    server, thread = start_http_server(0, addr="127.0.0.1", registry=registry)
    port = server.server_port
    target = f"it-{run}"
    register_target(stack_settings, target, f"127.0.0.1:{port}", {"test": "services"})
    try:
        promql = f'esc_it_probe{{run="{run}", job="esc-extra", test="services"}}'
        deadline = time.monotonic() + 30
        result: list[dict[str, Any]] = []
        while time.monotonic() < deadline:
            result = _query(prometheus_url, promql)
            if result:
                break
            time.sleep(0.5)
        assert result, f"Prometheus at {prometheus_url} did not scrape 127.0.0.1:{port} within 30 s"
        assert float(result[0]["value"][1]) == 42.5
        up = _query(prometheus_url, f'up{{job="esc-extra", instance="127.0.0.1:{port}"}}')
        assert [float(r["value"][1]) for r in up] == [1.0]
    finally:
        unregister_target(stack_settings, target)
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def test_dashboard_and_rule_queries_are_valid_promql(prometheus_url: str) -> None:
    """Every Grafana panel query parses and evaluates in the running Prometheus (no data needed)."""
    from esc.stack.services import OPS_DIR

    dashboard = json.loads((OPS_DIR / "grafana" / "dashboards" / "esc.json").read_text())
    exprs = [t["expr"] for p in dashboard["panels"] for t in p["targets"]]
    assert exprs
    for expr in exprs:
        _query(prometheus_url, expr.replace("$__rate_interval", "1m"))
    # The rule files are loaded by the running server.
    with urllib.request.urlopen(f"{prometheus_url}/api/v1/rules", timeout=5) as response:
        groups = json.load(response)["data"]["groups"]
    alerts = {r["name"] for g in groups for r in g["rules"] if r["type"] == "alerting"}
    assert {"EscSchemaDiffBurst", "EscDlqRateHigh", "EscFreshnessP95High", "EscConsumerLagHigh"} <= alerts


# --- the CLI's own view ------------------------------------------------------------------------------------------


def test_stack_status_json_reports_every_service_up(
    kafka_bootstrap: str, neo4j_driver: Any, weaviate_client: Any, prometheus_url: str
) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "esc.cli", "stack", "status", "--json"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    statuses = {s["name"]: s for s in json.loads(out.stdout)}
    assert set(statuses) == {"kafka", "neo4j", "weaviate", "prometheus"}
    # "foreign": answering, but started from another ESC_STATE_DIR (still a working stack).
    assert all(s["state"] in ("up", "foreign") for s in statuses.values()), statuses
    assert out.returncode == 0, out.stderr


def _listening(pid: int) -> list[tuple[str, int]]:
    """(address, port) of every TCP socket in LISTEN state that process ``pid`` holds (from /proc)."""
    inodes = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    out = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            cols = line.split()
            if cols[3] != "0A" or cols[9] not in inodes:  # 0A: TCP_LISTEN
                continue
            hex_addr, hex_port = cols[1].split(":")
            raw = bytes.fromhex(hex_addr)
            packed = b"".join(raw[i : i + 4][::-1] for i in range(0, len(raw), 4))  # little-endian 32-bit words
            addr = ipaddress.ip_address(packed)
            if isinstance(addr, ipaddress.IPv6Address) and addr.ipv4_mapped:
                addr = addr.ipv4_mapped
            out.append((str(addr), int(hex_port, 16)))
    return out


def test_every_server_the_stack_starts_listens_on_loopback_except_weaviates_fixed_ports(
    stack_settings: Settings, kafka_bootstrap: str, neo4j_driver: Any, weaviate_client: Any, prometheus_url: str
) -> None:
    from esc.stack import services

    exposed = {}
    for service in services(stack_settings, say=lambda _: None):
        pid = service.pid()
        if pid is None:
            pytest.fail(f"{service.name} was not started from {stack_settings.state_dir} (no live pid file)")
        exposed[service.name] = {p for a, p in _listening(pid) if not ipaddress.ip_address(a).is_loopback}
    # Weaviate 1.39 binds its gRPC API and its internal cluster API to every interface (":%d" in the source, no
    # host setting): documented in the README; the cluster API needs a per-install secret. Nothing else may
    # (Weaviate's profiling listener on :6060 is turned off).
    assert exposed.pop("weaviate") == {stack_settings.weaviate_grpc_port, stack_settings.weaviate_gossip_port + 1}
    assert exposed == {"kafka": set(), "neo4j": set(), "prometheus": set()}


def test_the_running_neo4j_caps_transaction_memory(neo4j_driver: Any) -> None:
    records, _, _ = neo4j_driver.execute_query(
        "SHOW SETTINGS YIELD name, value WHERE name IN $names RETURN name, value",
        names=["dbms.memory.transaction.total.max", "db.memory.transaction.max"],
    )
    assert {r["name"]: r["value"] for r in records} == {
        "dbms.memory.transaction.total.max": "1.00GiB", "db.memory.transaction.max": "512.00MiB"
    }
