"""``bench/qa.py --stack``: each pack through the real stack, the way a user runs it. A Faust worker (``esc up
--data DIR``, isolated by app id, topic prefix, state folder and web port) watches an empty folder; the pack's
files are dropped into it; once Neo4j holds every record of every source (and the worker reports nothing deferred
and no backfill running), each question is POSTed to the worker's ``/v1/ask``. The graph is wiped before each
pack, so this needs ``--reset`` and must never point at a stack others use.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

INGEST_TIMEOUT_S = 900.0
STABLE_S = 5.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _health(port: int) -> dict[str, Any]:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=5) as resp:
        return dict(json.load(resp))


def _wait(fn: Callable[[], Any], ok: Callable[[Any], bool], timeout: float, what: str, log: Path) -> Any:
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        try:
            last = fn()
            if ok(last):
                return last
        except Exception as exc:  # the worker or the store may not be up yet
            last = exc
        time.sleep(1.0)
    tail = log.read_text("utf-8", errors="replace")[-4000:] if log.exists() else ""
    raise SystemExit(f"--stack: timed out after {timeout:.0f} s waiting for {what}; last={last!r}\n{tail}")


class StackPack:
    """One pack ingested by a real worker; ``url`` answers POST /v1/ask while the context is open."""

    def __init__(self, name: str, drop: Path) -> None:
        self.name = name
        self.drop = drop
        self.tmp = Path(tempfile.mkdtemp(prefix=f"qa-stack-{name}-"))
        self.run = f"qa{name[:6]}{uuid.uuid4().hex[:6]}"
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = self.tmp / "worker.log"
        self.proc: subprocess.Popen[bytes] | None = None
        self.ingest_s = 0.0

    def __enter__(self) -> StackPack:
        from esc.agents.stores.neo4j import Neo4jGraphStore, label_namespace
        from esc.contract.evolve import evolve
        from esc.settings import Settings
        from esc.streams.discover import discover

        store = Neo4jGraphStore(Settings().neo4j_uri, namespace=label_namespace(self.run))  # the worker's graph
        try:
            _wipe(store)
            contract = evolve(None, discover(self.drop).contract)[0]
            want = {e.name: contract.sources[e.source].records for e in contract.entities if e.source in contract.sources}
            data = self.tmp / "drop"
            data.mkdir()
            env = dict(os.environ)
            env.update(ESC_APP_ID=self.run, ESC_TOPIC_PREFIX=self.run, ESC_STATE_DIR=str(self.tmp / "state"),
                       ESC_WEB_PORT=str(self.port))  # fmt: skip
            with self.log.open("ab") as out:
                self.proc = subprocess.Popen(
                    [sys.executable, "-m", "esc.cli", "up", "--data", str(data)],
                    env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
                )  # fmt: skip
            _wait(lambda: _health(self.port), lambda h: h.get("ok") is True, 120, "the worker's /healthz", self.log)
            started = time.perf_counter()
            for f in sorted(self.drop.iterdir()):
                if f.is_file():
                    part = data / f".{f.name}.part"
                    shutil.copyfile(f, part)
                    part.rename(data / f.name)
            stable: list[float] = []

            def settled() -> bool:
                got = {label: _count(store, label) for label in want}
                h = _health(self.port)
                quiet = got == want and not h.get("deferred") and not _running(h.get("backfill"))
                now = time.monotonic()
                if not quiet:
                    stable.clear()
                    return False
                stable.append(now)
                return now - stable[0] >= STABLE_S

            _wait(settled, bool, INGEST_TIMEOUT_S, f"{self.name} in Neo4j ({sum(want.values())} records)", self.log)
            self.ingest_s = time.perf_counter() - started
        except BaseException:
            store.close()
            self.__exit__(None, None, None)
            raise
        store.close()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, 15)
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, 9)
                self.proc.wait()
        shutil.rmtree(self.tmp, ignore_errors=True)


def _running(backfill: Any) -> bool:
    """Is a backfill pending (the worker's /healthz ``backfill``: source -> {version, done, total})?"""
    return bool(backfill)


def _count(store: Any, label: str) -> int:
    from esc.agents.stores.cypher import ident

    rows = store.read(f"MATCH (n:{ident(store.namespace + label)}) WHERE NOT coalesce(n._stub, false) RETURN count(n) AS c")
    return int(rows[0]["c"]) if rows else 0


def _wipe(store: Any) -> None:
    driver = store._driver  # the bench owns this graph
    while True:
        records, _, _ = driver.execute_query("MATCH (n) WITH n LIMIT 20000 DETACH DELETE n RETURN count(*) AS c")
        if not records or records[0]["c"] == 0:
            break
