"""Neo4j Community 5.26 embedded behind Bolt, run by ops/neo4j/Launcher.java on Java 17 (no tarball, no Docker)."""

from __future__ import annotations

import hashlib
import os
import re
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path

from esc.stack.install import maven_libs, run_step
from esc.stack.services import OPS_DIR, Service, StackError, java_binary, read_flags

READY_LINE = "ESC_NEO4J_READY"
LAUNCHER = OPS_DIR / "neo4j" / "Launcher.java"
TX_TOTAL_BYTES = 1024 * 1024 * 1024
"""``dbms.memory.transaction.total.max``: all transactions together (the heap is 2 GiB, ops/neo4j/jvm.flags); a
runaway query fails with a memory error instead of taking the server down."""
TX_MAX_BYTES = 512 * 1024 * 1024
"""``db.memory.transaction.max``: one transaction (a 5,000-row UNWIND batch of agents/stores/neo4j.py needs far
less)."""


def neo4j_version() -> str:
    """The Neo4j version pinned in ops/neo4j/pom.xml (one source of truth for the cache path)."""
    text = (OPS_DIR / "neo4j" / "pom.xml").read_text()
    match = re.search(r"<neo4j\.version>([^<]+)</neo4j\.version>", text)
    if match is None:
        raise ValueError("ops/neo4j/pom.xml has no <neo4j.version> property")
    return match.group(1).strip()


def bolt_ping(uri: str, timeout_s: float = 3.0) -> bool:
    """``RETURN 1`` over Bolt with auth off."""
    from neo4j import GraphDatabase

    with GraphDatabase.driver(
        uri, auth=None, connection_timeout=timeout_s, max_transaction_retry_time=0
    ) as driver:
        records, _, _ = driver.execute_query("RETURN 1 AS ok")
        return bool(records and records[0]["ok"] == 1)


class Neo4j(Service):
    ready_line = READY_LINE
    ready_check = "Bolt RETURN 1"
    name = "neo4j"
    start_timeout = 180.0
    stop_timeout = 45.0  # a clean shutdown checkpoints and drains Bolt (~10 s)

    @property
    def address(self) -> str:
        return f"bolt://{self.settings.host}:{self.settings.neo4j_port}"

    def ports(self) -> Sequence[int]:
        return (self.settings.neo4j_port,)

    @property
    def libs(self) -> Path:
        return self.cache_dir / "neo4j" / neo4j_version() / "libs"

    @property
    def home(self) -> Path:
        return self.dir / "home"

    @property
    def launcher_classes(self) -> Path:
        """Compiled Launcher, keyed by the source's hash (javac once instead of ~5 s per start)."""
        digest = hashlib.sha256(LAUNCHER.read_bytes()).hexdigest()[:12]
        return self.libs.parent / f"launcher-{digest}"

    def install(self) -> None:
        maven_libs(
            name=self.name,
            pom=OPS_DIR / "neo4j" / "pom.xml",
            dest=self.libs,
            cache_dir=self.cache_dir,
            say=self.say,
        )
        self._compile_launcher()

    def _compile_launcher(self) -> None:
        target = self.launcher_classes
        if (target / "Launcher.class").exists():
            return
        javac = shutil.which("javac")
        if javac is None:
            self.say(f"{self.name}: no javac (JRE only); Launcher.java runs as a single-file source program")
            return
        partial = target.with_name(target.name + ".partial")
        shutil.rmtree(partial, ignore_errors=True)
        try:
            run_step(
                [javac, "-d", str(partial), "-cp", f"{self.libs}/*", str(LAUNCHER)],
                what=f"{self.name}: javac Launcher.java",
                log_file=self.cache_dir / "logs" / "neo4j-javac.log",
                say=self.say,
            )
        except RuntimeError as exc:
            raise StackError(self.name, str(exc)) from exc
        if (target / "Launcher.class").exists():  # a concurrent `esc stack up` won the race
            shutil.rmtree(partial, ignore_errors=True)
        else:
            partial.rename(target)

    def prepare(self) -> None:
        self.home.mkdir(parents=True, exist_ok=True)

    def command(self) -> tuple[list[str], Mapping[str, str]]:
        compiled = self.launcher_classes
        if (compiled / "Launcher.class").exists():
            classpath, main = f"{self.libs}/*{os.pathsep}{compiled}", "Launcher"
        else:  # Java 11+ compiles and runs a single source file directly
            classpath, main = f"{self.libs}/*", str(LAUNCHER)
        argv = [
            java_binary(),
            *read_flags(OPS_DIR / "neo4j" / "jvm.flags"),
            "-cp",
            classpath,
            main,
            str(self.home),
            self.settings.host,
            str(self.settings.neo4j_port),
            str(self.settings.neo4j_page_cache_mb * 1024 * 1024),
            str(TX_TOTAL_BYTES),
            str(TX_MAX_BYTES),
        ]
        return argv, dict(os.environ)

    def ready(self) -> bool:
        return bolt_ping(self.address)
