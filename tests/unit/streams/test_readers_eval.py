"""The readers against the evaluation packs: every source and row count must match the truth.

These tests fail (they do not skip) when the eval folder is missing: it is vendored in the repository under
``tests/data/eval``.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from pathlib import Path

import pytest

from esc.contract.records import Record, Rejected
from esc.streams.readers import read, read_path, scan, scan_with_errors
from tests.paths import EVAL


def _eval_dir(*parts: str) -> Path:
    path = EVAL.joinpath(*parts)
    assert path.is_dir(), f"eval data missing: {path}"
    return path


@pytest.mark.parametrize("db", ["chinook", "sakila", "northwind"])
def test_relational_drop_sources_and_rows_match_truth(db: str) -> None:
    drop = _eval_dir("relational", db, "drop")
    truth = json.loads((drop.parent / "truth.json").read_text(encoding="utf-8"))
    units, errors = scan_with_errors(drop)
    assert errors == []
    rows: Counter[str] = Counter()
    fields: dict[str, set[str]] = defaultdict(set)
    rejected: list[Rejected] = []
    for sf in units:
        for item in read(sf):
            if isinstance(item, Record):
                rows[item.source] += 1
                fields[item.source].update(item.values)
            else:
                rejected.append(item)
    assert rejected == []
    assert dict(rows) == {name: spec["rows"] for name, spec in truth["sources"].items()}
    for name, spec in truth["sources"].items():
        assert fields[name] == {c["name"] for c in spec["columns"]}, name


@pytest.mark.parametrize("db", ["chinook", "sakila", "northwind"])
def test_relational_hierarchy_matches_truth(db: str) -> None:
    drop = _eval_dir("relational", db, "drop")
    truth = json.loads((drop.parent / "truth.json").read_text(encoding="utf-8"))
    (edge,) = truth["hierarchy"]
    seen = set()
    for sf in scan(drop):
        for item in read(sf):
            if isinstance(item, Record) and item.parent is not None:
                seen.add((item.parent.source, item.source, item.array_path))
                for pf, cf in zip(edge["parent_fields"], edge["child_fields"], strict=True):
                    assert item.parent.values[pf] == item.values[cf]
    assert seen == {(edge["parent"], edge["child"], edge["path"])}


def test_tatqa_tables_are_separate_sources_with_the_right_row_counts() -> None:
    root = _eval_dir("tatqa")
    contexts = [
        json.loads(line) for line in (root / "contexts.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    assert len(contexts) == 80
    units = scan(root / "tables")
    assert len(units) == 80
    assert not any(u.is_corpus for u in units)
    for ctx in contexts:
        items = [i for i in read_path(root / ctx["table"], root) if isinstance(i, Record)]
        assert len(items) == len(list(read_path(root / ctx["table"], root))), ctx["table"]
        # table_rows counts every row of the table; the reader takes the first one as the header.
        assert len(items) == ctx["table_rows"] - 1, ctx["table"]
        assert {i.location.file for i in items} == {ctx["table"]}


def test_tatqa_docs_form_one_corpus_source() -> None:
    root = _eval_dir("tatqa")
    units = {u.source: u for u in scan(root)}
    docs = units["docs"]
    assert docs.is_corpus and docs.format == "text" and len(docs.members) == 80
    assert sum(1 for u in units.values() if u.rel.startswith("tables/")) == 80
    items = list(read(docs))
    records = [r for r in items if isinstance(r, Record)]
    assert len(records) == len(items) == 80 and all(r.source == "docs" for r in records)
    files = {r.location.file for r in records}
    assert files == {f"docs/{p.name}" for p in (root / "docs").glob("*.txt")}
    assert all(r.values["text"] and r.values["title"] for r in records)
