"""The record messages of a whole CSV/TSV file built from its columns (streams/csv_envelopes.py) are the record
path's (``file_watcher.emission_for``): same keys in the same order, same JSON documents but for the time they
were made, for every file of the test data the columnar reader takes, and for cells JSON must escape."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from esc.contract.labels import source_label
from esc.streams.connectors.file_watcher import emission_for
from esc.streams.csv_envelopes import csv_envelopes
from esc.streams.readers import SourceFile, read
from esc.streams.readers.csv_table import read_csv_table

DATA = Path(__file__).resolve().parents[1] / "data"
FILES = sorted(p for p in DATA.rglob("*") if p.suffix in (".csv", ".tsv"))


def _source_file(path: Path, root: Path) -> SourceFile:
    return SourceFile(path=path, rel=path.relative_to(root).as_posix(), format=path.suffix[1:],
                      source=source_label(path.stem))  # fmt: skip


# the files the columnar reader takes (one it declines goes record by record, as before)
TAKEN = [p for p in FILES if not isinstance(read_csv_table(_source_file(p, p.parent)), str)]


def _both(path: Path, root: Path) -> tuple[list[tuple[bytes, dict]], list[tuple[bytes, dict]]] | None:
    sf = _source_file(path, root)
    rel = sf.rel
    got = read_csv_table(sf)
    if isinstance(got, str):
        return None  # declined: such a file goes record by record
    ours = [(k, json.loads(v)) for k, v in csv_envelopes(sf.source, rel, sf.format, "h", got.table, "T")]
    theirs = []
    for rec in read(sf):
        em = emission_for(rec, rel, "h", profiled=True)
        theirs.append((em.key, json.loads(em.value)))
    for _, doc in ours + theirs:
        doc.pop("event_time")
    return ours, theirs


def test_most_test_files_are_taken_whole() -> None:
    assert len(FILES) >= 100 and len(TAKEN) >= len(FILES) - 5


@pytest.mark.parametrize("path", TAKEN, ids=lambda p: p.relative_to(DATA).as_posix())
def test_the_messages_built_from_columns_are_the_record_paths(path: Path) -> None:
    both = _both(path, DATA)  # named by its path under the folder, as the drop folder names files in directories
    assert both is not None
    ours, theirs = both
    assert [k for k, _ in ours] == [k for k, _ in theirs]
    assert ours == theirs


def test_cells_json_must_escape_come_out_as_the_record_path_writes_them(tmp_path: Path) -> None:
    f = tmp_path / "Café notes.csv"
    f.write_text('id,text,empty\n1,"say ""hi"" \\ back\tslash",\n2,naïve ☃ 𝄞,x\n', encoding="utf-8")
    both = _both(f, tmp_path)
    assert both is not None
    ours, theirs = both
    assert ours == theirs and len(ours) == 2
    assert ours[0][1]["payload"] == {"id": "1", "text": 'say "hi" \\ back\tslash', "empty": None}
