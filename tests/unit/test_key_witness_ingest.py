"""A key the stream's sketches can only estimate is checked over the whole file by the connector (issue: an
estimated composite key merged 49 record pairs of TPC-H lineitem at SF 0.05 into shared nodes): on both of the
embedded runtime's paths, a file of ~72,000 order lines whose ``item_id`` repeats on 3 lines is keyed on
(order_id, line_no) and every line is its own node."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import duckdb
import pytest

from esc.agents.embedding import HashingEmbedder
from esc.settings import load
from esc.streams.runtime.inprocess import ingest_embedded
from tests.unit.contract.test_key_witness import order_lines


@pytest.mark.parametrize("columnar", [True, False], ids=["columnar", "records"])
def test_repeated_ids_past_the_caps_do_not_merge_records(
    columnar: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rows = order_lines()
    drop = tmp_path / "drop"
    drop.mkdir()
    with (drop / "order_lines.csv").open("w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    monkeypatch.setenv("ESC_COLUMNAR", "true" if columnar else "false")
    settings = load().replace(state_dir=tmp_path / "state")
    summary = ingest_embedded(settings, drop, HashingEmbedder())
    assert summary.columnar_files == (1 if columnar else 0)

    contract = json.loads((tmp_path / "state" / "inprocess" / "contract.json").read_text("utf-8"))
    src = contract["sources"]["order_lines"]
    assert src["identity_key"] == ["order_id", "line_no"], src.get("key_evidence")
    path = next((tmp_path / "state" / "embedded").glob("graph*.duckdb"))
    con = duckdb.connect(str(path), read_only=True)
    try:
        nodes = con.execute("SELECT count(*) FROM entities WHERE NOT stub AND label = ?", ["OrderLine"]).fetchone()
        derived = con.execute("SELECT count(DISTINCT sid) FROM derived_from").fetchone()
    finally:
        con.close()
    assert nodes is not None and derived is not None
    assert (nodes[0], derived[0]) == (len(rows), len(rows))
