"""Corpus detection: many files of one structure in one directory are one source, named after the directory.

Rule (paper default, DESIGN.md): among the files directly inside one directory, the files of one format form a
corpus when there are at least ``min_files`` of them and their structures are at least ``threshold`` similar.

* Structure of a table-like file (CSV, TSV, JSON, JSONL, Excel, Parquet) is the set of field names seen in its
  first records (child sources' fields are prefixed with the child's suffix, sheets with the sheet name).
* Text, markdown and PDF documents have no fields: documents of the same format are similar by definition, so
  50 ``.txt`` files in a folder are one corpus.
* Similarity of a group is the mean Jaccard index of each file's structure with the group's consensus (the
  names present in at least half of the files). At most ``SAMPLE_FILES`` files, evenly spaced, are inspected.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from esc.contract.records import Record
from esc.streams.readers.base import ReadContext
from esc.streams.readers.dispatch import read_file

DOCUMENT_FORMATS = frozenset({"text", "markdown", "pdf"})
SAMPLE_FILES = 200
SAMPLE_RECORDS = 20
_PROBE = "\x00probe"


def structure(path: Path, fmt: str, *, records: int = SAMPLE_RECORDS) -> frozenset[str]:
    """Field names of the first ``records`` records of a file (document formats: just the format)."""
    if fmt in DOCUMENT_FORMATS:
        return frozenset({f"<{fmt}>"})
    ctx = ReadContext(path=path, rel=path.name, source=_PROBE, format=fmt)
    names: set[str] = set()
    items = (it for it in read_file(ctx) if isinstance(it, Record))
    for rec in itertools.islice(items, records):
        prefix = rec.source[len(_PROBE) :]
        names.update(f"{prefix}/{k}" for k in rec.values)
    return frozenset(names)


def similarity(structures: Sequence[frozenset[str]]) -> float:
    """Mean Jaccard index of each structure with the consensus of all of them (0.0 for no structures)."""
    if not structures:
        return 0.0
    counts = Counter(name for s in structures for name in s)
    consensus = {name for name, c in counts.items() if 2 * c >= len(structures)}
    total = 0.0
    for s in structures:
        union = s | consensus
        total += len(s & consensus) / len(union) if union else 0.0
    return total / len(structures)


def sample(paths: Sequence[Path], k: int = SAMPLE_FILES) -> list[Path]:
    """At most ``k`` paths, evenly spaced over the (sorted) input: deterministic."""
    if len(paths) <= k:
        return list(paths)
    step = len(paths) / k
    return [paths[int(i * step)] for i in range(k)]


def is_corpus(paths: Sequence[Path], fmt: str, *, min_files: int, threshold: float) -> bool:
    if len(paths) < min_files:
        return False
    if fmt in DOCUMENT_FORMATS:
        return True
    return similarity([structure(p, fmt) for p in sample(paths)]) >= threshold
