"""Statistics that stay right under change (issue 13, points 3 and 5), on the embedded runtime: an edited file's
profile equals a fresh ingest of the edited file; a foreign key that only a later version proves gets its edges
for the records written before it; one folder scan is one contract version, not one per file."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from esc.agents.embedding import HashingEmbedder
from esc.contract.model import Contract
from esc.settings import load
from esc.streams.runtime.inprocess import open_runtime

STATS = ("type", "count", "null_rate", "distinct", "uniqueness", "min", "max", "min_length", "max_length")


def ingest(state: Path, data: Path) -> tuple[Contract, Any]:
    settings = load().replace(state_dir=state, app_id="chg", topic_prefix="chg")
    runtime, close = open_runtime(settings, data, embedder=HashingEmbedder(), settle=0.0)
    try:
        summary = asyncio.run(runtime.ingest_once())
        assert runtime.contract is not None and summary.dead == 0
        graph = runtime.ingestor.graph
        edges = graph.read("SELECT type, count(*) AS n FROM edges GROUP BY type ORDER BY type")
        return runtime.contract, {r["type"]: r["n"] for r in edges}
    finally:
        close()


def profile(contract: Contract, source: str) -> dict[str, Any]:
    src = contract.sources[source]
    return {"records": src.records, "key": src.identity_key,
            "fields": {f.path: {k: getattr(f, k) for k in STATS} for f in src.fields}}  # fmt: skip


def people(rows: dict[int, tuple[str, int]]) -> str:
    return "person_id,name,age\n" + "".join(f"{i},{n},{a}\n" for i, (n, a) in sorted(rows.items()))


def test_an_edited_file_profiles_like_a_fresh_ingest_of_it(tmp_path: Path) -> None:
    rows = {i: (f"name {i}", 20 + i % 50) for i in range(1, 201)}
    data = tmp_path / "data"
    data.mkdir()
    (data / "people.csv").write_text(people(rows), "utf-8")
    ingest(tmp_path / "state", data)
    for i in range(1, 11):  # change 10 rows, delete 5
        rows[i] = (f"renamed {i}", 99 + i)
    for i in range(100, 105):
        del rows[i]
    (data / "people.csv").write_text(people(rows), "utf-8")
    edited, _ = ingest(tmp_path / "state", data)
    fresh_data = tmp_path / "fresh"
    fresh_data.mkdir()
    (fresh_data / "people.csv").write_text(people(rows), "utf-8")
    fresh, _ = ingest(tmp_path / "fresh-state", fresh_data)
    assert profile(edited, "people")["records"] == 195
    assert profile(edited, "people") == profile(fresh, "people")


def test_a_foreign_key_proved_later_gets_edges_for_records_written_before(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    clients = "client_id,client_name\n" + "".join(f"{i},client {i}\n" for i in range(1, 11))
    orders = "order_id,client_id,amount\n" + "".join(f"{i},{1 + i % 20},{i * 3}\n" for i in range(1, 41))
    (data / "clients.csv").write_text(clients, "utf-8")
    (data / "orders.csv").write_text(orders, "utf-8")  # half the references dangle: no foreign key yet
    first, edges = ingest(tmp_path / "state", data)
    assert not [fk for fk in first.foreign_keys if fk.from_.source == "orders"]
    assert sum(edges.values()) == 0
    more = "".join(f"{i},client {i}\n" for i in range(11, 21))
    (data / "clients.csv").write_text(clients + more, "utf-8")  # now every reference is found
    later, edges = ingest(tmp_path / "state", data)
    fks = [fk for fk in later.foreign_keys if fk.from_.source == "orders"]
    assert [(fk.from_.fields, fk.to.source) for fk in fks] == [(["client_id"], "clients")]
    assert later.version > first.version
    assert sum(edges.values()) == 40  # every order written in the first run has its edge now


def test_one_scan_of_many_files_is_one_contract_version(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    for i in range(40):
        (data / f"t{i:02d}.csv").write_text(f"t{i}_id,t{i}_v\n1,a\n2,b\n", "utf-8")
    contract, _ = ingest(tmp_path / "state", data)
    assert len(contract.sources) == 40 and contract.version == 1
