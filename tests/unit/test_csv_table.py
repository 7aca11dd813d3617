"""The columnar path's reader and profiler (issue 15.3): what it takes it reads and profiles exactly like the record
path; what it cannot be sure of it declines, and the record path reads it (bad rows to the DLQ with its reasons)."""

from __future__ import annotations

from pathlib import Path

import pytest

from esc.agents.embedding import HashingEmbedder
from esc.agents.profiler import STREAM_CAPS
from esc.contract.profile import SourceProfile
from esc.contract.profile_table import profile_table
from esc.contract.records import Record
from esc.settings import load
from esc.streams.readers import read, scan
from esc.streams.readers.csv_table import CsvTable, read_csv_table
from esc.streams.runtime.inprocess import ingest_embedded


def _merged_record_profile(path: Path, batch: int = 500) -> SourceProfile:
    (sf,) = scan(path)
    recs = [r for r in read(sf) if isinstance(r, Record)]
    out: SourceProfile | None = None
    for i in range(0, len(recs), batch):
        part = SourceProfile.from_dict(SourceProfile.of_records(sf.source, recs[i : i + batch], STREAM_CAPS).to_dict(), STREAM_CAPS)
        out = part if out is None else out.merge(part)
    assert out is not None
    return out


def _written(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _columnar_profile(path: Path, batch: int = 500) -> SourceProfile:
    (sf,) = scan(path)
    got = read_csv_table(sf)
    assert isinstance(got, CsvTable)
    return profile_table(sf.source, got.table, sf.format, STREAM_CAPS, batch)


def test_profile_equals_the_record_paths_merged_batches(tmp_path: Path) -> None:
    # codes that look like ints but are not (007, +5), decimals, dates, repeated values across batches, nulls,
    # a mostly distinct text column: the frequent values depend on the 500-record batches and must follow them
    lines = ["id,code,qty,price,day,note,maybe"]
    for i in range(1800):
        code = "007" if i % 97 == 0 else ("+5" if i % 89 == 0 else str(i % 40))
        note = f"note {i % 13}" if i % 3 else f"A longer sentence number {i}. It has two sentences, so it is text."
        lines.append(f"{i},{code},{i % 7},{(i % 50) / 4:.2f},2024-01-{i % 28 + 1:02d},\"{note}\",{'' if i % 5 else i}")
    f = _written(tmp_path / "things.csv", lines)
    assert _columnar_profile(f).to_dict() == _merged_record_profile(f).to_dict()


def test_frequent_values_follow_the_batches_when_strings_share_a_hash(tmp_path: Path) -> None:
    # "3", "3.0" and "3.00" hash alike (one value written three ways); a value pushed out of the summary comes back
    # with the batches after it (many distinct values, heavy hitters that change from batch to batch); a column of
    # at most k distinct values keeps exact counts
    lines = ["id,amount,few,heavy"]
    for i in range(2600):
        form = ("{}", "{}.0", "{}.00")[(i // 7) % 3]
        amount = form.format(i % 60 if i % 4 else i)
        few = form.format(i % 5)
        heavy = str(i // 500) if i % 3 == 0 else form.format(i % 90)
        lines.append(f"{i},{amount},{few},{heavy}")
    f = _written(tmp_path / "amounts.csv", lines)
    fast = _columnar_profile(f)
    assert fast.to_dict() == _merged_record_profile(f).to_dict()
    assert len(fast.fields["few"].top.items) == 5 and len(fast.fields["amount"].top.items) > 0


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("a,b\n1,2\n3\n4,5\n", "ragged"),  # a ragged row: the record path rejects that row alone
        ("a,b\n1,2\n\n4,5\n", "blank line"),  # line numbers in record ids would shift
        ("a,b\r1,2\r4,5\r", "first line"),  # lone carriage returns
        ('a,b\n1,"two\nlines"\n4,5\n', "span"),
        ("a,b\n1,2\r3,4\n", "lone carriage return"),
        ("a,b\n" + "1,2\n" * 300_000 + "3\n", "arrow"),  # ragged after the 1 MiB sample: Arrow refuses it
    ],
)
def test_declines_what_it_cannot_read_like_the_record_reader(tmp_path: Path, text: str, why: str) -> None:
    f = tmp_path / "t.csv"
    f.write_bytes(text.encode())
    (sf,) = scan(f)
    got = read_csv_table(sf)
    assert isinstance(got, str) and why in got


def test_a_declined_file_goes_record_by_record_with_its_dead_letters(tmp_path: Path) -> None:
    drop = tmp_path / "drop"
    drop.mkdir()
    (drop / "good.csv").write_text("id,name\n1,a\n2,b\n3,c\n", encoding="utf-8")
    (drop / "ragged.csv").write_text("id,name\n1,a\n2\n3,c\n", encoding="utf-8")
    summary = ingest_embedded(load().replace(state_dir=tmp_path / "state"), drop, HashingEmbedder())
    assert summary.columnar_files == 1
    assert summary.dead == 1
    (reason,) = summary.dead_reasons
    assert reason.startswith("row has 1 cells, header has 2")
    assert summary.written + summary.backfilled == 5
