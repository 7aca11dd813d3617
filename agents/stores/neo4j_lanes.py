"""Concurrent statements for a graph batch that spans many entity types (used by ``agents/stores/neo4j.py``).

Neo4j plans every statement text it has not seen before, and a statement names its labels, so each entity type
costs a plan (~50-90 ms on a loaded 2-core machine, measured) for its uniqueness constraint and another for its
upsert, however few its rows: a backfill of a folder of 500 small sources spent over a minute on 1,000 of them,
one after another, while the worker's own CPU idled. Statements of different entity types are independent, so
they run on a few sessions at once (the server plans them on its own threads).

What runs concurrently never touches the same node: the statements are put into *lanes*, one lane per set of
statements linked by a shared SourceRecord or label (run in order within the lane), and a statement that writes
edges to other labels' nodes (folded edges, possibly stubs) runs after every lane, alone. So no two concurrent
transactions lock the same node, and the graph is the one the sequential order writes (MERGE is order-independent:
a stub written first is filled in by its record's statement, whichever comes first).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar, cast

WRITERS = 2
"""Statements at most in flight at once (sessions of the driver's pool): the server's two cores. With 4, a Neo4j
outage during ingest logged 92 lines (tests/integration/test_outages.py allows 20); with 2 it logged 19, 4 of them
blips that agents/stores/resilient.py no longer logs (12). The hostile 500-sources case through Faust: ~38 s with 1
lane, 31.7-33.1 s with 2 (quiet machine, clean schema)."""

T = TypeVar("T")


def lanes(touches: Sequence[set[Hashable]]) -> list[list[int]]:
    """Indices of statements grouped so that no two lanes share anything a statement ``touches`` (labels,
    SourceRecord ids); each lane in the statements' order, lanes in the order of their first statement."""
    parent = list(range(len(touches)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    owner: dict[Hashable, int] = {}
    for i, things in enumerate(touches):
        for thing in things:
            j = owner.setdefault(thing, i)
            if j != i:
                a, b = root(i), root(j)
                if a != b:
                    parent[max(a, b)] = min(a, b)
    out: dict[int, list[int]] = {}
    for i in range(len(touches)):
        out.setdefault(root(i), []).append(i)
    return list(out.values())


def run_lanes(jobs: Sequence[Callable[[], T]], touches: Sequence[set[Hashable]], writers: int = WRITERS) -> list[T]:
    """Run ``jobs`` (results in their order): lanes of independent jobs concurrently, each lane's in order. The
    first error is raised once every lane stopped (the caller retries the batch; its writes are idempotent)."""
    groups = lanes(touches)
    results: list[T | None] = [None] * len(jobs)

    def run(lane: list[int]) -> None:
        for i in lane:
            results[i] = jobs[i]()

    if len(groups) <= 1 or writers <= 1:
        for lane in groups:
            run(lane)
    else:
        with ThreadPoolExecutor(min(writers, len(groups)), thread_name_prefix="neo4j-lane") as pool:
            futures = [pool.submit(run, lane) for lane in groups]
            errors = [f.exception() for f in futures]
        first = next((e for e in errors if e is not None), None)
        if first is not None:
            raise first
    return cast(list[T], results)  # every job ran
