"""The mentions pack (tests/data/mentions), ingested once into embedded in-memory stores with the hashing embedder."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from esc.agents.embedding import HashingEmbedder
from esc.agents.ingest import Ingestor
from esc.agents.stores.embedded import EmbeddedGraphStore, EmbeddedVectorStore
from esc.contract.evolve import evolve
from esc.contract.model import Contract
from esc.contract.records import Record
from esc.streams.discover import discover
from esc.streams.events import envelope_for
from esc.streams.readers import read, scan_with_errors

PACK = Path(__file__).resolve().parents[2] / "data" / "mentions"
COLLECTION = "MentionsText"


@dataclass
class Ingested:
    contract: Contract
    graph: EmbeddedGraphStore
    vectors: EmbeddedVectorStore
    ingestor: Ingestor
    truth: dict[str, Any]

    def label(self, source: str) -> str:
        entity = self.contract.entity_for_source(source)
        assert entity is not None, source
        return entity.name


def ingest_pack(drop: Path, notes_first: bool = False) -> Ingested:
    contract, _ = evolve(None, discover(drop).contract)
    graph, vectors = EmbeddedGraphStore(), EmbeddedVectorStore()
    ingestor = Ingestor(graph, vectors, HashingEmbedder(), COLLECTION, contract)
    files, errors = scan_with_errors(drop)
    assert not errors
    files = sorted(files, key=lambda f: (not f.rel.startswith("notes/")) if notes_first else f.rel)
    for sf in files:
        envs = [envelope_for(r, sf.rel, "test") for r in read(sf) if isinstance(r, Record)]
        ingestor.handle(envs)
        if notes_first and sf.rel.startswith("notes/"):
            ingestor.link_mentions()  # linked while the people are not in the graph yet
    ingestor.link_mentions()
    truth = json.loads((PACK / "truth.json").read_text(encoding="utf-8"))
    return Ingested(contract, graph, vectors, ingestor, truth)


@pytest.fixture(scope="session")
def mentions_pack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Ingested]:
    drop = tmp_path_factory.mktemp("mentions") / "drop"
    shutil.copytree(PACK / "drop", drop)
    pack = ingest_pack(drop)
    yield pack
    pack.graph.close()
    pack.vectors.close()
