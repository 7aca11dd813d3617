"""Issue 4 acceptance on the real stack: a worker (`esc up`) against Kafka, Neo4j and Weaviate.

- the Chinook drop: one node per row per entity type, one relationship per non-null FK value, provenance on every
  entity — counted against truth.json;
- drift: a file rewritten with a new column -> a subscriber on esc.schema.diffs receives the diff with that field,
  the version grows by exactly one, and after backfill the existing nodes carry the new attribute;
- SIGKILL mid-ingest, then restart: the same counts as a clean run (no loss, no duplicates);
- garbage files and invalid pushed records land in esc.dlq with reasons; everything else is ingested.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from esc.contract.entities import entity_name
from tests.integration.truth import drop_pack, expected_counts, graph_counts, pack_truth, wipe_labels
from tests.integration.worker import Worker, poll
from tests.ops_metrics import family, ops_metric_families
from tests.paths import CHINOOK

pytestmark = pytest.mark.integration


@pytest.fixture
def chinook(neo4j_driver: Any, tmp_path: Path) -> Iterator[tuple[dict[str, Any], Worker]]:
    """Chinook's truth and a worker (not started) for it; its graph (the worker's label namespace) is removed after."""
    truth = pack_truth(CHINOOK)
    worker = Worker(tmp_path)
    yield truth, worker
    ns = worker.label("")
    wipe_labels(neo4j_driver, [entity_name(s) for s in truth["sources"]], list(truth["sources"]), ns)


def test_chinook_drop_matches_truth(kafka_bootstrap: str, weaviate_client: Any, neo4j_driver: Any,
                                    chinook: tuple[dict[str, Any], Worker]) -> None:
    from esc.agents.stores.weaviate import collection_name

    truth, worker = chinook
    worker.start()
    ns = worker.label("")
    try:
        drop_pack(CHINOOK, worker.data)
        want = expected_counts(truth)
        got = poll(lambda: graph_counts(neo4j_driver, truth, ns), lambda g: g == want, 300, "Chinook in Neo4j", worker.log)
        assert got == want
        agent = worker.health()["contract_agent"]  # what the contract agent does, and for how long
        assert isinstance(agent["step"], str) and 0 <= agent["seconds"] < 60, agent
        # Every metric the alert rules and dashboards query is on the live worker's /metrics.
        with urllib.request.urlopen(f"http://127.0.0.1:{worker.web_port}/metrics", timeout=10) as resp:
            exported = {family(n) for n in re.findall(r"^# TYPE (\S+) ", resp.read().decode("utf-8"), re.M)}
        assert ops_metric_families() <= exported, sorted(ops_metric_families() - exported)
        assert re.search(rf'^esc_consumer_lag{{topic="{worker.topic("records")}"}} ', urllib.request.urlopen(
            f"http://127.0.0.1:{worker.web_port}/metrics", timeout=10).read().decode("utf-8"), re.M)
        # Text objects: values of text-typed fields that are prose themselves (long or multi-sentence).
        coll = collection_name(worker.app_id)
        objects = poll(
            lambda: weaviate_client.collections.get(coll).aggregate.over_all(total_count=True).total_count,
            lambda n: n is not None and n > 0,
            120,
            "text objects in Weaviate",
            worker.log,
        )
        res = weaviate_client.collections.get(coll).query.fetch_objects(limit=1000)
        assert len(res.objects) == objects
        assert all(o.properties["source"] in truth["sources"] and o.properties["record_id"] for o in res.objects)
    finally:
        worker.stop()
        from weaviate.exceptions import WeaviateBaseError

        try:
            weaviate_client.collections.delete(collection_name(worker.app_id))
        except WeaviateBaseError:
            pass


def test_sigkill_mid_ingest_then_restart_equals_clean_run(
    kafka_bootstrap: str, neo4j_driver: Any, chinook: tuple[dict[str, Any], Worker]
) -> None:
    truth, worker = chinook
    worker.start()
    ns = worker.label("")
    try:
        drop_pack(CHINOOK, worker.data)
        # Kill once part of the data is in the graph: mid-ingest, with records in flight and offsets uncommitted.
        poll(lambda: graph_counts(neo4j_driver, truth, ns)["nodes"]["Album"][0], lambda n: n > 0, 180, "first writes",
             worker.log)
        worker.kill()
        partial = graph_counts(neo4j_driver, truth, ns)
        want = expected_counts(truth)
        assert partial != want, "the worker finished before it was killed: the test did not test a crash"
        worker.start()
        got = poll(lambda: graph_counts(neo4j_driver, truth, ns), lambda g: g == want, 300, "convergence after restart",
                   worker.log)
        assert got == want  # nothing lost, nothing duplicated (counts equal the truth exactly)
    finally:
        worker.stop()


def tail_diffs(bootstrap: str, topic: str, stop_after: float) -> list[dict[str, Any]]:
    """Subscribe to esc.schema.diffs like a user does (a consumer group, from the latest offset)."""
    from aiokafka import AIOKafkaConsumer
    from cloudevents.core.bindings import kafka

    async def run() -> list[dict[str, Any]]:
        consumer = AIOKafkaConsumer(
            topic, bootstrap_servers=bootstrap, group_id=f"subscriber-{topic}", auto_offset_reset="earliest"
        )
        await consumer.start()
        out: list[dict[str, Any]] = []
        try:
            deadline = time.monotonic() + stop_after
            while time.monotonic() < deadline:
                batch = await consumer.getmany(timeout_ms=500)
                for msgs in batch.values():
                    for m in msgs:  # the CloudEvents Kafka binding, structured mode, read with the SDK
                        headers = dict(m.headers)
                        assert headers.get("content-type") == b"application/cloudevents+json", m.headers
                        ev = kafka.from_structured_event(kafka.KafkaMessage(headers=headers, key=m.key, value=m.value))
                        out.append({**ev.get_attributes(), "data": ev.get_data()})
                await consumer.commit()
        finally:
            await consumer.stop()
        return out

    return asyncio.run(run())


def test_new_column_emits_one_diff_and_backfills_existing_nodes(
    kafka_bootstrap: str, neo4j_driver: Any, tmp_path: Path
) -> None:
    worker = Worker(tmp_path).start()
    source = f"Gadget{worker.run}"
    label = worker.label(entity_name(source))
    path = worker.data / f"{source}.csv"
    try:
        rows = [(i, f"gadget {i}") for i in range(1, 31)]
        path.write_text("id,name\n" + "".join(f"{i},{n}\n" for i, n in rows), "utf-8")
        poll(lambda: neo4j_driver.execute_query(f"MATCH (n:`{label}`) RETURN count(n) AS c").records[0]["c"],
             lambda c: c == len(rows), 120, "the first version of the source", worker.log)
        before = tail_diffs(kafka_bootstrap, worker.topic("schema.diffs"), 2.0)  # drain what is there
        v_before = max(e["data"]["to_version"] for e in before)
        # The same file, now with a `colour` column that most (not all) existing rows carry, plus new rows.
        colours = {i: ("red" if i % 3 else None) for i in range(1, 36)}
        body = "".join(f"{i},gadget {i},{colours[i] or ''}\n" for i in range(1, 36))
        tmp = worker.data / f".{source}.part"
        tmp.write_text("id,name,colour\n" + body, "utf-8")
        tmp.rename(path)

        def colour_rows() -> dict[int, Any]:
            recs = neo4j_driver.execute_query(f"MATCH (n:`{label}`) RETURN n.id AS id, n.colour AS colour").records
            return {r["id"]: r["colour"] for r in recs}

        got = poll(colour_rows, lambda m: m == colours, 120, "backfilled colour attributes", worker.log)
        assert got == colours  # existing nodes carry the new attribute where the data has it; no duplicates
        after = tail_diffs(kafka_bootstrap, worker.topic("schema.diffs"), 3.0)
        assert after, "no schema-diff event reached the subscriber"
        event = after[-1]
        assert event["specversion"] == "1.0" and event["type"] == "esc.schema.diff"
        assert event["partitionkey"] == worker.app_id and event["source"] == "esc/contract-agent"
        contracts = tail_diffs(kafka_bootstrap, worker.topic("schema.contracts"), 3.0)  # the same binding
        assert {c["type"] for c in contracts} == {"esc.schema.contract"}
        assert {c["subject"] for c in contracts if c["partitionkey"] == worker.app_id} >= {f"{worker.app_id}@v{v_before + 1}"}
        assert contracts[-1]["data"]["contract_id"] == worker.app_id
        assert event["data"]["from_version"] == v_before and event["data"]["to_version"] == v_before + 1
        assert len(after) == 1  # the version grew by exactly one
        fields = [i["target"] for i in event["data"]["added"].get("field", [])]
        assert f"{source}.colour" in fields
        # The same, asked with `esc schema` as a user types it.
        v = v_before + 1
        plain = esc_schema(worker.env)
        assert plain.returncode == 0, plain.stderr
        assert f" v{v}: 1 sources, 0 foreign keys, 1 entity types" in plain.stdout
        # 35, not 30 + 35: the new version of the file replaced the old one in the profile
        assert re.search(rf"^  {source} \[csv\] 35 records, 3 fields, key: id$", plain.stdout, re.M), plain.stdout
        latest = json.loads(esc_schema(worker.env, "--json").stdout)
        assert latest["version"] == v and "colour" in [f["name"] for f in latest["sources"][source]["fields"]]
        older = json.loads(esc_schema(worker.env, "--version", str(v_before), "--json").stdout)
        assert older["version"] == v_before and "colour" not in [f["name"] for f in older["sources"][source]["fields"]]
        diffed = json.loads(esc_schema(worker.env, "--diff", str(v_before), str(v), "--json").stdout)
        assert diffed["from_version"] == v_before and diffed["to_version"] == v
        assert f"{source}.colour" in [i["target"] for i in diffed["added"]["field"]]
        assert f"{source}:" in esc_schema(worker.env, "--yaml").stdout
        missing = esc_schema(worker.env, "--version", "99999")
        assert missing.returncode == 1 and "version 99999" in missing.stderr
    finally:
        worker.stop()
        neo4j_driver.execute_query(
            f"MATCH (n:`{label}`) OPTIONAL MATCH (n)-[:DERIVED_FROM]->(s) DETACH DELETE n, s"
        )


def esc_schema(env: dict[str, str], *args: str) -> Any:
    import subprocess
    import sys

    return subprocess.run([sys.executable, "-m", "esc.cli", "schema", *args], env=env, capture_output=True,
                          text=True, timeout=120)


def read_dlq(bootstrap: str, topic: str, want: int, timeout: float) -> list[dict[str, Any]]:
    from aiokafka import AIOKafkaConsumer

    async def run() -> list[dict[str, Any]]:
        consumer = AIOKafkaConsumer(topic, bootstrap_servers=bootstrap, group_id=None, auto_offset_reset="earliest")
        await consumer.start()
        out: list[dict[str, Any]] = []
        try:
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline and len(out) < want:
                for msgs in (await consumer.getmany(timeout_ms=500)).values():
                    out.extend(json.loads(m.value) for m in msgs)
        finally:
            await consumer.stop()
        return out

    return asyncio.run(run())


def test_garbage_and_invalid_records_go_to_dlq_and_the_rest_is_ingested(
    kafka_bootstrap: str, neo4j_driver: Any, tmp_path: Path
) -> None:
    import subprocess
    import sys

    worker = Worker(tmp_path).start()
    good = f"Widget{worker.run}"
    pushed = f"Pushed{worker.run}"
    labels = [worker.label(entity_name(s)) for s in (good, pushed, f"Broken{worker.run}")]
    try:
        (worker.data / "junk.bin").write_bytes(b"\x00\x01\xff\xfe" * 1000)
        (worker.data / f"Broken{worker.run}.jsonl").write_text('{"id": 1}\n{not json}\n{"id": 2}\n', "utf-8")
        (worker.data / f"{good}.csv").write_text("id,name\n1,a\n2,b\n3,c\n", "utf-8")
        lines = tmp_path / "push.jsonl"
        big = json.dumps({"id": 12, "v": "z" * (5 << 20)})  # 5 MB: over the record limit (and the producer's)
        lines.write_text('{"id": 10, "v": "x"}\n[1, 2]\nnot json\n{"id": 11, "v": "y"}\n' + big + "\n", "utf-8")
        out = subprocess.run(
            [sys.executable, "-m", "esc.cli", "push", pushed, str(lines), "--id-field", "id", "--json"],
            env=worker.env, capture_output=True, text=True, timeout=60, check=True,
        )
        assert json.loads(out.stdout) == {  # [1, 2] is two non-objects
            "source": pushed, "sent": 2, "dead_letters": 4, "accepted": 2, "rejected": 4, "deleted": 0,
            "reasons": {"invalid record": 2, "invalid json": 1, "record too large": 1},
        }
        poll(lambda: neo4j_driver.execute_query(f"MATCH (n:`{labels[0]}`) RETURN count(n) AS c").records[0]["c"],
             lambda c: c == 3, 120, "the good file", worker.log)
        # Pushed sources settle after a quiet period (no file tells the agent they are complete).
        poll(lambda: neo4j_driver.execute_query(f"MATCH (n:`{labels[1]}`) RETURN count(n) AS c").records[0]["c"],
             lambda c: c == 2, 120, "the pushed records", worker.log)
        dead = read_dlq(kafka_bootstrap, worker.topic("dlq"), 6, 30)
        reasons = sorted(d["reason"].split(":")[0] for d in dead)
        assert "invalid json" in reasons and "invalid record" in reasons and "record too large" in reasons
        assert any((d.get("location") or "").startswith(f"Broken{worker.run}.jsonl") for d in dead)
        assert any("junk.bin" in (d.get("location") or "") for d in dead)
        assert all(d["original"] for d in dead if d["stage"] in ("push", "reader"))
        assert worker.health()["ok"]  # the service kept running

        def pushed_dead() -> dict[str, float]:  # what esc push rejected is counted by the worker, by reason
            with urllib.request.urlopen(f"http://127.0.0.1:{worker.web_port}/metrics", timeout=10) as resp:
                body = resp.read().decode()
            found = re.findall(r'^esc_dlq_total\{reason="([^"]+)",stage="push"\} (\S+)$', body, re.M)
            return {reason: float(n) for reason, n in found}

        poll(pushed_dead, lambda m: m == {"invalid record": 2.0, "invalid json": 1.0, "record too large": 1.0}, 60,
             "the pushed dead letters counted on /metrics", worker.log)
        # A tombstone retracts a pushed record (esc push --delete ID, as a user types it).
        gone = subprocess.run([sys.executable, "-m", "esc.cli", "push", pushed, "--delete", "11", "--json"],
                              env=worker.env, capture_output=True, text=True, timeout=60, check=True)  # fmt: skip
        assert json.loads(gone.stdout)["deleted"] == 1
        poll(lambda: neo4j_driver.execute_query(f"MATCH (n:`{labels[1]}`) RETURN collect(n.id) AS ids").records[0]["ids"],
             lambda ids: ids == [10], 60, "the deleted pushed record retracted", worker.log)
    finally:
        worker.stop()
        for label in labels:
            neo4j_driver.execute_query(
                f"MATCH (n:`{label}`) OPTIONAL MATCH (n)-[:DERIVED_FROM]->(s) DETACH DELETE n, s"
            )
