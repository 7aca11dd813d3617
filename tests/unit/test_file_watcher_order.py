from __future__ import annotations

from pathlib import Path

from streams.connectors.file_watcher import delivery_order


def test_deletions_first_then_small_files_before_large_ones(tmp_path: Path) -> None:
    big = tmp_path / "a_lineitem.csv"
    big.write_text("x" * 5000)
    small = tmp_path / "z_region.csv"
    small.write_text("x" * 10)
    mid = tmp_path / "m_orders.csv"
    mid.write_text("x" * 500)
    gone = tmp_path / "deleted.csv"
    assert delivery_order([big, mid, gone, small]) == [gone, small, mid, big]
