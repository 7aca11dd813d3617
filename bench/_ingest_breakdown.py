"""Where an ingest's time goes, from a py-spy raw profile (``py-spy record -f raw``: one line per distinct stack,
``frame;frame;... count``): samples per stage, every Python thread counted (the reader and the backfill run on
threads beside the event loop), idle waits apart.

    .venv/bin/python bench/_ingest_breakdown.py PROFILE.raw

A stack belongs to the first stage whose pattern matches it, in the order below (the most specific first: an
embedding under a store write is vectors, a JSON dump under a state save is contract state).
"""

from __future__ import annotations

import re
import sys
from collections import Counter
from pathlib import Path

STAGES: list[tuple[str, str]] = [
    ("vectors (embed + vector upsert)", r"TextWriter\.|embedding_\w+\.py|embedding_base\.py|embedded/vectors\.py"),
    ("contract state save", r"_save_state|state_changes|state_saved"),
    ("profile", r"profile_messages|profile_batch|profiler\.py|contract/profile"),
    ("contract agent", r"on_updates|contract_agent|ContractWriter"),
    ("seen index", r"first_sightings|seen\.py"),
    ("plan (extract)", r"Ingestor\.prepare|extractors\.py|_prepare_parts|record_check"),
    ("store writes (graph, chunks)", r"embedded/graph\.py|embedded/chunks\.py|embedded/ids\.py|Ingestor\.apply|_retract"),
    ("decode (read, envelopes, log)", r"readers/|file_watcher|emission_for|split_messages|envelope_or_dead|"
                                      r"model_validate_json|_parse_all|RecordLog|inprocess_bus|parse \("),
    ("grounding, examples, mentions", r"grounding|examples_runner|mention"),
    ("imports and start-up", r"_find_and_load|importlib"),
]
IDLE = re.compile(r"\b(select|poll|epoll|wait|_wait_for_tstate_lock|acquire|sleep)\b|_worker \(\S*thread\.py:81\)")


def breakdown(path: Path) -> tuple[Counter[str], int, int]:
    """(samples per stage, busy samples, idle samples)."""
    out: Counter[str] = Counter()
    busy = idle = 0
    for line in path.read_text("utf-8", errors="replace").splitlines():
        stack, _, n = line.rpartition(" ")
        if not n.isdigit():
            continue
        count = int(n)
        leaf = stack.rsplit(";", 1)[-1]
        if IDLE.search(leaf):
            idle += count
            continue
        busy += count
        out[next((name for name, rx in STAGES if re.search(rx, stack)), "other")] += count
    return out, busy, idle


def render(path: Path, rate: int = 50) -> str:
    stages, busy, idle = breakdown(path)
    lines = [f"{path.name}: {busy / rate:.0f} s busy (all threads; {idle / rate:.0f} s idle waits left out)"]
    for name, n in stages.most_common():
        lines.append(f"  {name:34s} {n / rate:7.1f} s  {100 * n / max(busy, 1):5.1f} %")
    return "\n".join(lines)


if __name__ == "__main__":
    for arg in sys.argv[1:]:
        print(render(Path(arg)))
