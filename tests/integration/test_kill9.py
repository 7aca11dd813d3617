"""kill -9 at random moments while a worker ingests Sakila: after each kill nothing the worker started lives on
(its profiling child dies with it), and after the last restart the graph, the vectors and the contract (identity
keys, foreign keys, record counts per source) equal a clean run's."""

from __future__ import annotations

import os
import random
import signal
import time
from pathlib import Path
from typing import Any

import pytest

from esc.contract.entities import entity_name
from tests.integration.truth import drop_pack, expected_counts, graph_counts, pack_truth, wipe_labels
from tests.integration.worker import Worker, poll
from tests.paths import RELATIONAL

pytestmark = pytest.mark.integration

SAKILA = RELATIONAL / "sakila"
KILLS = 10
ESSAYS = 300
"""Sakila has no prose (its descriptions are one short sentence), so the drop gets a source that has some."""


def drop_with_prose(into: Path) -> None:
    drop_pack(SAKILA, into)
    rows = "".join(
        f'{i},Essay {i},"Essay {i} walks through a quiet harbour town. It lingers on boats, nets and weather. '
        f'The third paragraph turns to the keeper of lighthouse number {i}."\n'
        for i in range(1, ESSAYS + 1)
    )
    tmp = into / ".essays.csv.part"
    tmp.write_text("essay_id,title,body\n" + rows, "utf-8")
    tmp.rename(into / "essays.csv")


def descendants(pid: int) -> set[int]:
    """Every live process below ``pid`` (from /proc: children of children too)."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if fields[0] != "Z":
                parents[int(entry.name)] = int(fields[1])
    out, todo = set(), [pid]
    while todo:
        p = todo.pop()
        kids = {c for c, pp in parents.items() if pp == p}
        out |= kids
        todo.extend(kids)
    return out


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def contract_facts(contract: Any) -> dict[str, Any]:
    """What a crash must not change: keys, foreign keys and the records counted per source."""
    return {
        "keys": {s: list(src.identity_key) for s, src in sorted(contract.sources.items())},
        "records": {s: src.records for s, src in sorted(contract.sources.items())},
        "foreign_keys": sorted((fk.from_.source, tuple(fk.from_.fields), fk.to.source, tuple(fk.to.fields))
                               for fk in contract.foreign_keys),
    }


def worker_contract(worker: Worker) -> dict[str, Any] | None:
    import json
    import urllib.request

    from esc.contract.model import Contract

    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{worker.web_port}/contract", timeout=10) as resp:
            return contract_facts(Contract.model_validate(json.load(resp)))
    except OSError:
        return None


def embedded_clean_run(tmp: Path) -> tuple[int, dict[str, Any]]:
    """The clean run: the same pack through the embedded runtime (the same stages): its vector count and its
    contract facts."""
    import asyncio

    from esc.agents.embedding import HashingEmbedder
    from esc.settings import load
    from esc.streams.runtime.inprocess import open_runtime

    drop = tmp / "clean-drop"
    drop.mkdir()
    drop_with_prose(drop)
    settings = load().replace(state_dir=tmp / "clean-state", app_id="clean", topic_prefix="clean")
    runtime, close = open_runtime(settings, drop, embedder=HashingEmbedder(), settle=0.0)
    try:
        asyncio.run(runtime.ingest_once())
        assert runtime.contract is not None
        return int(runtime.ingestor.vectors.count(runtime.ingestor.collection)), contract_facts(runtime.contract)
    finally:
        close()


def test_kill9_at_ten_random_moments_on_sakila_converges_to_a_clean_run(
    kafka_bootstrap: str, neo4j_driver: Any, weaviate_client: Any, tmp_path: Path
) -> None:
    from esc.agents.stores.weaviate import collection_name

    truth = pack_truth(SAKILA)
    want = expected_counts(truth)
    rng = random.Random(int(os.environ.get("ESC_TEST_SEED", "14")))
    worker = Worker(tmp_path / "w").start()
    ns = worker.label("")
    collection = collection_name(worker.app_id)
    moments: list[float] = []
    children: list[int] = []  # how many processes each killed worker had started
    try:
        drop_with_prose(worker.data)
        assert worker.proc is not None
        proc = worker.proc  # the first kill comes once profiling runs in its child (a worker's start can take longer
        # than the longest moment on a loaded machine, and then no kill would test the orphan check)
        poll(lambda: descendants(proc.pid), bool, 60, "the worker's profiling child", worker.log)
        for _ in range(KILLS):
            moments.append(round(rng.uniform(0.5, 8.0), 1))
            time.sleep(moments[-1])
            assert worker.proc is not None
            before = descendants(worker.proc.pid)
            children.append(len(before))
            os.kill(worker.proc.pid, signal.SIGKILL)  # the worker only, not its group: children must go by themselves
            worker.proc.wait(30)
            poll(lambda before=before: {p for p in before if alive(p)}, lambda left: not left, 15,
                 f"the killed worker's children {sorted(before)} gone", worker.log)  # fmt: skip
            partial = graph_counts(neo4j_driver, truth, ns)
            assert all(n <= want["nodes"][s][0] and unsourced == 0 for s, (n, unsourced, _) in partial["nodes"].items())
            worker.start()
        got = poll(lambda: graph_counts(neo4j_driver, truth, ns), lambda g: g == want, 300,
                   f"convergence after kills at {moments}", worker.log)  # fmt: skip
        assert got == want  # nothing lost, nothing duplicated
        assert any(children), f"no kill found a child process to orphan: {children}"
        clean, facts = embedded_clean_run(tmp_path)
        assert clean == ESSAYS  # one text object per essay
        contract = poll(lambda: worker_contract(worker), lambda c: c == facts, 120,
                        f"the contract of a clean run after kills at {moments}", worker.log)  # fmt: skip
        assert contract == facts  # keys, foreign keys and row counts as a clean run's
        vectors = poll(lambda: weaviate_client.collections.get(collection).aggregate.over_all(total_count=True)
                       .total_count, lambda n: n == clean, 180, f"{clean} vectors like a clean run", worker.log)  # fmt: skip
        assert vectors == clean
        print(f"\nkills at {moments} s after each start (children {children}); {sum(v[0] for v in want['nodes'].values())} nodes, "
              f"{vectors} vectors, keys, foreign keys and row counts as a clean run")
    finally:
        assert worker.proc is not None
        pid = worker.proc.pid
        left = descendants(pid)
        worker.stop()
        wipe_labels(neo4j_driver, [entity_name(s) for s in [*truth["sources"], "essays"]], [*truth["sources"], "essays"], ns)
        if weaviate_client.collections.exists(collection):
            weaviate_client.collections.delete(collection)
    assert not {p for p in left if alive(p)}, "processes outlived the stopped worker"
