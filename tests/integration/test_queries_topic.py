"""Issue 5 on the real stack through a worker: a question on esc.queries is answered on esc.answers with the same
id (and over HTTP POST /v1/ask), with a citation that resolves to a real source record."""

from __future__ import annotations

import asyncio
import json
import string
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from esc.contract.entities import entity_name
from tests.integration.worker import Worker, poll

pytestmark = pytest.mark.integration

BANDS = [(1, "Velvet Orchid", "Norway"), (2, "Copper Lantern", "Chile"), (3, "Quiet Harbour", "Japan")]
ALBUMS = [(10, "Neon Tides", 1), (11, "Paper Moons", 1), (12, "Salt Roads", 2), (13, "Low Tide", 1)]


def letters_tag(run: str) -> str:
    """Type names made only of letters (the planner reads type names as words)."""
    return "".join(string.ascii_lowercase[int(c, 16) % 26] for c in run)


def ask_on_topic(bootstrap: str, prefix: str, request: dict[str, Any], timeout: float) -> dict[str, Any]:
    from aiokafka import AIOKafkaConsumer, AIOKafkaProducer

    async def run() -> dict[str, Any]:
        consumer = AIOKafkaConsumer(f"{prefix}.answers", bootstrap_servers=bootstrap, group_id=None,
                                    auto_offset_reset="earliest")
        producer = AIOKafkaProducer(bootstrap_servers=bootstrap)
        await consumer.start()
        await producer.start()
        try:
            await producer.send_and_wait(f"{prefix}.queries", json.dumps(request).encode(), key=request["id"].encode())
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline:
                for msgs in (await consumer.getmany(timeout_ms=500)).values():
                    for m in msgs:
                        answer = json.loads(m.value)
                        if answer.get("id") == request["id"]:
                            return dict(answer)
        finally:
            await producer.stop()
            await consumer.stop()
        pytest.fail(f"no answer with id {request['id']} on {prefix}.answers within {timeout}s")

    return asyncio.run(run())


def test_questions_on_the_topic_and_over_http_are_answered_with_citations(
    kafka_bootstrap: str, neo4j_driver: Any, tmp_path: Path
) -> None:
    worker = Worker(tmp_path)
    token = f"tok-{worker.run}"
    worker.env["ESC_API_TOKEN"] = token  # the HTTP API's data endpoints then need it (streams/runtime/http_auth.py)
    worker.start()  # /healthz stays open: start() polls it without a token
    tag = letters_tag(worker.run)
    band, album = f"Band{tag}", f"Album{tag}"
    labels = [worker.label(entity_name(band)), worker.label(entity_name(album))]
    try:
        (worker.data / f"{band}.csv").write_text(
            "BandId,Name,Country\n" + "".join(f"{i},{n},{c}\n" for i, n, c in BANDS), "utf-8"
        )
        (worker.data / f"{album}.csv").write_text(
            "AlbumId,Title,BandId\n" + "".join(f"{i},{t},{b}\n" for i, t, b in ALBUMS), "utf-8"
        )

        def linked() -> int:
            q = f"MATCH (:`{labels[1]}`)-[r]->(:`{labels[0]}`) WHERE type(r) <> 'DERIVED_FROM' RETURN count(r) AS c"
            return int(neo4j_driver.execute_query(q).records[0]["c"])

        def bands() -> int:  # written from their own rows: an album written first links to a stub of its band
            q = f"MATCH (b:`{labels[0]}`) WHERE b._stub IS NULL RETURN count(b) AS c"
            return int(neo4j_driver.execute_query(q).records[0]["c"])

        poll(linked, lambda c: c == len(ALBUMS), 120, "albums linked to bands", worker.log)
        poll(bands, lambda c: c == len(BANDS), 120, "every band written from its own row", worker.log)

        answer = ask_on_topic(kafka_bootstrap, worker.app_id,
                              {"id": "q-1", "question": "In which country is Velvet Orchid?"}, 60)
        assert answer["id"] == "q-1" and answer["answer"] == "Norway" and answer["route"] != "abstain", json.dumps(answer)[:3000]
        assert answer["contract_version"] >= 1
        cite = answer["citations"][0]
        found = neo4j_driver.execute_query(
            f"MATCH (s:`{worker.label('SourceRecord')}` {{source: $source, record_id: $rid}}) RETURN count(s) AS c",
            source=cite["source"], rid=cite["record_id"],
        ).records[0]["c"]
        assert found == 1  # the citation resolves to a real source record

        def post(headers: dict[str, str]) -> urllib.request.Request:
            return urllib.request.Request(
                f"http://127.0.0.1:{worker.web_port}/v1/ask",
                data=json.dumps({"id": "h-1", "question": "How many albums does Velvet Orchid have?"}).encode(),
                headers={"Content-Type": "application/json", **headers},
                method="POST",
            )

        for wrong in ({}, {"Authorization": "Bearer nope"}, {"Authorization": token}):
            with pytest.raises(urllib.error.HTTPError) as denied:
                urllib.request.urlopen(post(wrong), timeout=60)
            assert denied.value.code == 401 and denied.value.headers["WWW-Authenticate"].startswith("Bearer")
        auth = {"Authorization": f"Bearer {token}"}
        with urllib.request.urlopen(post(auth), timeout=60) as resp:
            http_answer = json.load(resp)
        assert http_answer["id"] == "h-1" and http_answer["answer"] == 3 and http_answer["citations"]
        with pytest.raises(urllib.error.HTTPError) as denied:
            urllib.request.urlopen(f"http://127.0.0.1:{worker.web_port}/v1/schema", timeout=30)
        assert denied.value.code == 401
        schema = urllib.request.Request(f"http://127.0.0.1:{worker.web_port}/v1/schema", headers=auth)
        with urllib.request.urlopen(schema, timeout=30) as resp:
            card = json.load(resp)
        assert entity_name(band) in json.dumps(card)  # the contract's names: the namespace is the store's
    finally:
        worker.stop()
        for label in labels:
            neo4j_driver.execute_query(
                f"MATCH (n:`{label}`) OPTIONAL MATCH (n)-[:DERIVED_FROM]->(s) DETACH DELETE n, s"
            )
