"""One native service of the stack: where its state lives, how it installs, starts, proves readiness and stops.

Each concrete service (kafka.py, neo4j.py, weaviate.py, prometheus.py) fills in the abstract parts. State for a
service lives in ``<ESC_STATE_DIR>/stack/<name>/``: ``<name>.pid``, ``<name>.log`` (previous run in ``.log.prev``),
rendered config and data. Caches (jars, binaries) live under ``<ESC_CACHE_DIR>``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import ClassVar, Literal

from pydantic import BaseModel

from esc.contract.errors import EscError
from esc.settings import Settings
from esc.stack.process import (
    ProcessDied,
    WaitTimeout,
    pid_alive,
    port_open,
    read_pid,
    start_detached,
    stop_pid,
    tail,
)

Say = Callable[[str], None]

REPO_ROOT = Path(__file__).resolve().parents[2]
OPS_DIR = REPO_ROOT / "ops"


def service_dir(settings: Settings, name: str) -> Path:
    return settings.state_dir / "stack" / name


def log_path(settings: Settings, name: str) -> Path:
    """The log file of service ``name`` (also what test fixtures name when a service is down)."""
    return service_dir(settings, name) / f"{name}.log"


def java_binary() -> str:
    """Java 17+: $JAVA_HOME/bin/java, else ``java`` on PATH."""
    home = os.environ.get("JAVA_HOME")
    if home and (Path(home) / "bin" / "java").exists():
        return str(Path(home) / "bin" / "java")
    found = shutil.which("java")
    if found is None:
        raise StackError("java", "Java 17 is not installed (need `java` on PATH or JAVA_HOME)")
    return found


def read_flags(path: Path) -> list[str]:
    """JVM flags from a file under ops/: one per line, '#' starts a comment."""
    flags = []
    for line in path.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            flags.append(line)
    return flags


class StackError(EscError, RuntimeError):
    """A service failed to install, start or stop. The message names the service, its log and the log's tail."""

    def __init__(self, service: str, message: str, log_file: Path | None = None, lines: int = 30) -> None:
        self.service = service
        self.log_file = log_file
        text = message if message.startswith(f"{service}: ") else f"{service}: {message}"
        if log_file is not None:
            text += f"\n  log: {log_file}"
            last = tail(log_file, lines)
            if last:
                text += f"\n--- last {lines} lines of {log_file.name} ---\n{last}"
        super().__init__(text)


class ServiceStatus(BaseModel):
    name: str
    state: Literal["up", "down", "starting", "foreign"]
    address: str
    ports: list[int]
    pid: int | None = None
    log: str
    detail: str = ""


class Service(ABC):
    """Install, start (detached, one readiness wait), check and stop one server."""

    name: ClassVar[str]
    start_timeout: ClassVar[float] = 180.0
    stop_timeout: ClassVar[float] = 30.0

    def __init__(self, settings: Settings, say: Say = print) -> None:
        self.settings = settings
        self.say = say

    # --- paths -------------------------------------------------------------------------------------------------
    @property
    def dir(self) -> Path:
        return service_dir(self.settings, self.name)

    @property
    def log_file(self) -> Path:
        return log_path(self.settings, self.name)

    @property
    def pid_file(self) -> Path:
        return self.dir / f"{self.name}.pid"

    @property
    def cache_dir(self) -> Path:
        return self.settings.cache_dir

    # --- what each service defines -----------------------------------------------------------------------------
    @property
    @abstractmethod
    def address(self) -> str:
        """What clients connect to, e.g. ``127.0.0.1:9092`` or ``http://127.0.0.1:8080``."""

    @abstractmethod
    def ports(self) -> Sequence[int]:
        """Every TCP port the server listens on (checked free before start)."""

    @abstractmethod
    def install(self) -> None:
        """Fetch or build what the server needs into the cache; skip what is present."""

    @abstractmethod
    def prepare(self) -> None:
        """Render config and initialise state under ``self.dir`` (idempotent)."""

    @abstractmethod
    def command(self) -> tuple[list[str], Mapping[str, str]]:
        """argv and environment of the server process."""

    @abstractmethod
    def ready(self) -> bool:
        """A real client-level check that the server serves requests (status uses it too)."""

    ready_line: ClassVar[str | None] = None
    """A log line the server prints when it has started; waited for before the first ``ready()`` call."""
    ready_check: ClassVar[str] = "readiness"
    """What ``ready()`` does, for error messages (e.g. "Bolt RETURN 1")."""

    def wait_ready(self, proc: subprocess.Popen[bytes], timeout: float) -> None:
        """Block until the freshly started ``proc`` is ready: its ready log line (if any), then ``ready()``."""
        import time

        from esc.stack.process import log_contains, wait_until

        deadline = time.monotonic() + timeout
        line = self.ready_line
        if line is not None:
            wait_until(lambda: log_contains(self.log_file, line), timeout=timeout, what=f'log line "{line}"', proc=proc)
        wait_until(
            self.ready,
            timeout=max(5.0, deadline - time.monotonic()),
            what=f"{self.name} {self.ready_check}",
            proc=proc,
            interval=0.5,
        )

    # --- lifecycle -----------------------------------------------------------------------------------------------
    def pid(self) -> int | None:
        """The live pid from the pid file, if that process is still ours (its cwd is our state dir).

        A stale pid file after a reboot may name an unrelated process; we must never signal that one.
        """
        pid = read_pid(self.pid_file)
        if pid is None or not pid_alive(pid):
            return None
        try:
            cwd = os.readlink(f"/proc/{pid}/cwd")
        except PermissionError:
            return pid
        except OSError:
            return pid if not Path("/proc/self").exists() else None
        return pid if Path(cwd) == self.dir.resolve() else None

    def status(self) -> ServiceStatus:
        pid = self.pid()
        serving, detail = False, ""
        if not port_open(self.settings.host, self.ports()[0]):
            detail = f"nothing listens on {self.settings.host}:{self.ports()[0]}"
        else:
            try:
                serving = self.ready()
            except Exception as exc:  # a readiness probe may fail in any way: status reports it
                detail = f"{type(exc).__name__}: {exc}"
        if serving:
            state: Literal["up", "down", "starting", "foreign"] = "up" if pid else "foreign"
            if not pid:
                detail = "answering, but not started by this state dir (no live pid file)"
        elif pid:
            state = "starting"
            detail = detail or "process alive but not answering yet"
        else:
            state = "down"
        return ServiceStatus(
            name=self.name,
            state=state,
            address=self.address,
            ports=list(self.ports()),
            pid=pid,
            log=str(self.log_file),
            detail=detail,
        )

    def start(self, timeout: float | None = None) -> float:
        """Install if needed, start detached and wait for readiness. Returns seconds to ready (0 if already up)."""
        import time

        pid = self.pid()
        if pid is not None:
            if self._ready_quietly():
                self.say(f"{self.name}: already running (pid {pid}) at {self.address}")
                return 0.0
            self.say(f"{self.name}: pid {pid} is alive but not answering; restarting it")
            self.stop()
        busy = [port for port in self.ports() if port_open(self.settings.host, port)]
        if busy:
            raise StackError(
                self.name,
                f"port(s) {', '.join(map(str, busy))} on {self.settings.host} are already in use by another process "
                f"(not started from {self.dir}); stop it or choose other ports (ESC_*_PORT)",
            )
        self.install()
        self.dir.mkdir(parents=True, exist_ok=True)
        self.prepare()
        argv, env = self.command()
        self.say(f"{self.name}: starting at {self.address} (log: {self.log_file})")
        started = time.monotonic()
        proc = start_detached(argv, log_file=self.log_file, pid_file=self.pid_file, env=env, cwd=self.dir)
        try:
            self.wait_ready(proc, timeout if timeout is not None else self.start_timeout)
        except (ProcessDied, WaitTimeout) as exc:
            stop_pid(proc.pid, timeout=10)
            self.pid_file.unlink(missing_ok=True)
            raise StackError(self.name, f"failed to start: {exc}", self.log_file) from exc
        except BaseException:
            stop_pid(proc.pid, timeout=10)
            self.pid_file.unlink(missing_ok=True)
            raise
        elapsed = time.monotonic() - started
        self.say(f"{self.name}: ready at {self.address} in {elapsed:.1f} s (pid {proc.pid})")
        return elapsed

    def stop(self) -> bool:
        """SIGTERM, wait, SIGKILL. Idempotent: False when nothing was running."""
        pid = self.pid()
        if pid is None:
            self.pid_file.unlink(missing_ok=True)
            return False
        self.say(f"{self.name}: stopping pid {pid}")

        def killed() -> None:
            self.say(f"{self.name}: no exit after {self.stop_timeout:.0f} s of SIGTERM; sending SIGKILL")

        stop_pid(pid, timeout=self.stop_timeout, on_kill=killed)
        if pid_alive(pid):
            raise StackError(self.name, f"pid {pid} survived SIGKILL", self.log_file)
        self.pid_file.unlink(missing_ok=True)
        self.say(f"{self.name}: stopped")
        return True

    def _ready_quietly(self) -> bool:
        try:
            return self.ready()
        except Exception:  # a readiness probe may fail in any way: not ready yet
            return False
