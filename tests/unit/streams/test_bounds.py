"""Archives are checked by their declared sizes before anything is inflated (a zip bomb is refused unread)."""

from __future__ import annotations

import zipfile
from pathlib import Path

from esc.streams.readers.bounds import MAX_PART_BYTES, zip_refusal


def test_a_small_workbook_like_archive_may_be_read(tmp_path: Path) -> None:
    path = tmp_path / "ok.xlsx"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("xl/workbook.xml", "<workbook/>")
        zf.writestr("xl/worksheets/sheet1.xml", "<sheetData/>" * 100)
    assert zip_refusal(path) is None


def test_a_part_that_inflates_past_the_limit_is_refused_with_its_name(tmp_path: Path) -> None:
    path = tmp_path / "bomb.xlsx"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as zf:
        zf.writestr("xl/sharedStrings.xml", b"\0" * (MAX_PART_BYTES + 1))
    assert path.stat().st_size < 1 << 20  # small on disk
    reason = zip_refusal(path)
    assert reason is not None and "xl/sharedStrings.xml" in reason


def test_a_file_that_is_not_an_archive_gets_a_reason(tmp_path: Path) -> None:
    path = tmp_path / "fake.xlsx"
    path.write_bytes(b"PK\x03\x04 truncated")
    assert "not a readable zip archive" in (zip_refusal(path) or "")
