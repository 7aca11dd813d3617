"""Weaviate 1.39.1 built with ``go install`` from the Go module proxy, run as one local node (no modules)."""

from __future__ import annotations

import os
import secrets
from collections.abc import Mapping, Sequence
from pathlib import Path

from esc.stack.install import go_binary
from esc.stack.process import http_ok, port_open
from esc.stack.services import Service

WEAVIATE_VERSION = "1.39.1"
WEAVIATE_MODULE = "github.com/weaviate/weaviate/cmd/weaviate-server"


class Weaviate(Service):
    name = "weaviate"
    start_timeout = 120.0
    stop_timeout = 30.0

    @property
    def address(self) -> str:
        return f"http://{self.settings.host}:{self.settings.weaviate_port}"

    def ports(self) -> Sequence[int]:
        return (self.settings.weaviate_port, self.settings.weaviate_grpc_port)

    @property
    def binary(self) -> Path:
        return self.cache_dir / "weaviate" / f"v{WEAVIATE_VERSION}" / "weaviate-server"

    def install(self) -> None:
        go_binary(
            name=self.name,
            module=WEAVIATE_MODULE,
            version=WEAVIATE_VERSION,
            binary=self.binary,
            cache_dir=self.cache_dir,
            say=self.say,
        )

    def prepare(self) -> None:
        (self.dir / "data").mkdir(parents=True, exist_ok=True)

    def cluster_secret(self) -> str:
        """A random secret made once per state dir (mode 0600) for Weaviate's internal cluster API."""
        path = self.dir / "cluster.secret"
        if not path.exists():
            self.dir.mkdir(parents=True, exist_ok=True)
            try:
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            except FileExistsError:  # a concurrent `esc stack up` made it
                pass
            else:
                with os.fdopen(fd, "w") as out:
                    out.write(secrets.token_urlsafe(24))
        return path.read_text().strip()

    def environment(self) -> dict[str, str]:
        """Weaviate's configuration (it reads env vars only); no ENABLE_MODULES: we bring our own vectors."""
        return {
            "PERSISTENCE_DATA_PATH": str(self.dir / "data"),
            "AUTHENTICATION_ANONYMOUS_ACCESS_ENABLED": "true",
            "DEFAULT_VECTORIZER_MODULE": "none",
            "CLUSTER_HOSTNAME": "node1",
            "CLUSTER_IN_LOCALHOST": "true",
            "CLUSTER_BIND_ADDR": "127.0.0.1",
            "CLUSTER_ADVERTISE_ADDR": "127.0.0.1",
            "RAFT_BOOTSTRAP_EXPECT": "1",
            "RAFT_JOIN": f"node1:{self.settings.weaviate_raft_port}",
            "RAFT_PORT": str(self.settings.weaviate_raft_port),
            "RAFT_INTERNAL_RPC_PORT": str(self.settings.weaviate_raft_port + 1),
            "CLUSTER_GOSSIP_BIND_PORT": str(self.settings.weaviate_gossip_port),
            "CLUSTER_DATA_BIND_PORT": str(self.settings.weaviate_gossip_port + 1),
            "GRPC_PORT": str(self.settings.weaviate_grpc_port),
            "DISABLE_TELEMETRY": "true",
            # The Go profiling/debug listener binds every interface (":6060" in configure_api.go): off.
            "GO_PROFILING_DISABLE": "true",
            # The internal cluster API (CLUSTER_DATA_BIND_PORT) and gRPC bind every interface in 1.39 (":%d", no
            # host setting): the cluster API at least asks for a per-install secret (README, "Ports").
            "CLUSTER_BASIC_AUTH_USERNAME": "esc",
            "CLUSTER_BASIC_AUTH_PASSWORD": self.cluster_secret(),
            "GOMEMLIMIT": "1GiB",
            "DISK_USE_WARNING_PERCENTAGE": "95",
            "DISK_USE_READONLY_PERCENTAGE": "99",
            "QUERY_DEFAULTS_LIMIT": "25",
            "LOG_LEVEL": "info",
        }

    def command(self) -> tuple[list[str], Mapping[str, str]]:
        argv = [
            str(self.binary),
            "--host",
            self.settings.host,
            "--port",
            str(self.settings.weaviate_port),
            "--scheme",
            "http",
        ]
        return argv, {**os.environ, **self.environment()}

    def ready(self) -> bool:
        return http_ok(f"{self.address}/v1/.well-known/ready") and port_open(
            self.settings.host, self.settings.weaviate_grpc_port
        )
