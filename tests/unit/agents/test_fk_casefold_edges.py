"""A foreign key found on case-folded codes writes its edges: the embedded runtime ingests Northwind with the
customer codes of ``Orders`` lower-cased (``tests/data/degrade.py``, variant ``case``) and writes as many edges of
every type, to real (not stub) entities, as it writes for the clean pack."""

from __future__ import annotations

import asyncio
from pathlib import Path

from esc.agents.embedding import HashingEmbedder
from esc.contract.fk_match import CASEFOLD, fk_match
from esc.contract.model import Contract
from esc.settings import load
from esc.streams.runtime.inprocess import InProcessBus, open_runtime
from tests.paths import RELATIONAL, degrade_module

NORTHWIND = RELATIONAL / "northwind"




def _ingest(drop: Path, state: Path, app: str) -> tuple[Contract, dict[str, int], int]:
    """The contract, the edges per type to entities that exist (not stubs), and the stub count."""
    settings = load().replace(state_dir=state, app_id=app, topic_prefix="esc")
    runtime, close = open_runtime(settings, drop, embedder=HashingEmbedder(), bus=InProcessBus("esc"))
    try:
        asyncio.run(runtime.ingest_once())
        contract = runtime.contract
        assert contract is not None
        graph = runtime.ingestor.graph
        rows = graph.read(
            "SELECT e.type AS t, count(*) AS n FROM edges e JOIN entities d ON d.eid = e.dst "
            "WHERE NOT coalesce(d.stub, false) GROUP BY e.type"
        )
        stubs = graph.read("SELECT count(*) AS n FROM entities WHERE coalesce(stub, false)")[0]["n"]
        return contract, {r["t"]: int(r["n"]) for r in rows}, int(stubs)
    finally:
        close()


def test_case_folded_foreign_key_writes_the_clean_packs_edges(tmp_path: Path) -> None:
    variant = tmp_path / "case"
    degrade_module().degrade(NORTHWIND, "case", variant)
    clean_contract, clean, clean_stubs = _ingest(NORTHWIND / "drop", tmp_path / "s1", "clean")
    contract, dirty, stubs = _ingest(variant / "drop", tmp_path / "s2", "case")
    folded = [fk for fk in contract.foreign_keys if fk_match(fk) == CASEFOLD]
    assert [fk.signature() for fk in folded] == [("Orders", ("CustomerID",), "Customers", ("CustomerID",))]
    assert not [fk for fk in clean_contract.foreign_keys if fk_match(fk) == CASEFOLD]
    assert folded[0].evidence["match"] == CASEFOLD  # the contract says how the join normalizes
    assert sum(clean.values()) > 0 and dirty == clean
    assert stubs == clean_stubs  # no stub customers keyed by the lower-cased codes
