"""Install steps for the native stack, each cached under the ESC cache dir and skipped when its artifact exists.

- Java libraries (Kafka, Neo4j): ``mvn dependency:copy-dependencies`` of a pom under ``ops/`` into
  ``<cache>/<name>/<version>/libs``; a ``.complete`` marker is written last, so an interrupted copy is redone.
- Weaviate: ``go install github.com/weaviate/weaviate/cmd/weaviate-server@v<version>`` into
  ``<cache>/weaviate/<version>/`` with the module cache in ``<cache>/gomod``.
- Prometheus: the Debian package (``apt-get install prometheus``), when we are root and apt exists.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

from esc.contract.errors import EscError
from esc.stack.process import tail

Say = Callable[[str], None]

COMPLETE_MARKER = ".complete"


class InstallError(EscError, RuntimeError):
    """An install step failed; the message names the step, the command and its log file."""


@contextmanager
def cache_lock(path: Path) -> Iterator[None]:
    """An exclusive file lock so two ``esc stack up`` runs never build the same artifact at once."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def run_step(
    argv: Sequence[str], *, what: str, log_file: Path, say: Say, env: Mapping[str, str] | None = None
) -> float:
    """Run one install command with its output in ``log_file``; raise InstallError with the log tail on failure."""
    log_file.parent.mkdir(parents=True, exist_ok=True)
    say(f"  $ {' '.join(argv)}   (log: {log_file})")
    started = time.monotonic()
    with log_file.open("wb") as log:
        try:
            code = subprocess.call(
                list(argv),
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env=dict(env or os.environ),
            )
        except FileNotFoundError as exc:
            raise InstallError(f"{what}: command not found: {argv[0]} ({exc})") from exc
    elapsed = time.monotonic() - started
    if code != 0:
        raise InstallError(
            f"{what} failed (exit {code}) after {elapsed:.0f} s; log: {log_file}\n--- last lines ---\n{tail(log_file, 25)}"
        )
    return elapsed


def maven_libs(*, name: str, pom: Path, dest: Path, cache_dir: Path, say: Say) -> Path:
    """Copy the runtime dependencies of ``pom`` into ``dest`` (cached; skipped when complete)."""
    if (dest / COMPLETE_MARKER).exists():
        say(f"{name}: libraries present in {dest} (skip)")
        return dest
    mvn = shutil.which("mvn")
    if mvn is None:
        raise InstallError(
            f"{name}: Maven (mvn) is not on PATH; install it (apt-get install maven) to fetch {pom}"
        )
    with cache_lock(dest.with_name(dest.name + ".lock")):
        if (dest / COMPLETE_MARKER).exists():
            return dest
        partial = dest.with_name(dest.name + ".partial")
        shutil.rmtree(partial, ignore_errors=True)
        say(f"{name}: resolving runtime jars from Maven Central into {dest}")
        elapsed = run_step(
            [
                mvn,
                "-B",
                "-q",
                "-f",
                str(pom),
                f"-Dmaven.repo.local={cache_dir / 'm2'}",
                "dependency:copy-dependencies",
                "-DincludeScope=runtime",
                f"-DoutputDirectory={partial}",
            ],
            what=f"{name}: mvn dependency:copy-dependencies",
            log_file=cache_dir / "logs" / f"{name}-mvn.log",
            say=say,
        )
        jars = sorted(partial.glob("*.jar"))
        if not jars:
            raise InstallError(f"{name}: Maven copied no jars into {partial}")
        (partial / COMPLETE_MARKER).write_text(f"{len(jars)} jars from {pom}\n")
        shutil.rmtree(dest, ignore_errors=True)
        partial.rename(dest)
        say(f"{name}: {len(jars)} jars in {elapsed:.0f} s")
    return dest


def find_go() -> str | None:
    found = shutil.which("go")
    if found:
        return found
    fallback = Path("/usr/local/go/bin/go")
    return str(fallback) if fallback.exists() else None


def go_binary(*, name: str, module: str, version: str, binary: Path, cache_dir: Path, say: Say) -> Path:
    """``go install module@v<version>`` into ``binary.parent`` (cached; a cold build takes 5-20 minutes)."""
    if binary.exists():
        say(f"{name}: binary present at {binary} (skip)")
        return binary
    go = find_go()
    if go is None:
        raise InstallError(f"{name}: Go is not installed (need go >= 1.26 on PATH or /usr/local/go/bin/go)")
    with cache_lock(binary.parent.with_name(binary.parent.name + ".lock")):
        if binary.exists():
            return binary
        binary.parent.mkdir(parents=True, exist_ok=True)
        env = dict(os.environ)
        env.update(
            CGO_ENABLED="0",
            GOTOOLCHAIN="local",
            GOBIN=str(binary.parent),
            GOMODCACHE=str(cache_dir / "gomod"),
            GOFLAGS="-modcacherw",
        )
        say(
            f"{name}: building {module}@v{version} with Go (cold: 5-20 min, ~2 GB of modules in {cache_dir / 'gomod'})"
        )
        elapsed = run_step(
            [go, "install", "-trimpath", "-ldflags=-s -w", f"{module}@v{version}"],
            what=f"{name}: go install",
            log_file=cache_dir / "logs" / f"{name}-go-install.log",
            say=say,
            env=env,
        )
        if not binary.exists():
            raise InstallError(f"{name}: go install finished but {binary} is missing")
        say(f"{name}: built in {elapsed:.0f} s")
    return binary


SYSTEMD_RUNNING = Path("/run/systemd/system")  # exists only when systemd is PID 1 (sd_booted)


def disable_distro_service(
    unit: str, say: Say, run: Callable[[list[str]], int] = lambda argv: subprocess.call(
        argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL
    ),
) -> list[list[str]]:
    """Stop and disable the service a Debian package enables on install (its own config, its own port, every
    interface): ``esc stack`` runs its own instance. systemd when it is running, else the SysV scripts. Returns the
    commands run; failures are reported, never fatal (the unit may not exist on this distribution)."""
    if shutil.which("systemctl") and SYSTEMD_RUNNING.is_dir():
        steps = [["systemctl", "disable", "--now", unit]]
    else:
        steps = [["service", unit, "stop"], ["update-rc.d", unit, "disable"]]
    steps = [s for s in steps if shutil.which(s[0])]
    for argv in steps:
        code = run(argv)
        say(f"  $ {' '.join(argv)}" + ("" if code == 0 else f"   (exit {code}: the distribution's {unit} service "
                                                          "may still be enabled)"))
    return steps


def debian_package(
    *, name: str, package: str, binary: str, cache_dir: Path, say: Say, service: str | None = None
) -> Path:
    """The path of ``binary``; install the Debian ``package`` (no recommends) when missing and we are root; the
    package's own ``service`` is then stopped and disabled."""
    found = shutil.which(binary)
    if found:
        say(f"{name}: {binary} found at {found} (skip)")
        return Path(found)
    apt = shutil.which("apt-get")
    if apt is None or os.geteuid() != 0:
        raise InstallError(
            f"{name}: {binary} is not installed; run `apt-get install -y --no-install-recommends {package}` as root"
        )
    say(f"{name}: installing Debian package {package}")
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    log = cache_dir / "logs" / f"{name}-apt.log"
    run_step([apt, "update", "-q"], what=f"{name}: apt-get update", log_file=log, say=say, env=env)
    run_step(
        [apt, "install", "-y", "-q", "--no-install-recommends", package],
        what=f"{name}: apt-get install {package}",
        log_file=log.with_name(f"{name}-apt-install.log"),
        say=say,
        env=env,
    )
    found = shutil.which(binary)
    if found is None:
        raise InstallError(f"{name}: apt-get installed {package} but {binary} is still not on PATH")
    if service:
        disable_distro_service(service, say)
    return Path(found)
