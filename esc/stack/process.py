"""Detached service processes: start with a pid file and a log file, stop by process group, wait, tail logs."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path

from esc.contract.errors import EscError


class ProcessDied(EscError, RuntimeError):
    """The process exited while we were waiting for it to become ready."""


class WaitTimeout(EscError, RuntimeError):
    """A readiness condition did not hold within its deadline."""


def read_pid(pid_file: Path) -> int | None:
    try:
        text = pid_file.read_text().strip()
    except FileNotFoundError:
        return None
    return int(text) if text.isdigit() else None


def pid_alive(pid: int | None) -> bool:
    """True when ``pid`` exists and is not a zombie (a zombie leader whose other threads still run is alive)."""
    if pid is None or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True  # no procfs: trust kill(0)
    # Field 3 (after the parenthesised command name) is the state; Z = zombie, X = dead.
    state = stat.rsplit(")", 1)[-1].split()[0]
    if state not in ("Z", "X"):
        return True
    # A leader thread that exited first is a zombie while the process's other threads still run, holding its
    # open files and listening sockets (a stopped server's port was still open: a full run failed on it).
    try:
        return any(task != str(pid) for task in os.listdir(f"/proc/{pid}/task"))
    except OSError:
        return False


def port_open(host: str, port: int, timeout: float = 0.5) -> bool:
    """True when something listens on ``host:port``. A connect to a free port in the ephemeral range can pick that
    same port as its source and connect to itself (TCP simultaneous open): that is not a listener."""
    try:
        with socket.create_connection((host, port), timeout=timeout) as sock:
            return bool(sock.getsockname() != sock.getpeername())
    except OSError:
        return False


def http_ok(url: str, timeout_s: float = 2.0) -> bool:
    """GET ``url``; True on a 2xx answer (errors propagate so callers can report them)."""
    with urllib.request.urlopen(url, timeout=timeout_s) as response:
        return 200 <= int(response.status) < 300


def rotate_log(log_file: Path) -> None:
    """Keep the previous run's log as ``<name>.prev`` so a crash before a restart stays readable."""
    if log_file.exists() and log_file.stat().st_size > 0:
        log_file.replace(log_file.with_name(log_file.name + ".prev"))


def start_detached(
    argv: Sequence[str],
    *,
    log_file: Path,
    pid_file: Path,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
) -> subprocess.Popen[bytes]:
    """Start ``argv`` in its own session (survives the CLI, gets its own process group), output to ``log_file``."""
    log_file.parent.mkdir(parents=True, exist_ok=True)
    rotate_log(log_file)
    with log_file.open("ab") as log:
        stamp = datetime.now(UTC).isoformat(timespec="seconds")
        log.write(f"# esc stack {stamp}: {' '.join(argv)}\n".encode())
        log.flush()
        proc = subprocess.Popen(
            list(argv),
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            cwd=str(cwd) if cwd else None,
            env=dict(env) if env is not None else None,
            start_new_session=True,
            close_fds=True,
        )
    pid_file.write_text(f"{proc.pid}\n")
    return proc


def stop_pid(pid: int, *, timeout: float = 30.0, on_kill: Callable[[], None] | None = None) -> bool:
    """SIGTERM the process group led by ``pid``, wait up to ``timeout``, then SIGKILL. True when it was running."""
    if not pid_alive(pid):
        return False
    _signal_group(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not pid_alive(pid):
            _reap(pid)
            return True
        time.sleep(0.1)
    if on_kill is not None:
        on_kill()
    _signal_group(pid, signal.SIGKILL)
    deadline = time.monotonic() + 10.0
    while pid_alive(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    _reap(pid)
    return True


def _signal_group(pid: int, sig: signal.Signals) -> None:
    try:
        os.killpg(pid, sig)  # started with start_new_session: the group id is the pid
    except ProcessLookupError:
        return
    except PermissionError:
        os.kill(pid, sig)


def _reap(pid: int) -> None:
    """Collect the exit status when the process is our own child (started in this CLI run)."""
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        pass


def tail(path: Path, lines: int = 20) -> str:
    """The last ``lines`` lines of ``path`` ('' when missing), read from the end so big logs stay cheap."""
    try:
        with path.open("rb") as fh:
            fh.seek(0, os.SEEK_END)
            size = fh.tell()
            block = min(size, max(4096, lines * 400))
            fh.seek(size - block)
            data = fh.read()
    except FileNotFoundError:
        return ""
    text = data.decode("utf-8", errors="replace").splitlines()
    return "\n".join(text[-lines:])


def log_contains(path: Path, needle: str) -> bool:
    try:
        with path.open("rb") as fh:
            return needle.encode() in fh.read()
    except FileNotFoundError:
        return False


def wait_until(
    check: Callable[[], bool],
    *,
    timeout: float,
    what: str,
    proc: subprocess.Popen[bytes] | None = None,
    interval: float = 0.25,
) -> float:
    """Poll ``check`` until it holds; raise ProcessDied if ``proc`` exits first, WaitTimeout at the deadline.

    Returns the seconds waited. Exceptions raised by ``check`` count as "not yet".
    """
    started = time.monotonic()
    deadline = started + timeout
    last_error = ""
    while True:
        try:
            if check():
                return time.monotonic() - started
        except Exception as exc:  # a probe failing is "not ready yet"; keep the reason for the timeout
            last_error = f" (last error: {type(exc).__name__}: {exc})"
        if proc is not None and proc.poll() is not None:
            raise ProcessDied(f"process exited with code {proc.returncode} while waiting for {what}")
        if time.monotonic() >= deadline:
            raise WaitTimeout(f"{what} not reached within {timeout:.0f} s{last_error}")
        time.sleep(interval)
