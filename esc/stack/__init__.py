"""The native stack (Kafka, Neo4j, Weaviate, Prometheus) without Docker: install, start, check, stop.

Public API (used by ``esc stack`` and by test fixtures)::

    up(settings, only=None, say=print) -> dict[str, float]     # seconds to ready per service, in start order
    down(settings, only=None, say=print) -> list[str]          # services that were running, in stop order
    status(settings, only=None) -> list[ServiceStatus]
    log_path(settings, name) -> Path
    register_target / unregister_target (Prometheus file_sd)

Services start one after another (JVM start-up competes for two cores) and stop in reverse order.
"""

from __future__ import annotations

import fcntl
from collections.abc import Iterable, Iterator
from contextlib import contextmanager

from esc.settings import Settings
from esc.stack.install import InstallError
from esc.stack.kafka import Kafka
from esc.stack.neo4j import Neo4j
from esc.stack.prometheus import Prometheus, register_target, targets_dir, unregister_target
from esc.stack.services import Say, Service, ServiceStatus, StackError, log_path
from esc.stack.weaviate import Weaviate

SERVICE_TYPES: tuple[type[Service], ...] = (Kafka, Neo4j, Weaviate, Prometheus)
SERVICE_NAMES: tuple[str, ...] = tuple(t.name for t in SERVICE_TYPES)

__all__ = [
    "SERVICE_NAMES",
    "InstallError",
    "ServiceStatus",
    "StackError",
    "down",
    "log_path",
    "parse_only",
    "register_target",
    "services",
    "stack_lock",
    "status",
    "targets_dir",
    "unregister_target",
    "up",
]


def parse_only(only: str | Iterable[str] | None) -> list[str]:
    """Service names from ``"kafka,neo4j"`` (or a list), in start order; all when empty. Unknown names raise."""
    if only is None:
        return list(SERVICE_NAMES)
    names = [n.strip().lower() for n in (only.split(",") if isinstance(only, str) else only)]
    names = [n for n in names if n]
    if not names:
        return list(SERVICE_NAMES)
    unknown = sorted(set(names) - set(SERVICE_NAMES))
    if unknown:
        raise ValueError(f"unknown service(s) {', '.join(unknown)}; choose from {', '.join(SERVICE_NAMES)}")
    return [n for n in SERVICE_NAMES if n in names]


def services(settings: Settings, only: str | Iterable[str] | None = None, say: Say = print) -> list[Service]:
    wanted = set(parse_only(only))
    return [t(settings, say) for t in SERVICE_TYPES if t.name in wanted]


@contextmanager
def stack_lock(settings: Settings, say: Say) -> Iterator[None]:
    """Serialise ``up``/``down`` on one state dir: two concurrent runs would race on the same pid files."""
    path = settings.state_dir / "stack" / ".lock"
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w") as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            say(f"waiting for another `esc stack` command on {settings.state_dir} to finish ...")
            fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def up(
    settings: Settings,
    only: str | Iterable[str] | None = None,
    say: Say = print,
    timeout: float | None = None,
) -> dict[str, float]:
    """Install what is missing and start the services in order; raise StackError naming the first failure."""
    timings: dict[str, float] = {}
    selected = services(settings, only, say)
    with stack_lock(settings, say):
        _start_all(selected, timings, timeout)
    return timings


def _start_all(selected: list[Service], timings: dict[str, float], timeout: float | None) -> None:
    for service in selected:
        try:
            timings[service.name] = service.start(timeout)
        except InstallError as exc:
            raise StackError(service.name, f"install failed: {exc}") from exc
        except StackError:
            raise
        except Exception as exc:
            # Config rendering, a missing ops/ file, ...: still name the service and its log.
            raise StackError(service.name, f"{type(exc).__name__}: {exc}", service.log_file) from exc


def down(settings: Settings, only: str | Iterable[str] | None = None, say: Say = print) -> list[str]:
    """Stop services in reverse start order (SIGTERM, wait, SIGKILL). Idempotent."""
    stopped = []
    errors = []
    selected = services(settings, only, say)
    with stack_lock(settings, say):
        for service in reversed(selected):
            try:
                if service.stop():
                    stopped.append(service.name)
                else:
                    say(f"{service.name}: not running")
            except StackError as exc:
                errors.append(str(exc))
    if errors:
        raise StackError("stack", "some services did not stop:\n" + "\n".join(errors))
    return stopped


def status(settings: Settings, only: str | Iterable[str] | None = None) -> list[ServiceStatus]:
    return [service.status() for service in services(settings, only, say=lambda _: None)]
