"""Corpus detection in the stream (issue 13, point 6) on the embedded runtime: similar files arriving over time in
one directory become one source once there are ``ESC_CORPUS_MIN_FILES`` of them, each record naming its file; the
files delivered before under their own names move into it; a later file joins it without a new version."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from esc.agents.embedding import HashingEmbedder
from esc.contract.model import Contract
from esc.settings import load
from esc.streams.connectors.stream_corpus import FILE_FIELD
from esc.streams.runtime.inprocess import open_runtime

ROWS = 3


def reading(folder: Path, i: int) -> None:
    rows = "".join(f"{i * 10 + j},sensor {i},{20 + j}.5\n" for j in range(ROWS))
    (folder / f"day{i:02d}.csv").write_text("reading_id,sensor,celsius\n" + rows, "utf-8")


def ingest(state: Path, data: Path) -> tuple[Contract, dict[str, int]]:
    settings = load().replace(state_dir=state, app_id="corp", topic_prefix="corp")
    runtime, close = open_runtime(settings, data, embedder=HashingEmbedder(), settle=0.0)
    try:
        asyncio.run(runtime.ingest_once())
        contract = runtime.contract
        assert contract is not None
        graph = runtime.ingestor.graph
        return contract, {e.source: graph.count(e.name) for e in contract.entities}
    finally:
        close()


def test_similar_files_arriving_over_time_become_one_source(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ESC_CORPUS_MIN_FILES", "5")
    data = tmp_path / "data"
    logs = data / "readings"
    logs.mkdir(parents=True)
    for i in range(3):
        reading(logs, i)
    first, counts = ingest(tmp_path / "state", data)
    assert {"day00", "day01", "day02"} <= set(first.sources) and "readings" not in first.sources
    for i in range(3, 5):  # now five of them: a corpus
        reading(logs, i)
    second, counts = ingest(tmp_path / "state", data)
    corpus = second.sources["readings"]
    assert corpus.records == 5 * ROWS and FILE_FIELD in {f.path for f in corpus.fields}
    assert len(corpus.files) == 5
    assert counts["readings"] == 5 * ROWS
    assert all(counts.get(f"day{i:02d}", 0) == 0 for i in range(3))  # the earlier sources' records moved
    assert not {"day03", "day04"} & set(second.sources)  # never a source of their own
    assert second.version == first.version + 1  # the corpus is one version
    reading(logs, 5)  # a later file joins it
    third, counts = ingest(tmp_path / "state", data)
    assert third.sources["readings"].records == 6 * ROWS and counts["readings"] == 6 * ROWS
    assert "day05" not in third.sources and third.version == second.version
