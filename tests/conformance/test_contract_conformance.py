"""Same contract everywhere (issue 13, point 4): the Faust worker on the real stack and the embedded runtime infer
the same contract from the same folder, compared field by field on each public pack: sources, formats, record
counts, identity keys, every field's path, type and statistics that do not depend on the order records were merged
in (null rate, distinct count, min, max, lengths), foreign keys and hierarchy. Integration: it FAILS when the stack
is down."""

from __future__ import annotations

import asyncio
import json
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from esc.agents.embedding import HashingEmbedder
from esc.agents.extractors import PENDING
from esc.contract.model import Contract
from esc.settings import Settings, load
from esc.streams.runtime.inprocess import open_runtime
from tests.integration.conftest import require
from tests.integration.truth import drop_pack, wipe_labels
from tests.integration.worker import Worker, poll
from tests.paths import RELATIONAL

pytestmark = pytest.mark.integration

PACKS = ["chinook", "sakila", "northwind"]
STATS = ("type", "null_rate", "distinct", "count", "min", "max", "min_length", "max_length")


def summary(contract: Contract) -> dict[str, Any]:
    """What must agree: structure and the order-free statistics (``top_values`` and ``examples`` are samples)."""
    return {
        "sources": {
            name: {
                "format": src.format,
                "records": src.records,
                "parent": src.parent,
                "identity_key": list(src.identity_key),
                "fields": {f.path: {k: getattr(f, k) for k in STATS} for f in src.fields},
            }
            for name, src in sorted(contract.sources.items())
        },
        "foreign_keys": sorted(
            (fk.from_.source, tuple(fk.from_.fields), fk.to.source, tuple(fk.to.fields)) for fk in contract.foreign_keys
        ),
        "hierarchy": sorted((h.parent, h.child, h.path) for h in contract.hierarchy),
        "entities": sorted((e.name, e.source, tuple(e.key)) for e in contract.entities),
    }


def embedded_contract(pack: Path, root: Path) -> Contract:
    drop = root / "embedded-drop"
    drop.mkdir(parents=True)
    drop_pack(pack, drop)
    settings = load().replace(state_dir=root / "embedded-state", app_id="conf", topic_prefix="conf")
    runtime, close = open_runtime(settings, drop, embedder=HashingEmbedder(), settle=0.0)
    try:
        asyncio.run(runtime.ingest_once())
        assert runtime.contract is not None
        return runtime.contract
    finally:
        close()


def worker_contract(worker: Worker) -> Contract | None:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{worker.web_port}/contract", timeout=10) as resp:
            return Contract.model_validate(json.load(resp))
    except OSError:
        return None


@pytest.mark.parametrize("name", PACKS)
def test_the_faust_worker_and_the_embedded_runtime_infer_the_same_contract(
    name: str, settings: Settings, tmp_path: Path
) -> None:
    from neo4j import GraphDatabase

    from esc.stack.kafka import describe_cluster
    from esc.stack.neo4j import bolt_ping

    require(settings, "kafka", settings.kafka_bootstrap, lambda: describe_cluster(settings.kafka_bootstrap, 5.0))
    require(settings, "neo4j", settings.neo4j_uri, lambda: bolt_ping(settings.neo4j_uri, timeout_s=5.0))
    pack = RELATIONAL / name
    want = summary(embedded_contract(pack, tmp_path))
    worker = Worker(tmp_path / "w").start()
    try:
        drop_pack(pack, worker.data)

        def settled(c: Contract | None) -> bool:
            return c is not None and set(c.sources) == set(want["sources"]) and not any(
                PENDING in s.key_evidence for s in c.sources.values()
            ) and all(c.sources[s].records == want["sources"][s]["records"] for s in want["sources"])

        got = poll(lambda: worker_contract(worker), settled, 300, f"the {name} contract settled", worker.log)
        assert summary(got) == want
    finally:
        worker.stop()
        with GraphDatabase.driver(settings.neo4j_uri, auth=None) as driver:
            wipe_labels(driver, [e[0] for e in want["entities"]], list(want["sources"]), worker.label(""))
