"""``bench/hostile.py --runtime faust``: one hostile case alone through a Kafka worker (``esc up`` on the stack).

The case's folder (its files and the good file beside them, as ``tests.hostile.runner.build_drop`` writes them) is
in the drop folder before the worker starts; the time is from starting the worker until the good file's records
are all in Neo4j (the worker scans the folder at start; files of a folder are one scan, so the good file lands
with the case's sources, once the contract covers them). Startup is included: the one-good-file baseline, timed
the same way, is what a case costs beyond it. The worker's app id, topics and graph are its own and are wiped
afterwards.
"""

from __future__ import annotations

import asyncio
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.many_sources import _drop_topics, _group_cpu  # the same measurements as the many-sources bench
from esc.contract.entities import entity_name
from tests.hostile import Case, Env
from tests.hostile.model import csv_text, write
from tests.hostile.runner import build_drop, good_rows
from tests.integration.worker import wipe_graph


def run_case(case: Case | None, driver: Any, bootstrap: str, timeout: float = 300.0) -> dict[str, Any]:
    """Seconds (and the worker's CPU seconds) until the good file beside ``case`` is in the graph; ``None``: the
    baseline, a folder holding only one good 10-row file."""
    from tests.integration.worker import Worker

    root = Path(tempfile.mkdtemp(prefix="hostile-faust-"))
    worker = Worker(root)
    try:
        if case is None:
            write(worker.data, "good.csv", csv_text("good", 10))
            label, rows = worker.label(entity_name("good")), 10
        else:
            build_drop([case], worker.data, Env(root / "outside"))
            label, rows = worker.label(entity_name(f"good_{case.id}")), good_rows(case)
        t0 = time.perf_counter()
        worker.start()
        assert worker.proc is not None
        landed = 0
        while landed != rows:
            if time.perf_counter() - t0 > timeout:
                return {"error": f"{landed} of {rows} good records after {timeout:.0f} s"}
            time.sleep(0.25)
            worker.health()  # fails if the worker exited
            landed = int(driver.execute_query(f"MATCH (n:`{label}`) RETURN count(n) AS c").records[0]["c"])
        seconds = time.perf_counter() - t0
        return {"seconds": round(seconds, 2), "cpu": round(_group_cpu(worker.proc.pid), 1)}
    finally:
        worker.stop()
        wipe_graph(driver, worker.label(""))  # nodes and constraints: leftovers slow the next run's constraints
        asyncio.run(_drop_topics(bootstrap, worker.app_id))
        shutil.rmtree(root, ignore_errors=True)
