"""A real ESC worker (`esc up --data DIR`) as a subprocess, isolated by app id, topic prefix and state dir."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest


def poll(fn: Callable[[], Any], ok: Callable[[Any], bool], timeout: float, what: str, log: Path | None = None) -> Any:
    """Call ``fn`` until ``ok(result)``; fail with the worker log tail on timeout. Never a fixed sleep."""
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        try:
            last = fn()
            if ok(last):
                return last
        except Exception as exc:  # the store may not know our labels yet
            last = exc
        time.sleep(0.5)
    pytest.fail(f"timed out after {timeout}s waiting for {what}; last={last!r}\n{stuck_report(log)}")


def stuck_report(log: Path | None) -> str:
    """What a timed-out test shows of its workers: each live worker's log before the stack dump (its last lines)
    and, from the dump, where each thread and asyncio task waits (file and line, without mode's locals, which
    filled the whole tail before). ``log``: a worker's log to show even when it is not running any more."""
    logs = [w.log for w in _ACTIVE if w.proc is not None and w.proc.poll() is None]
    sizes = {path: _size(path) for path in logs}
    dump_stacks()  # where live workers wait: each writes its threads' and tasks' stacks into its log
    if log is not None and log not in sizes:
        logs.insert(0, log)
    parts = []
    for path in logs:
        text = path.read_text("utf-8", errors="replace") if path.exists() else ""
        cut = sizes.get(path, len(text.encode()))
        raw = text.encode()
        before, dump = raw[:cut].decode(errors="replace"), raw[cut:].decode(errors="replace")
        parts.append(f"--- {path} (last lines) ---\n{before[-6000:]}")
        if dump:
            parts.append(f"--- {path}: where it waits ---\n{wait_points(dump)[-6000:]}")
    return "\n".join(parts) if parts else "(no worker log)"


def _size(path: Path) -> int:
    return path.stat().st_size if path.exists() else 0


def wait_points(dump: str) -> str:
    """A stack dump (faulthandler's threads, mode's asyncio tasks with their locals) cut to a header per stack and
    its frames' ``File ..., line ..., in ...`` lines."""
    keep: list[str] = []
    chains: list[list[str]] = []  # the worker's await chains (await_chains.py): last, those through ESC's code
    chain: list[str] | None = None  # the one being read
    for line in dump.splitlines():
        s = line.strip()
        if s.startswith(("Await chain of ", "Consumer")):  # what the worker adds to the dump (await_chains.py)
            chain = [s[:200]]
            chains.append(chain)
        elif s.startswith(("Thread 0x", "Current thread 0x", "Stack for <Task")):
            chain = None
            keep.append(s[:200])
        elif s.startswith("File \"") and ", line " in s:
            (keep if chain is None else chain).append("  " + s[:200])
    ours = [c for c in chains if c[0].startswith("Consumer") or any("/esc/" in line for line in c[1:])]
    return "\n".join(keep + [line for c in ours for line in c])


_ACTIVE: list[Worker] = []
CREATED: list[Worker] = []  # every worker made, for the graph wipe after each test (conftest.py)


def drop_schema(driver: Any, prefix: str) -> int:
    """Drop the constraints, then the indexes left (a chunk label's record index), of labels starting with
    ``prefix``; returns how many. Left behind, each makes Neo4j's next schema change slower (measured: ~11 ms a
    constraint on an empty schema, ~30-45 ms with 3,000-6,000 left by earlier runs)."""
    dropped = 0
    for kind, shown in (("CONSTRAINT", "CONSTRAINTS"), ("INDEX", "INDEXES")):  # constraints own their indexes
        for r in driver.execute_query(f"SHOW {shown} YIELD name, labelsOrTypes RETURN name, labelsOrTypes").records:
            if any(str(label).startswith(prefix) for label in r["labelsOrTypes"] or []):
                driver.execute_query(f"DROP {kind} $name IF EXISTS", name=r["name"])
                dropped += 1
    return dropped


def wipe_graph(driver: Any, namespace: str) -> int:
    """Delete the nodes of one app's graph (labels starting with ``namespace``) and drop its constraints and
    indexes (``drop_schema``); returns how many of those were dropped. Deleting the nodes alone leaves a uniqueness
    constraint per label behind, so a run after many others measured the leftovers."""
    if not namespace:
        raise ValueError("wipe_graph needs an app's label namespace: an empty one would match every label")
    with driver.session() as session:
        session.run(
            "MATCH (n) WHERE any(l IN labels(n) WHERE l STARTS WITH $ns) CALL (n) { DETACH DELETE n } "
            "IN TRANSACTIONS OF 10000 ROWS",
            ns=namespace,
        ).consume()
    return drop_schema(driver, namespace)


def dump_stacks() -> None:
    """Ask every running worker for its thread stacks (SIGUSR1, see esc/commands/run.py)."""
    for w in _ACTIVE:
        if w.proc is not None and w.proc.poll() is None:
            os.kill(w.proc.pid, signal.SIGUSR1)
    if _ACTIVE:
        time.sleep(2)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Worker:
    """Start/stop/kill an `esc up` worker; restarting keeps app id, topics and state (like a real restart)."""

    def __init__(self, root: Path, data: Path | None = None, run: str | None = None) -> None:
        self.run = run or uuid.uuid4().hex[:8]
        self.root = root
        self.data = data or root / "drop"
        self.data.mkdir(parents=True, exist_ok=True)
        self.app_id = f"t{self.run}"
        self.env = dict(os.environ)
        self.env.update(ESC_APP_ID=self.app_id, ESC_TOPIC_PREFIX=self.app_id, ESC_STATE_DIR=str(root / "state"))
        self.web_port = free_port()
        self.env["ESC_WEB_PORT"] = str(self.web_port)
        self.log = root / "worker.log"
        self.proc: subprocess.Popen[bytes] | None = None
        CREATED.append(self)

    def start(self) -> Worker:
        with self.log.open("ab") as out:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "esc.cli", "up", "--data", str(self.data)],
                env=self.env,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        _ACTIVE.append(self)
        try:
            poll(self.health, lambda h: h.get("ok") is True, 90, "the worker's /healthz", self.log)
        except BaseException:
            self.stop()  # never leave a half-started worker behind
            raise
        return self

    def health(self) -> dict[str, Any]:
        assert self.proc is not None
        if self.proc.poll() is not None:
            tail = self.log.read_text("utf-8", errors="replace")[-3000:]
            pytest.fail(f"worker exited with {self.proc.returncode}\n{tail}")
        with urllib.request.urlopen(f"http://127.0.0.1:{self.web_port}/healthz", timeout=3) as resp:
            return dict(json.load(resp))

    def stop(self, sig: int = signal.SIGTERM) -> None:
        if self in _ACTIVE:
            _ACTIVE.remove(self)
        if self.proc is None or self.proc.poll() is not None:
            return
        os.killpg(self.proc.pid, sig)
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()

    def kill(self) -> None:
        self.stop(signal.SIGKILL)

    def topic(self, name: str) -> str:
        return f"{self.app_id}.{name}"

    def label(self, name: str) -> str:
        """The stored Neo4j label of a contract label (or ``SourceRecord``) in this worker's graph: its app id's
        namespace, ``agents.stores.neo4j.label_namespace``."""
        from esc.agents.stores.neo4j import label_namespace

        return label_namespace(self.app_id) + name
