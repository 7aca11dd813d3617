"""Concurrent statements for a graph batch that spans many entity types (used by ``agents/stores/neo4j.py``).

Neo4j plans every statement text it has not seen before, and a statement names its labels, so each entity type
costs a plan (~50-90 ms on a loaded 2-core machine, measured) for its uniqueness constraint and another for its
upsert, however few its rows: a backfill of a folder of 500 small sources spent over a minute on 1,000 of them,
one after another, while the worker's own CPU idled. Statements of different entity types are independent, so
they run on a few sessions at once (the server plans them on its own threads).

What runs concurrently never writes the same node: the statements are put into *lanes*, one lane per set of
statements linked by a shared SourceRecord or label (run in order within the lane), and a statement that writes
edges to other labels' nodes (folded edges, possibly stubs) runs after every lane, one at a time. So the graph is
the one the sequential order writes (MERGE is order-independent: a stub written first is filled in by its
record's statement, whichever comes first).

A statement with folded edges is itself one transaction on one server thread, and in a large load it is most of
the work (every row of a fact table with its foreign keys). ``split_rows`` puts its rows into lanes too: rows of
one node or SourceRecord together, and rows linking to the same end of the densest edge kinds together, so the
lanes lock few nodes in common; a deadlock on the rest is retried by the store (TPC-H SF 0.1, the first 200,000
line items after their targets, the same-graph statement, 5,000 rows a batch: 3,600 rows/s in one transaction,
4,297 in two lanes kept apart by the densest kind with one deadlock; split in halves with no regard to the ends,
2,603 with 29 deadlocks, each retried after the driver's 1 s backoff).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Hashable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar, cast

WRITERS = 2
"""Statements at most in flight at once (sessions of the driver's pool): the server's two cores. With 4, a Neo4j
outage during ingest logged 92 lines (tests/integration/test_outages.py allows 20); with 2 it logged 19, 4 of them
blips that agents/stores/resilient.py no longer logs (12). The hostile 500-sources case through Faust: ~38 s with 1
lane, 31.7-33.1 s with 2 (quiet machine, clean schema)."""

T = TypeVar("T")


def _roots(n: int, shared: Iterable[tuple[int, Hashable]]) -> list[int]:
    """Each of ``n`` items' group (its smallest member) when items sharing a thing are grouped: ``shared`` holds
    ``(item, thing)`` pairs."""
    parent = list(range(n))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    owner: dict[Hashable, int] = {}
    for i, thing in shared:
        j = owner.setdefault(thing, i)
        if j != i:
            a, b = root(i), root(j)
            if a != b:
                parent[max(a, b)] = min(a, b)
    return [root(i) for i in range(n)]


def lanes(touches: Sequence[set[Hashable]]) -> list[list[int]]:
    """Indices of statements grouped so that no two lanes share anything a statement ``touches`` (labels,
    SourceRecord ids); each lane in the statements' order, lanes in the order of their first statement."""
    out: dict[int, list[int]] = {}
    for i, r in enumerate(_roots(len(touches), ((i, t) for i, things in enumerate(touches) for t in things))):
        out.setdefault(r, []).append(i)
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


SPLIT_MIN_ROWS = 1000
"""A statement with folded edges is split across the writers only from this many rows (below, one transaction
costs less than two)."""
SPLIT_MAX_SHARE = 0.6
"""A split is kept only if no lane would hold more than this share of the rows (else one transaction)."""


def _components(n: int, links: Sequence[Sequence[Hashable]]) -> tuple[list[int], Counter[int]]:
    """Rows ``0..n-1`` grouped by a shared value in any of ``links`` (one sequence of values per kind, a value per
    row, ``None`` for none): each row's group, and the groups' sizes."""
    roots = _roots(n, ((i, (k, v)) for k, values in enumerate(links) for i, v in enumerate(values) if v is not None))
    return roots, Counter(roots)


def _frozen(v: object) -> Hashable:
    return tuple(v) if isinstance(v, list) else v  # type: ignore[return-value]


def split_rows(rows: list[dict[str, Any]], folded: int, parts: int = WRITERS,
               min_rows: int = SPLIT_MIN_ROWS) -> list[list[dict[str, Any]]]:  # fmt: skip
    """The rows of one entity statement with ``folded`` edge kinds (``row["e"][j]``: the other end's key, or None)
    in up to ``parts`` lanes that can be written concurrently, each lane in the rows' order.

    Two lanes never share a node of the statement's own (its key) or a SourceRecord (``sid``): those rows' writes
    keep their order. The other ends are shared between lanes unless kept together: every edge MERGEd onto a node
    locks it, and two transactions adding edges to the same nodes in different orders deadlock (Neo4j aborts one).
    So the rows are also kept together by the other ends of the densest edge kinds (fewest distinct ends in the
    batch, the most rows per end), as many kinds as still leave lanes of at most ``SPLIT_MAX_SHARE`` of the rows;
    the sparser kinds' ends are rarely shared (a deadlock there is retried). One lane when splitting does not pay:
    few rows, or the densest kind's ends too few to keep apart (every row linking one of a handful of nodes)."""
    n = len(rows)
    if n < min_rows or parts <= 1:
        return [rows]
    base: list[list[Hashable]] = [[_frozen(r["key"]) for r in rows], [r["sid"] for r in rows]]
    kinds = [vals for vals in ([_frozen(r["e"][j]) for r in rows] for j in range(folded)) if any(v is not None for v in vals)]
    kinds.sort(key=lambda vals: len(set(vals) - {None}))  # densest first: fewest distinct ends
    links = base
    roots, sizes = _components(n, links)
    for vals in kinds:
        trial = _components(n, [*links, vals])
        if max(trial[1].values()) > SPLIT_MAX_SHARE * n:
            break
        links, (roots, sizes) = [*links, vals], trial
    if max(sizes.values()) > SPLIT_MAX_SHARE * n or (kinds and len(links) == len(base)):
        return [rows]  # lanes would share the nodes locked most often (the densest kind's ends): no gain
    lane_of: dict[int, int] = {}
    load = [0] * parts
    for r in sorted(sizes, key=lambda r: -sizes[r]):  # largest first onto the lightest lane
        k = load.index(min(load))
        lane_of[r] = k
        load[k] += sizes[r]
    out: list[list[dict[str, Any]]] = [[] for _ in range(parts)]
    for row, r in zip(rows, roots, strict=True):
        out[lane_of[r]].append(row)
    return [lane for lane in out if lane]
