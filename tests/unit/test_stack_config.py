"""The native stack's configuration and process handling, without starting Kafka, Neo4j or Weaviate.

Prometheus rules and config are checked with promtool (from the Debian prometheus package): skipped when promtool
is missing on a developer machine, a failure when CI=true. Process lifecycle is tested with a tiny Python HTTP
server playing the part of a service.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import random
import shutil
import socket
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest

from esc.settings import Settings, load
from esc.stack import (
    SERVICE_NAMES,
    StackError,
    down,
    parse_only,
    register_target,
    stack_lock,
    targets_dir,
    unregister_target,
)
from esc.stack.kafka import KAFKA_VERSION, new_cluster_id, render_server_properties
from esc.stack.neo4j import neo4j_version
from esc.stack.process import ProcessDied, http_ok, pid_alive, port_open, start_detached, tail, wait_until
from esc.stack.prometheus import render_config
from esc.stack.services import OPS_DIR, Service, read_flags

RULES = sorted((OPS_DIR / "prometheus" / "rules").glob("*.yml"))


@pytest.fixture
def settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Settings:
    monkeypatch.setenv("ESC_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("ESC_CACHE_DIR", str(tmp_path / "cache"))
    return load()


def promtool() -> str:
    found = shutil.which("promtool")
    if found is None:
        if os.environ.get("CI") == "true":
            pytest.fail("promtool is missing in CI: apt-get install --no-install-recommends prometheus")
        pytest.skip("promtool not installed (apt-get install prometheus); required when CI=true")
    return found


def free_port() -> int:
    """A free port below the ephemeral range: a port the kernel hands out for ``bind(0)`` can be taken by any other
    process (Kafka, Neo4j and Weaviate bind such ports) the moment a test's server lets it go, and a test that
    checks the port is closed after a stop then sees their listener (it happened once in a full run)."""
    low = 20_000
    with contextlib.suppress(OSError, ValueError):
        low = min(low, int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0]) - 2_000)
    rnd = random.Random()
    for _ in range(200):
        port = rnd.randrange(max(1024, low - 10_000), low)
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError("no free port below the ephemeral range")


# --- Prometheus ----------------------------------------------------------------------------------------------------


def test_rule_files_exist_and_pass_promtool() -> None:
    assert RULES, "ops/prometheus/rules/*.yml is empty"
    out = subprocess.run([promtool(), "check", "rules", *map(str, RULES)], capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr


def test_alert_rules_fire_as_specified_in_promtool_unit_tests() -> None:
    tests = OPS_DIR / "prometheus" / "tests" / "esc_rules_test.yml"
    out = subprocess.run(
        [promtool(), "test", "rules", str(tests)], capture_output=True, text=True, cwd=tests.parent
    )
    assert out.returncode == 0, out.stdout + out.stderr


def test_alert_names_cover_the_design() -> None:
    import yaml

    alerts = {
        rule["alert"]
        for path in RULES
        for group in yaml.safe_load(path.read_text())["groups"]
        for rule in group["rules"]
        if "alert" in rule
    }
    assert {"EscSchemaDiffBurst", "EscDlqRateHigh", "EscFreshnessP95High", "EscConsumerLagHigh"} <= alerts


def test_rendered_native_config_is_valid(tmp_path: Path) -> None:
    targets = tmp_path / "targets"
    targets.mkdir()
    text = render_config(
        esc_target="127.0.0.1:6066",
        self_target="127.0.0.1:19090",
        targets=targets,
        rules=OPS_DIR / "prometheus" / "rules",
    )
    config = tmp_path / "prometheus.yml"
    config.write_text(text)
    import yaml

    parsed = yaml.safe_load(text)
    jobs = {job["job_name"]: job for job in parsed["scrape_configs"]}
    assert jobs["esc"]["static_configs"][0]["targets"] == ["127.0.0.1:6066"]
    assert jobs["esc-extra"]["file_sd_configs"][0]["files"] == [f"{targets}/*.json"]
    assert parsed["global"]["scrape_interval"] == "1s"
    out = subprocess.run([promtool(), "check", "config", str(config)], capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr


def test_register_target_writes_file_sd_json_atomically(settings: Settings) -> None:
    path = register_target(settings, "worker-2", "127.0.0.1:6067", {"worker": "w2"})
    assert path.parent == targets_dir(settings)
    assert json.loads(path.read_text()) == [{"targets": ["127.0.0.1:6067"], "labels": {"worker": "w2"}}]
    assert [p.name for p in targets_dir(settings).iterdir()] == ["worker-2.json"]  # no temp file left behind
    assert unregister_target(settings, "worker-2") is True
    assert unregister_target(settings, "worker-2") is False


@pytest.mark.parametrize("name", ["../escape", "a/b", "", "x" * 101, "sp ace"])
def test_register_target_rejects_unsafe_names(settings: Settings, name: str) -> None:
    with pytest.raises(ValueError, match="target name"):
        register_target(settings, name, "127.0.0.1:1")


# --- Kafka and Neo4j -------------------------------------------------------------------------------------------------


def test_kafka_server_properties_render_every_essential(tmp_path: Path) -> None:
    text = render_server_properties(
        host="127.0.0.1", port=19092, controller_port=19093, data_dir=tmp_path / "d"
    )
    props = dict(line.split("=", 1) for line in text.splitlines() if line and not line.startswith("#"))
    assert "$" not in text
    assert props["process.roles"] == "broker,controller"
    assert props["controller.quorum.voters"] == "1@127.0.0.1:19093"
    assert props["listeners"] == "PLAINTEXT://127.0.0.1:19092,CONTROLLER://127.0.0.1:19093"
    assert props["advertised.listeners"] == props["listeners"]
    assert props["controller.listener.names"] == "CONTROLLER"
    assert props["log.dirs"] == str(tmp_path / "d")
    assert props["offsets.topic.replication.factor"] == "1"
    assert props["transaction.state.log.replication.factor"] == "1"
    assert props["transaction.state.log.min.isr"] == "1"
    assert props["group.initial.rebalance.delay.ms"] == "0"


def test_cluster_id_is_base64url_of_16_bytes_without_padding() -> None:
    ids = {new_cluster_id() for _ in range(20)}
    assert len(ids) == 20
    for cid in ids:
        assert len(cid) == 22 and "=" not in cid
        assert len(base64.urlsafe_b64decode(cid + "==")) == 16


def test_poms_pin_the_versions_the_driver_caches_under() -> None:
    kafka_pom = (OPS_DIR / "kafka" / "pom.xml").read_text()
    assert f"<kafka.version>{KAFKA_VERSION}</kafka.version>" in kafka_pom
    assert (
        "<artifactId>reload4j</artifactId>" in kafka_pom
        and "<artifactId>slf4j-reload4j</artifactId>" in kafka_pom
    )
    assert neo4j_version().startswith("5.26.")
    assert "<artifactId>neo4j-bolt</artifactId>" in (OPS_DIR / "neo4j" / "pom.xml").read_text()


def test_jvm_flags_keep_heaps_small_and_open_java_nio_for_neo4j() -> None:
    neo4j = read_flags(OPS_DIR / "neo4j" / "jvm.flags")
    kafka = read_flags(OPS_DIR / "kafka" / "jvm.flags")
    assert "-Xmx2g" in neo4j and "-Xmx768m" in kafka  # bounded: the test machine runs all four servers
    assert "--add-opens=java.base/java.nio=ALL-UNNAMED" in neo4j
    assert all(not f.startswith("#") and f.strip() == f for f in neo4j + kafka)


def test_parse_only_keeps_start_order_and_rejects_unknown_names() -> None:
    assert parse_only(None) == list(SERVICE_NAMES) == ["kafka", "neo4j", "weaviate", "prometheus"]
    assert parse_only("neo4j, KAFKA") == ["kafka", "neo4j"]
    assert parse_only("") == list(SERVICE_NAMES)
    with pytest.raises(ValueError, match="redis"):
        parse_only("kafka,redis")


# --- process lifecycle with a stand-in service --------------------------------------------------------------------


class PyHttp(Service):
    """``python -m http.server`` as a service; ``crash=True`` makes it exit at once with a message."""

    name = "pyhttp"
    start_timeout = 20.0
    stop_timeout = 5.0

    def __init__(self, settings: Settings, port: int, crash: bool = False) -> None:
        super().__init__(settings, say=lambda _: None)
        self.port = port
        self.crash = crash

    @property
    def address(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def ports(self) -> Sequence[int]:
        return (self.port,)

    def install(self) -> None:
        pass

    def prepare(self) -> None:
        (self.dir / "www").mkdir(exist_ok=True)

    def command(self) -> tuple[list[str], Mapping[str, str]]:
        if self.crash:
            code = "import sys; print('boom: config is broken', flush=True); sys.exit(3)"
            return [sys.executable, "-c", code], dict(os.environ)
        argv = [sys.executable, "-m", "http.server", str(self.port), "--bind", "127.0.0.1"]
        return [*argv, "--directory", str(self.dir / "www")], dict(os.environ)

    def ready(self) -> bool:
        return http_ok(f"{self.address}/")


def test_service_starts_detached_reports_status_and_stops_idempotently(settings: Settings) -> None:
    service = PyHttp(settings, free_port())
    assert service.status().state == "down"
    assert service.start() > 0
    pid = service.pid()
    assert pid is not None and pid_alive(pid)
    assert service.pid_file.read_text().strip() == str(pid)
    status = service.status()
    assert (status.state, status.pid, status.address) == ("up", pid, service.address)
    assert service.start() == 0.0  # already running: nothing restarted
    assert service.pid() == pid
    assert service.stop() is True
    assert not pid_alive(pid) and not port_open("127.0.0.1", service.port)
    assert service.stop() is False  # idempotent
    assert service.status().state == "down"


def test_a_process_whose_leader_thread_exited_first_is_alive_while_its_other_threads_run(tmp_path: Path) -> None:
    """The leader thread is a zombie while the rest of the process still runs (and holds its sockets): a stop
    that took it for dead found the stopped server's port still open."""
    code = (
        "import ctypes, threading, time\n"
        "t = threading.Thread(target=time.sleep, args=(30,))\n"
        "t.start()\n"
        "print('up', flush=True)\n"
        "ctypes.CDLL(None).pthread_exit(None)\n"  # the leader thread exits; the sleeping one goes on
    )
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE)
    try:
        assert proc.stdout is not None and proc.stdout.readline() == b"up\n"
        wait_until(lambda: Path(f"/proc/{proc.pid}/stat").read_text().rsplit(")", 1)[-1].split()[0] == "Z",
                   timeout=10, what="the leader thread to exit")
        assert pid_alive(proc.pid)  # its leader is a zombie, its other thread runs
        proc.kill()
        proc.wait(10)
        assert not pid_alive(proc.pid)
    finally:
        proc.kill()
        proc.wait(10)


def test_service_that_dies_fails_with_its_name_log_and_last_lines(settings: Settings) -> None:
    service = PyHttp(settings, free_port(), crash=True)
    with pytest.raises(StackError) as info:
        service.start()
    message = str(info.value)
    assert message.startswith("pyhttp: failed to start")
    assert "exited with code 3" in message
    assert str(service.log_file) in message and "boom: config is broken" in message
    assert service.pid() is None and not service.pid_file.exists()


def test_busy_port_is_reported_instead_of_starting_a_second_server(settings: Settings) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        port = sock.getsockname()[1]
        with pytest.raises(StackError, match=f"port\\(s\\) {port} .* already in use"):
            PyHttp(settings, port).start()


def test_wait_until_notices_a_dead_process_and_tail_reads_the_end(tmp_path: Path) -> None:
    log, pid_file = tmp_path / "x.log", tmp_path / "x.pid"
    proc = start_detached(
        [sys.executable, "-c", "print('\\n'.join(f'line {i}' for i in range(500)))"],
        log_file=log,
        pid_file=pid_file,
    )
    with pytest.raises(ProcessDied):
        wait_until(lambda: False, timeout=30, what="never", proc=proc, interval=0.05)
    assert tail(log, 2) == "line 498\nline 499"
    assert tail(tmp_path / "missing.log") == ""


def test_concurrent_stack_commands_on_one_state_dir_wait_for_each_other(settings: Settings) -> None:
    import threading

    said: list[str] = []
    done = threading.Event()

    def run_down() -> None:
        down(settings, "prometheus", say=said.append)
        done.set()

    with stack_lock(settings, say=said.append):
        worker = threading.Thread(target=run_down)
        worker.start()
        assert not done.wait(1.0)  # blocked while we hold the lock
        assert any("waiting for another `esc stack` command" in line for line in said)
    worker.join(timeout=10)
    assert done.is_set() and said[-1] == "prometheus: not running"


def test_a_stale_pid_file_naming_an_unrelated_process_is_never_signalled(settings: Settings) -> None:
    service = PyHttp(settings, free_port())
    service.dir.mkdir(parents=True, exist_ok=True)
    bystander = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(60)"], cwd=settings.cache_dir.parent
    )
    try:
        service.pid_file.write_text(f"{bystander.pid}\n")  # e.g. a pid reused after a reboot
        assert service.pid() is None
        assert service.status().state == "down"
        assert service.stop() is False
        assert bystander.poll() is None  # still alive: not ours, not signalled
    finally:
        bystander.kill()
        bystander.wait()


def test_cluster_id_never_starts_with_a_dash(monkeypatch: pytest.MonkeyPatch) -> None:
    # 0xfb... encodes to "-..." in base64url; the storage tool's parser would take such an id for an option.
    draws = iter([b"\xfb" * 16, b"\x00" * 16])
    monkeypatch.setattr("esc.stack.kafka.secrets.token_bytes", lambda n: next(draws))
    assert new_cluster_id() == "AAAAAAAAAAAAAAAAAAAAAA"


def test_port_open_is_false_for_a_self_connection(monkeypatch: pytest.MonkeyPatch) -> None:
    # A connect to a free ephemeral port can choose that port as its source (TCP simultaneous open) and succeed
    # with nobody listening; seen as a flake of the stop test above.
    class SelfConnected:
        def __enter__(self) -> SelfConnected:
            return self

        def __exit__(self, *exc: object) -> None:
            pass

        def getsockname(self) -> tuple[str, int]:
            return ("127.0.0.1", 40359)

        def getpeername(self) -> tuple[str, int]:
            return ("127.0.0.1", 40359)

    monkeypatch.setattr("esc.stack.process.socket.create_connection", lambda *a, **k: SelfConnected())
    assert port_open("127.0.0.1", 40359) is False


def test_the_distributions_prometheus_service_is_disabled_after_install(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from esc.stack import install

    ran: list[list[str]] = []
    monkeypatch.setattr(install.shutil, "which", lambda name: f"/usr/bin/{name}")
    monkeypatch.setattr(install, "SYSTEMD_RUNNING", tmp_path / "no-systemd")
    assert install.disable_distro_service("prometheus", print, lambda argv: ran.append(argv) or 0) == [
        ["service", "prometheus", "stop"],
        ["update-rc.d", "prometheus", "disable"],
    ]
    (tmp_path / "systemd").mkdir()
    monkeypatch.setattr(install, "SYSTEMD_RUNNING", tmp_path / "systemd")
    said: list[str] = []
    steps = install.disable_distro_service("prometheus", said.append, lambda argv: ran.append(argv) or 5)
    assert steps == [["systemctl", "disable", "--now", "prometheus"]] and ran[-1] == steps[0]
    assert "may still be enabled" in said[-1]  # a failure is said, not fatal


def test_weaviate_profiling_is_off_and_its_cluster_api_needs_a_stable_private_secret(
    settings: Settings,
) -> None:
    from esc.stack.weaviate import Weaviate

    env = Weaviate(settings, say=lambda _: None).environment()
    assert env["GO_PROFILING_DISABLE"] == "true" and env["CLUSTER_BIND_ADDR"] == "127.0.0.1"
    secret = env["CLUSTER_BASIC_AUTH_PASSWORD"]
    assert (
        len(secret) >= 24
        and Weaviate(settings, say=lambda _: None).environment()["CLUSTER_BASIC_AUTH_PASSWORD"] == secret
    )
    path = Weaviate(settings, say=lambda _: None).dir / "cluster.secret"
    assert path.stat().st_mode & 0o077 == 0


def test_neo4j_transaction_memory_is_capped_and_the_page_cache_is_a_setting(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    from esc.stack.neo4j import TX_MAX_BYTES, TX_TOTAL_BYTES, Neo4j

    argv, _ = Neo4j(settings, say=lambda _: None).command()
    assert argv[-2:] == [str(TX_TOTAL_BYTES), str(TX_MAX_BYTES)] and 0 < TX_MAX_BYTES < TX_TOTAL_BYTES
    assert argv[-3] == str(1024 * 1024 * 1024)  # the page cache: ESC_NEO4J_PAGE_CACHE_MB, 1 GiB by default
    monkeypatch.setenv("ESC_NEO4J_PAGE_CACHE_MB", "256")
    small = Neo4j(load(), say=lambda _: None).command()[0]
    assert small[-3] == str(256 * 1024 * 1024)
    launcher = (Path(__file__).parents[2] / "ops" / "neo4j" / "Launcher.java").read_text()
    assert (
        "memory_transaction_global_max_size, txTotal" in launcher
        and "memory_transaction_max_size, txMax" in launcher
    )
