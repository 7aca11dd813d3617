"""The in-process runtime end to end on the chinook eval pack: files -> profiler -> contract agent -> embedded
stores, with the same topics on the in-process bus, and state that survives a restart."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from esc.agents import metrics
from esc.agents.embedding import HashingEmbedder
from esc.agents.stores.embedded import open_embedded
from esc.settings import load
from esc.streams import topics
from esc.streams.runtime.inprocess import InProcessBus, RunSummary, collection_for, open_runtime
from tests.paths import CHINOOK


@pytest.fixture
def drop(tmp_path: Path) -> Path:
    if not CHINOOK.exists():
        pytest.fail(f"eval pack missing at {CHINOOK}")
    data = tmp_path / "data"
    shutil.copytree(CHINOOK / "drop", data)
    return data


def test_ingest_once_builds_contract_graph_and_vectors_and_survives_restart(
    drop: Path, tmp_path: Path
) -> None:
    settings = load().replace(state_dir=tmp_path / "state", app_id="chin", topic_prefix="esc")
    truth = json.loads((CHINOOK / "truth.json").read_text("utf-8"))
    bus = InProcessBus("esc")
    runtime, close = open_runtime(settings, drop, embedder=HashingEmbedder(), bus=bus)
    try:
        summary = asyncio.run(runtime.ingest_once())
        contract = runtime.contract
        assert contract is not None
        graph = runtime.ingestor.graph
        labels = {e.source: e.name for e in contract.entities}
        total = sum(spec["rows"] for spec in truth["sources"].values())
        assert summary.files == len(list(drop.iterdir()))
        assert summary.records >= total and summary.dead == 0
        assert summary.deferred == 0
        assert contract is not None and summary.contract_version == contract.version
        # the profiler published on the internal profiles topic, as the Faust worker does
        # (records of CSV files that took the columnar path are logged and profiled per file, not put on the topic)
        assert bus.counts["esc.profiles"] > 0 and summary.columnar_files > 0
        assert bus.counts["esc.records"] + summary.columnar_records == summary.records
        for source, spec in truth["sources"].items():
            assert graph.count(labels[source]) == spec["rows"], source
        # the same topics, names and payloads as the Kafka runtime
        diffs = bus.messages(topics.SCHEMA_DIFFS)
        assert diffs and all(v is not None and json.loads(v)["type"] for _, v in diffs)
        published = dict(bus.messages(topics.SCHEMA_CONTRACTS))  # latest under the id, and one per version
        assert json.loads(published[b"chin"] or b"null")["version"] == contract.version
        assert set(published) == {b"chin"} | {f"chin@v{v}".encode() for v in range(1, contract.version + 1)}
        assert bus.counts["esc.schema.diffs"] == len(diffs)
        state = settings.state_dir / "inprocess"
        assert json.loads((state / "contract.json").read_text("utf-8"))["version"] == contract.version
        vectors = runtime.ingestor.vectors
        assert vectors.count(collection_for("chin")) > 0
        version, counts = contract.version, {s: graph.count(labels[s]) for s in truth["sources"]}
    finally:
        close()

    # restart: nothing is re-read, the contract and the graph are where they were
    runtime, close = open_runtime(settings, drop, embedder=HashingEmbedder(), bus=InProcessBus("esc"))
    try:
        again = asyncio.run(runtime.ingest_once())
        assert again.files == 0 and again.records == 0
        assert runtime.contract is not None and runtime.contract.version == version
        graph = runtime.ingestor.graph
        assert {s: graph.count(labels[s]) for s in truth["sources"]} == counts
    finally:
        close()
    graph, vectors = open_embedded(settings.state_dir)
    try:
        assert graph.count(labels["Artist"]) == counts["Artist"]
    finally:
        graph.close()
        vectors.close()


def test_a_changed_file_updates_the_graph_without_duplicates(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / "people.csv").write_text("id,name,city\n1,Ada,London\n2,Alan,Wilmslow\n", "utf-8")
    settings = load().replace(state_dir=tmp_path / "state", app_id="ppl", topic_prefix="esc")

    def ingest() -> tuple[RunSummary, int, list[dict[str, object]]]:
        runtime, close = open_runtime(settings, data, embedder=HashingEmbedder())
        try:
            summary = asyncio.run(runtime.ingest_once())
            assert runtime.contract is not None
            label = next(e.name for e in runtime.contract.entities if e.source == "people")
            graph = runtime.ingestor.graph
            rows = graph.read(
                "SELECT json_extract_string(props, '/name') AS name, json_extract_string(props, '/city') AS city "
                "FROM entities WHERE label = $l ORDER BY 1",
                {"l": label},
            )
            return summary, graph.count(label), rows
        finally:
            close()

    first, count, _ = ingest()
    assert first.files == 1 and first.dead == 0 and count == 2
    (data / "people.csv").write_text(
        "id,name,city\n1,Ada,Paris\n2,Alan,Wilmslow\n3,Grace,New York\n", "utf-8"
    )
    second, count, rows = ingest()
    assert second.files == 1 and count == 3
    assert {r["name"]: r["city"] for r in rows} == {"Ada": "Paris", "Alan": "Wilmslow", "Grace": "New York"}
    # a record that disappears from the file is retracted (a tombstone on the records topic)
    (data / "people.csv").write_text("id,name,city\n1,Ada,Paris\n2,Alan,Wilmslow\n", "utf-8")
    third, count, rows = ingest()
    assert third.tombstones == 1 and count == 2
    assert [r["name"] for r in rows] == ["Ada", "Alan"]
    # a deleted file retracts everything it produced
    (data / "people.csv").unlink()
    fourth, count, rows = ingest()
    assert fourth.files_deleted == 1 and fourth.tombstones == 2 and count == 0


def test_serve_watches_the_folder_and_serves_metrics(tmp_path: Path) -> None:
    import socket
    import urllib.request

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    data = tmp_path / "data"
    data.mkdir()
    settings = load().replace(state_dir=tmp_path / "state", app_id="srv", topic_prefix="esc")
    runtime, close = open_runtime(settings, data, embedder=HashingEmbedder())

    def get(path: str) -> str:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as resp:
            return str(resp.read().decode("utf-8"))

    def ask(question: str) -> dict[str, Any]:
        body = json.dumps({"id": "q1", "question": question}).encode()
        req = urllib.request.Request(f"http://127.0.0.1:{port}/v1/ask", data=body, method="POST",
                                     headers={"Content-Type": "application/json"})  # fmt: skip
        with urllib.request.urlopen(req, timeout=30) as resp:
            return dict(json.loads(resp.read().decode("utf-8")))

    async def scenario() -> tuple[int, str, dict[str, object], dict[str, Any]]:
        task = asyncio.create_task(runtime.serve("127.0.0.1", port, tick_seconds=0.5))
        try:
            for _ in range(100):  # the server is up
                await asyncio.sleep(0.1)
                try:
                    await asyncio.to_thread(get, "/healthz")
                    break
                except OSError:
                    continue
            part = data / ".cities.csv.part"
            part.write_text("code,name\nOSL,Oslo\nLIS,Lisbon\n", "utf-8")
            part.rename(data / "cities.csv")
            count = 0
            for _ in range(200):
                await asyncio.sleep(0.1)
                entities = runtime.contract.entities if runtime.contract else []
                if entities:
                    count = runtime.ingestor.graph.count(entities[0].name)
                    if count == 2:
                        break
            body = await asyncio.to_thread(get, "/metrics")
            health = json.loads(await asyncio.to_thread(get, "/healthz"))
            health["readyz"] = json.loads(await asyncio.to_thread(get, "/readyz"))
            answer = await asyncio.to_thread(ask, "What is the name of the city with code OSL?")
            return count, body, health, answer
        finally:
            task.cancel()
            try:
                await task
            except asyncio.CancelledError:
                pass

    try:
        count, body, health, answer = asyncio.run(scenario())
    finally:
        close()
    assert count == 2
    label = metrics.source_label("cities")  # "_other" once earlier tests used up the label cap
    assert f'esc_records_in_total{{source="{label}"}}' in body
    assert health["mode"] == "embedded" and int(str(health["contract_version"])) >= 1
    assert health["readyz"] == {"ready": True, "reasons": [], "dependencies": {}}
    # questions to a running embedded ESC go to its POST /v1/ask (the store allows one process)
    assert answer["id"] == "q1" and answer["answer"] == "Oslo", answer
    assert [c["source"] for c in answer["citations"]] == ["cities"]
