"""Apache Kafka 3.9.1, one KRaft node (broker + controller), from Maven Central jars (ops/kafka/pom.xml)."""

from __future__ import annotations

import asyncio
import base64
import os
import secrets
from collections.abc import Mapping, Sequence
from pathlib import Path
from string import Template

from esc.stack.install import maven_libs, run_step
from esc.stack.services import OPS_DIR, Service, StackError, java_binary, read_flags

KAFKA_VERSION = "3.9.1"
READY_LINE = "Kafka Server started"


def new_cluster_id() -> str:
    """A KRaft cluster id: base64url of 16 random bytes, no padding (what `kafka-storage random-uuid` prints).

    Like Kafka's own ``Uuid.randomUuid`` it never starts with ``-``: the storage tool's argument parser would read
    such an id as an option (``--cluster-id: expected one argument``), which failed one in 64 fresh set-ups.
    """
    while True:
        cluster_id = base64.urlsafe_b64encode(secrets.token_bytes(16)).decode().rstrip("=")
        if not cluster_id.startswith("-"):
            return cluster_id


def render_server_properties(*, host: str, port: int, controller_port: int, data_dir: Path) -> str:
    template = Template((OPS_DIR / "kafka" / "server.properties").read_text())
    return template.substitute(host=host, port=port, controller_port=controller_port, data_dir=data_dir)


async def _describe_cluster(bootstrap: str, timeout_ms: int) -> dict[str, object]:
    from aiokafka.admin import AIOKafkaAdminClient

    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=timeout_ms)
    await admin.start()
    try:
        return await admin.describe_cluster()
    finally:
        await admin.close()


def describe_cluster(bootstrap: str, timeout_s: float = 5.0) -> dict[str, object]:
    """A real admin round trip (DescribeCluster) against the broker."""
    return asyncio.run(asyncio.wait_for(_describe_cluster(bootstrap, int(timeout_s * 1000)), timeout_s + 1))


class Kafka(Service):
    ready_line = READY_LINE
    ready_check = "an admin DescribeCluster call"
    name = "kafka"
    start_timeout = 120.0
    stop_timeout = 30.0

    @property
    def address(self) -> str:
        return f"{self.settings.host}:{self.settings.kafka_port}"

    def ports(self) -> Sequence[int]:
        return (self.settings.kafka_port, self.settings.kafka_controller_port)

    @property
    def libs(self) -> Path:
        return self.cache_dir / "kafka" / KAFKA_VERSION / "libs"

    @property
    def data_dir(self) -> Path:
        return self.dir / "data"

    @property
    def config_file(self) -> Path:
        return self.dir / "server.properties"

    def install(self) -> None:
        maven_libs(
            name=self.name,
            pom=OPS_DIR / "kafka" / "pom.xml",
            dest=self.libs,
            cache_dir=self.cache_dir,
            say=self.say,
        )

    def _java(self, main: str, *args: str) -> list[str]:
        return [
            java_binary(),
            *read_flags(OPS_DIR / "kafka" / "jvm.flags"),
            f"-Dlog4j.configuration=file:{OPS_DIR / 'kafka' / 'log4j.properties'}",
            f"-Dkafka.logs.dir={self.dir}",
            "-cp",
            f"{self.libs}/*",
            main,
            *args,
        ]

    def prepare(self) -> None:
        s = self.settings
        self.config_file.write_text(
            render_server_properties(
                host=s.host,
                port=s.kafka_port,
                controller_port=s.kafka_controller_port,
                data_dir=self.data_dir,
            )
        )
        if (self.data_dir / "meta.properties").exists():
            return
        id_file = self.dir / "cluster.id"
        if not id_file.exists() or id_file.read_text().startswith("-"):
            id_file.write_text(new_cluster_id() + "\n")
        cluster_id = id_file.read_text().strip()
        self.say(f"{self.name}: formatting KRaft storage in {self.data_dir} (cluster id {cluster_id})")
        try:
            run_step(
                [
                    *self._java("kafka.tools.StorageTool", "format"),
                    f"--cluster-id={cluster_id}",
                    "-c",
                    str(self.config_file),
                    "--ignore-formatted",
                ],
                what=f"{self.name}: storage format",
                log_file=self.dir / "format.log",
                say=self.say,
            )
        except RuntimeError as exc:
            raise StackError(self.name, str(exc)) from exc

    def command(self) -> tuple[list[str], Mapping[str, str]]:
        return self._java("kafka.Kafka", str(self.config_file)), dict(os.environ)

    def ready(self) -> bool:
        describe_cluster(self.address, timeout_s=3.0)
        return True
