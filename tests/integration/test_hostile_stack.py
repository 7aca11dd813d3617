"""The hostile input corpus on the Kafka runtime (``esc up`` against the real stack): the first ``PER_KIND`` light
cases of every kind in one drop folder, each beside a good file, ingested by one worker.

The embedded runtime runs the whole corpus (``tests/unit/test_hostile_corpus.py``); this is the same corpus
through the other runtime's connector, topics, contract agent and graph writer. What came out is read back from
where a Kafka user would look (the records and DLQ topics, the compacted contracts topic, Neo4j) and held to the
same checks (``tests.hostile.runner.check_group``): the worker stays up, every good file lands whole in the graph,
each case comes to what it expects, every dead letter has a reason, no secret outside the folder was read.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from esc.contract.entities import entity_name
from esc.streams.runtime.inprocess_files import RunSummary
from esc.streams.schema_events import latest_key, parse_contract
from tests.hostile import Case, Env, corpus
from tests.hostile.runner import Outcome, build_drop, check_group, gather, good_rows
from tests.integration.worker import Worker, poll

pytestmark = pytest.mark.integration

PER_KIND = 2


def sample() -> list[Case]:
    seen: defaultdict[str, int] = defaultdict(int)
    out = []
    for case in corpus():
        if not case.heavy and seen[case.kind] < PER_KIND:
            seen[case.kind] += 1
            out.append(case)
    return out


def read_topic(bootstrap: str, topic: str) -> list[tuple[bytes | None, bytes | None]]:
    """Every message of ``topic`` from the start until it has been quiet for 2 s."""
    from aiokafka import AIOKafkaConsumer

    async def run() -> list[tuple[bytes | None, bytes | None]]:
        consumer = AIOKafkaConsumer(topic, bootstrap_servers=bootstrap, group_id=None, auto_offset_reset="earliest")
        await consumer.start()
        out: list[tuple[bytes | None, bytes | None]] = []
        try:
            quiet = time.monotonic()
            while time.monotonic() - quiet < 2.0:
                for msgs in (await consumer.getmany(timeout_ms=500)).values():
                    out += [(m.key, m.value) for m in msgs]
                    quiet = time.monotonic()
        finally:
            await consumer.stop()
        return out

    return asyncio.run(run())


def node_count(driver: Any, label: str) -> int:
    return int(driver.execute_query(f"MATCH (n:`{label}`) RETURN count(n) AS c").records[0]["c"])


def test_hostile_cases_on_the_kafka_runtime(kafka_bootstrap: str, neo4j_driver: Any, tmp_path: Path) -> None:
    cases = sample()
    assert len(cases) >= 30
    worker = Worker(tmp_path)
    build_drop(cases, worker.data, Env(tmp_path / "outside"))
    t0 = time.monotonic()  # the files are in the folder before the worker starts: it scans them at start
    worker.start()
    try:
        goods = {c.id: worker.label(entity_name(f"good_{c.id}")) for c in cases}

        def landed() -> list[str]:
            worker.health()  # fails the test if the worker exited
            return [cid for c in cases if node_count(neo4j_driver, goods[cid := c.id]) != good_rows(c)]

        poll(landed, lambda missing: not missing, 300, "every good file in the graph", worker.log)
        landed_s = time.monotonic() - t0  # all cases at once: each took at most this, start included (printed; speed is not asserted)
        records = read_topic(kafka_bootstrap, worker.topic("records"))
        dead = read_topic(kafka_bootstrap, worker.topic("dlq"))
        contracts = [v for k, v in read_topic(kafka_bootstrap, worker.topic("schema.contracts"))
                     if k == latest_key(worker.app_id) and v is not None]  # fmt: skip
        assert contracts, "no contract on the contracts topic"
        contract = parse_contract(contracts[-1])
        latest: dict[bytes | None, bytes | None] = dict(records)  # a key's last value (a tombstone retracts it)
        # one worker runs every case at once here (the per-group time limit is the embedded test's): seconds 0
        out = Outcome(0.0, summary=RunSummary(), error=None)
        gather(out, [v.decode("utf-8") for v in latest.values() if v is not None],
               [v.decode("utf-8") for _, v in dead if v is not None])  # fmt: skip
        for name, src in contract.sources.items():
            entity = contract.entity_for_source(name)
            nodes = node_count(neo4j_driver, worker.label(entity.name)) if entity is not None else None
            out.sources[name] = {"records": src.records, "fields": len(src.fields), "files": list(src.files),
                                 "nodes": nodes}
        stored = [json.dumps(dict(r["n"])) for r in neo4j_driver.execute_query(
            "MATCH (n) WHERE any(l IN labels(n) WHERE l STARTS WITH $ns) RETURN n", ns=worker.label("")).records]
        out.state_text = "\n".join([*(v.decode("utf-8", "replace") for _, v in [*records, *dead] if v), *stored,
                                    contracts[-1].decode("utf-8")])  # fmt: skip
        assert len(out.records) >= len(cases) // 2 and len(out.dead) >= len(cases) // 4, (
            f"records from {len(out.records)} cases, dead letters from {len(out.dead)}: the topics were not read"
        )
        print(f"{len(cases)} cases: records from {len(out.records)}, dead letters from {len(out.dead)}, "
              f"{len(out.sources)} sources; every good file in the graph {landed_s:.1f} s after the worker was started")
        problems = check_group(cases, out)
        assert not problems, "\n".join(problems)
        worker.health()
    finally:
        worker.stop()
