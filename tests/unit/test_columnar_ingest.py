"""The embedded runtime's columnar path (issue 15.3) leaves the contract, graph and vectors the record path leaves.

Each public pack (tests/data/eval/relational: Chinook, Northwind, Sakila, CSV and JSON files) is ingested twice
with ``esc ingest --embedded``'s code path, ``ESC_COLUMNAR`` off and on, into new state folders; the contracts must
be equal field by field (everything but ids and times of the run), and the graphs equal in node, edge, source
record and chunk counts, and in the properties of a sample of nodes.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import duckdb
import pytest

from esc.agents.embedding import HashingEmbedder
from esc.settings import load
from esc.streams.events import RecordEnvelope
from esc.streams.runtime.inprocess import ingest_embedded
from tests.paths import REPO

PACKS = REPO / "tests" / "data" / "eval" / "relational"
VOLATILE = {"created_at", "generated_at", "time", "updated_at", "seconds", "content_hash", "top_values"}
# top_values: Misra-Gries frequent values with approximate counts; the record path's depend on which records share
# a 500-message profile batch (with file batches, records of several files do), so they differ from any other cut
# of the same records, the columnar path's per-file batches included (which equal the record path's when each file
# starts a batch: tests/unit/test_csv_table.py). Everything else in the contract must be equal.


def _ingest(pack: str, root: Path, columnar: bool, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Any]:
    drop = root / "drop"
    shutil.copytree(PACKS / pack / "drop", drop)
    monkeypatch.setenv("ESC_COLUMNAR", "true" if columnar else "false")
    settings = load().replace(state_dir=root / "state")
    summary = ingest_embedded(settings, drop, HashingEmbedder())
    return root / "state", summary


def _stable(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _stable(v) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):
        return [_stable(v) for v in value]
    return value


def _contract(state: Path) -> dict[str, Any]:
    path = state / "inprocess" / "contract.json"
    return dict(_stable(json.loads(path.read_text("utf-8"))))


def _graph(state: Path) -> dict[str, Any]:
    path = next((state / "embedded").glob("graph*.duckdb"))
    con = duckdb.connect(str(path), read_only=True)
    try:
        q = lambda sql: con.execute(sql).fetchall()  # noqa: E731
        return {
            "nodes": q("SELECT label, stub, count(*) FROM entities GROUP BY ALL ORDER BY ALL"),
            "edges": q("SELECT type, count(*) FROM edges GROUP BY ALL ORDER BY ALL"),
            "edge_ids": q("SELECT hash(list(type || src || '>' || dst ORDER BY type, src, dst)) FROM edges"),
            "records": q("SELECT count(*), hash(list(sid || location || coalesce(file, '') ORDER BY sid)) FROM source_records"),
            "derived": q("SELECT count(*), hash(list(eid || sid ORDER BY eid, sid)) FROM derived_from"),
            "chunks": q("SELECT count(*), hash(list(id || text || entity_key || location ORDER BY id)) FROM chunks"),
            "sample": q("SELECT eid, label, key_json, props::VARCHAR, contract_version, stub FROM entities "
                        "ORDER BY eid LIMIT 200"),
            "props": q("SELECT hash(list(props::VARCHAR ORDER BY eid)) FROM entities"),
        }
    finally:
        con.close()


@pytest.mark.parametrize("pack", ["chinook", "northwind", "sakila"])
def test_columnar_path_equals_record_path(pack: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    slow_state, slow = _ingest(pack, tmp_path / "records", False, monkeypatch)
    fast_state, fast = _ingest(pack, tmp_path / "columnar", True, monkeypatch)
    assert slow.columnar_files == 0
    assert fast.columnar_files > 0, "no file of the pack took the columnar path"
    assert fast.written + fast.backfilled == slow.written + slow.backfilled
    assert fast.dead == slow.dead
    a, b = _contract(fast_state), _contract(slow_state)
    assert a.keys() == b.keys()
    for name in sorted(b.get("sources", {})):
        assert a["sources"].get(name) == b["sources"][name], f"source {name} differs"
    for k in sorted(b):
        assert a[k] == b[k], f"contract {k} differs"
    ga, gb = _graph(fast_state), _graph(slow_state)
    for k in gb:
        assert ga[k] == gb[k], f"graph {k} differs"
    assert _logged(fast_state) == _logged(slow_state)  # what a later backfill replays


def _logged(state: Path) -> dict[str, Any]:
    """The records log (the compacted records topic a backfill replays): each record's envelope, times aside."""
    out: dict[str, Any] = {}
    for path in sorted((state / "inprocess" / "records").glob("*.jsonl")):
        for line in path.read_text("utf-8").splitlines():
            msg = json.loads(line)
            env = RecordEnvelope.model_validate_json(msg["v"]).model_dump(mode="json", exclude={"event_time"})
            out[msg["k"]] = env
    return out


def test_an_edited_file_leaves_what_the_record_path_leaves(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Edit a file between two ingests (a row changed, 25 deleted): a new version replaces the old one whole and
    its lost records are retracted; the columnar path leaves the contract and graph the record path leaves."""
    out = {}
    for columnar in (False, True):
        monkeypatch.setenv("ESC_COLUMNAR", "true" if columnar else "false")
        root = tmp_path / str(columnar)
        state, _ = _ingest_dir(PACKS / "chinook" / "drop", root)
        track = root / "drop" / "Track.csv"
        lines = track.read_text("utf-8").splitlines(keepends=True)[:-25]  # 25 tracks deleted
        lines[5] = lines[5].replace(";", ";(edited) ", 1)  # one track renamed
        track.write_text("".join(lines), "utf-8")
        again = ingest_embedded(load().replace(state_dir=state), root / "drop", HashingEmbedder())
        assert again.files == 1 and again.columnar_files == int(columnar)
        out[columnar] = (_contract(state), _graph(state))
    (a, ga), (b, gb) = out[True], out[False]
    for k in sorted(b):
        assert a[k] == b[k], f"contract {k} differs"
    for k in gb:
        assert ga[k] == gb[k], f"graph {k} differs"


def _ingest_dir(src: Path, root: Path) -> tuple[Path, Any]:
    drop = root / "drop"
    shutil.copytree(src, drop)
    summary = ingest_embedded(load().replace(state_dir=root / "state"), drop, HashingEmbedder())
    return root / "state", summary
