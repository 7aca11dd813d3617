"""``bench/ingest.py``: the worker process (``esc up`` in its own process group) and what /proc says about
processes (peak RSS, CPU seconds, of the worker's tree and of the stack's servers)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

from bench._ingest_names import SERVICES
from esc.settings import Settings

# ------------------------------------------------------------------------------------------------ processes


def _status(pid: int) -> dict[str, str]:
    try:
        text = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return {}
    return dict(line.split(":", 1) for line in text.splitlines() if ":" in line)


def _kib(value: str | None) -> int:
    return int(value.split()[0]) if value else 0


def process_tree(pid: int) -> list[int]:
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        for task in Path(f"/proc/{p}/task").glob("*/children") if Path(f"/proc/{p}").exists() else []:
            try:
                todo += [int(c) for c in task.read_text().split()]
            except OSError:
                pass
    return out


def peak_rss(pid: int) -> dict[str, Any]:
    """VmHWM (peak RSS) of ``pid`` and of each live descendant, in MiB; ``tree`` is their sum."""
    procs = {p: _kib(_status(p).get("VmHWM")) / 1024 for p in process_tree(pid)}
    procs = {p: round(m, 1) for p, m in procs.items() if m}
    return {"pid": pid, "peak_mib": procs.get(pid, 0.0), "tree_peak_mib": round(sum(procs.values()), 1),
            "processes": len(procs)}


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of ``pid`` and its live descendants (threads included)."""
    tick = os.sysconf("SC_CLK_TCK")
    out = 0.0
    for p in process_tree(pid):
        try:
            fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        out += (int(fields[11]) + int(fields[12])) / tick  # utime, stime (fields 14 and 15 of stat)
    return out


def cpu_snapshot(worker_pid: int | None, stack_state: Path) -> dict[str, float]:
    """CPU seconds so far of the worker and of each server (for where a phase's CPU went)."""
    out = {"worker": cpu_seconds(worker_pid)} if worker_pid else {}
    for svc in SERVICES:
        try:
            out[svc] = cpu_seconds(int((stack_state / svc / f"{svc}.pid").read_text().split()[0]))
        except (OSError, ValueError, IndexError):
            pass
    return out


def server_rss(stack_state: Path) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for svc in SERVICES:
        pid_file = stack_state / svc / f"{svc}.pid"
        try:
            out[svc] = peak_rss(int(pid_file.read_text().split()[0]))
        except (OSError, ValueError, IndexError):
            out[svc] = None
    return out


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Worker:
    """``esc up --data DIR`` in its own process group, isolated by app id, topic prefix, state dir and port."""

    def __init__(self, run_id: str, root: Path, profile: Path | None = None) -> None:
        self.root = root
        self.profile = profile
        self.data = root / "drop"
        self.state = root / "state"
        self.log = root / "worker.log"
        self.port = free_port()
        self.env = {
            **os.environ,
            "ESC_APP_ID": run_id,
            "ESC_TOPIC_PREFIX": run_id,
            "ESC_STATE_DIR": str(self.state),
            "ESC_WEB_PORT": str(self.port),
        }
        self.settings = Settings(
            state_dir=self.state, topic_prefix=run_id, app_id=run_id, web_port=self.port
        )
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        self.data.mkdir(parents=True, exist_ok=True)
        esc = str(Path(sys.executable).parent / "esc")
        cmd = [esc, "up", "--data", str(self.data)]
        if self.profile is not None:  # cProfile writes the file when the worker exits after SIGTERM
            cmd = [sys.executable, "-m", "cProfile", "-o", str(self.profile), *cmd]
        with self.log.open("wb") as log:
            self.proc = subprocess.Popen(
                cmd, env=self.env, stdout=log, stderr=subprocess.STDOUT,
                cwd=str(self.root), start_new_session=True,
            )

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def get(self, path: str, timeout: float = 5.0) -> bytes:
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}{path}", timeout=timeout) as resp:
            return bytes(resp.read())

    def wait_ready(self, timeout: float) -> None:
        """Until ``/readyz`` answers 200: the worker reads records (the Faust worker's consumer joined its group and
        recovered its tables, ~5 s after the process answers ``/healthz``), so a load's clock starts on a running
        service, as the baselines' starts on a connected writer."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not self.alive():
                raise RuntimeError(f"worker exited (code {self.proc and self.proc.returncode})\n{self.tail()}")
            try:
                self.get("/readyz", timeout=1.0)
                return
            except OSError:  # not answering yet, or 503 (urllib's HTTPError)
                time.sleep(0.5)
        raise TimeoutError(f"worker /readyz not 200 after {timeout:.0f}s\n{self.tail()}")

    def metrics(self) -> dict[str, Any]:
        from prometheus_client.parser import text_string_to_metric_families

        out: dict[str, Any] = {}
        for fam in text_string_to_metric_families(self.get("/metrics").decode()):
            out[fam.name] = [(s.name, dict(s.labels), s.value) for s in fam.samples]
        return out

    def tail(self, lines: int = 40) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no worker log)"

    def stop(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        for sig, wait in ((signal.SIGTERM, 20.0), (signal.SIGKILL, 5.0)):
            try:
                os.killpg(self.proc.pid, sig)
            except ProcessLookupError:
                return
            try:
                self.proc.wait(timeout=wait)
                return
            except subprocess.TimeoutExpired:
                continue
