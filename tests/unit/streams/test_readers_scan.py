"""scan / scan_with_errors / read / format_for: units, names, corpus detection, locations."""

from __future__ import annotations

import json
from pathlib import Path

from esc.contract.records import Record, Rejected
from esc.streams.readers import SourceFile, format_for, read, read_path, scan, scan_with_errors
from esc.streams.readers.base import unique_names
from esc.streams.readers.corpus import similarity


def test_format_for_extensions_and_sniffing(tmp_path: Path) -> None:
    cases = {
        "a.CSV": ("x,y\n1,2\n", "csv"),
        "b.tsv": ("x\ty\n", "tsv"),
        "c.json": ('[{"a": 1}]', "json"),
        "d.ndjson": ('{"a": 1}\n', "jsonl"),
        "e.md": ("# t\n", "markdown"),
        "f.txt": ("hello\n", "text"),
        "noext_json": ('\n  [{"a": 1}, {"a": 2}]', "json"),
        "noext_jsonl": ('{"a": 1}\n{"a": 2}\n', "jsonl"),
        "noext_csv": ("a;b;c\n1;2;3\n4;5;6\n", "csv"),
        "noext_tsv": ("a\tb\n1\t2\n", "tsv"),
        "noext_text": ("Just some prose here.\nAnd more.\n", "text"),
        "noext_pdf": ("%PDF-1.4\n", "pdf"),
    }
    for name, (text, fmt) in cases.items():
        p = tmp_path / name
        p.write_text(text, encoding="utf-8")
        assert format_for(p) == fmt, name
    junk = tmp_path / "blob.bin"
    junk.write_bytes(bytes(range(256)))
    assert format_for(junk) is None


def test_scan_is_sorted_skips_hidden_and_reports_unknown(tmp_path: Path) -> None:
    (tmp_path / "b.csv").write_text("a\n1\n")
    (tmp_path / "a.jsonl").write_text('{"a": 1}\n')
    (tmp_path / ".hidden.csv").write_text("a\n1\n")
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "x.csv").write_text("a\n1\n")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "c.json").write_text("[]")
    (tmp_path / "sub" / "image.bin").write_bytes(b"\x89PNG\x00\x00\x01")
    units, errors = scan_with_errors(tmp_path)
    assert [(u.rel, u.source, u.format) for u in units] == [
        ("a.jsonl", "a", "jsonl"),
        ("b.csv", "b", "csv"),
        ("sub/c.json", "c", "json"),
    ]
    assert all(u.path.is_absolute() and not u.is_corpus for u in units)
    assert len(errors) == 1 and errors[0].file == "sub/image.bin" and "unknown format" in errors[0].reason
    assert scan(tmp_path) == units


def test_colliding_stems_are_named_by_relative_path(tmp_path: Path) -> None:
    for d in ("x", "y"):
        (tmp_path / d).mkdir()
        (tmp_path / d / "orders.csv").write_text("id\n1\n")
    (tmp_path / "orders.json").write_text('[{"id": 1}]')
    (tmp_path / "solo.csv").write_text("id\n1\n")
    names = [u.source for u in scan(tmp_path)]
    assert names == ["orders.json", "solo", "x/orders.csv", "y/orders.csv"]
    recs = [r for r in read(scan(tmp_path)[2]) if isinstance(r, Record)]
    assert recs[0].source == "x/orders.csv"


def test_similar_jsonl_files_form_a_corpus_named_after_the_directory(tmp_path: Path) -> None:
    d = tmp_path / "events"
    d.mkdir()
    for i in range(55):
        extra = {"note": "x"} if i % 5 == 0 else {}
        rows = [{"id": i * 10 + j, "kind": "click", "ts": j, **extra} for j in range(3)]
        (d / f"part-{i:03d}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (d / "README.md").write_text("# events\n")
    units = scan(tmp_path)
    corpus = [u for u in units if u.is_corpus]
    assert len(corpus) == 1
    c = corpus[0]
    assert (c.source, c.format, c.rel, len(c.members)) == ("events", "jsonl", "events", 55)
    assert [u.source for u in units if not u.is_corpus] == ["README"]
    recs = [r for r in read(c) if isinstance(r, Record)]
    assert len(recs) == 55 * 3 and {r.source for r in recs} == {"events"}
    assert recs[3].location.file == "events/part-001.jsonl" and recs[3].location.line == 1


def test_dissimilar_or_too_few_files_are_not_a_corpus(tmp_path: Path) -> None:
    d = tmp_path / "tables"
    d.mkdir()
    for i in range(60):
        (d / f"t{i:02d}.csv").write_text(f"key_{i},value_{i},other_{i}\n1,2,3\n")
    assert not any(u.is_corpus for u in scan(tmp_path))
    assert len(scan(tmp_path)) == 60
    few = tmp_path / "few"
    few.mkdir()
    for i in range(49):
        (few / f"d{i}.txt").write_text(f"doc {i}\n")
    assert not any(u.is_corpus for u in scan(few))
    assert len([u for u in scan(few, corpus_min_files=10) if u.is_corpus]) == 1


def test_text_documents_form_a_corpus_and_the_root_itself_can_be_one(tmp_path: Path) -> None:
    for i in range(50):
        (tmp_path / f"doc{i:02d}.txt").write_text(f"Title {i}\nbody {i}\n")
    units = scan(tmp_path)
    assert len(units) == 1
    (c,) = units
    assert c.is_corpus and c.rel == "." and c.source == tmp_path.name and c.format == "text"
    recs = [r for r in read(c) if isinstance(r, Record)]
    assert [r.location.file for r in recs][:2] == ["doc00.txt", "doc01.txt"]
    assert recs[1].values["title"] == "Title 1"


def test_similarity_is_mean_jaccard_with_the_consensus() -> None:
    same = [frozenset({"a", "b"})] * 4
    assert similarity(same) == 1.0
    assert similarity([frozenset({"a"}), frozenset({"b"}), frozenset({"c"})]) == 0.0
    assert similarity([]) == 0.0
    mixed = [frozenset({"a", "b"})] * 3 + [frozenset({"a", "c"})]
    assert similarity(mixed) == (3 * 1.0 + 1 / 3) / 4


def test_unique_names_is_deterministic() -> None:
    assert unique_names(["a", "a", "", None, "a__2", " "]) == ["a", "a__3", "col_3", "col_4", "a__2", "col_6"]


def test_read_path_and_read_of_a_single_source_file(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    p = tmp_path / "d" / "x.csv"
    p.write_text("a\n1\n")
    (rec,) = list(read_path(p, tmp_path))
    assert isinstance(rec, Record) and rec.location.file == "d/x.csv" and rec.source == "x"
    sf = SourceFile(path=p, rel="d/x.csv", format="csv", source="renamed")
    (rec2,) = list(read(sf))
    assert isinstance(rec2, Record) and rec2.source == "renamed"
    unknown = tmp_path / "u.bin"
    unknown.write_bytes(b"\x00\x01")
    (rej,) = list(read_path(unknown, tmp_path))
    assert isinstance(rej, Rejected) and "unknown format" in rej.reason
    missing = list(read_path(tmp_path / "nope.csv", tmp_path))
    assert len(missing) == 1 and isinstance(missing[0], Rejected)
