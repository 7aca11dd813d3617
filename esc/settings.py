"""Configuration from environment variables, with local defaults. Documented in README.md (Configuration)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path


def _env(name: str, default: str) -> str:
    value = os.environ.get(name)
    return value if value not in (None, "") else default


def _port(name: str, default: int) -> int:
    return int(_env(name, str(default)))


@dataclass(frozen=True)
class Settings:
    state_dir: Path = field(default_factory=lambda: Path(_env("ESC_STATE_DIR", str(Path.cwd() / "state"))))
    cache_dir: Path = field(
        default_factory=lambda: Path(_env("ESC_CACHE_DIR", str(Path.home() / ".cache" / "esc")))
    )
    kafka_port: int = field(default_factory=lambda: _port("ESC_KAFKA_PORT", 9092))
    kafka_controller_port: int = field(default_factory=lambda: _port("ESC_KAFKA_CONTROLLER_PORT", 9093))
    neo4j_port: int = field(default_factory=lambda: _port("ESC_NEO4J_PORT", 7687))
    weaviate_port: int = field(default_factory=lambda: _port("ESC_WEAVIATE_PORT", 8080))
    weaviate_grpc_port: int = field(default_factory=lambda: _port("ESC_WEAVIATE_GRPC_PORT", 50051))
    # Weaviate's internal cluster ports: gossip (and data = gossip + 1), raft (and its RPC = raft + 1).
    weaviate_gossip_port: int = field(default_factory=lambda: _port("ESC_WEAVIATE_GOSSIP_PORT", 7946))
    weaviate_raft_port: int = field(default_factory=lambda: _port("ESC_WEAVIATE_RAFT_PORT", 8300))
    prometheus_port: int = field(default_factory=lambda: _port("ESC_PROMETHEUS_PORT", 19090))
    web_port: int = field(default_factory=lambda: _port("ESC_WEB_PORT", 6066))
    host: str = field(default_factory=lambda: _env("ESC_HOST", "127.0.0.1"))
    # Set ESC_KAFKA_BOOTSTRAP to use Kafka mode explicitly; empty means "probe the local stack".
    kafka_bootstrap_env: str = field(default_factory=lambda: os.environ.get("ESC_KAFKA_BOOTSTRAP", ""))
    neo4j_uri_env: str = field(default_factory=lambda: os.environ.get("ESC_NEO4J_URI", ""))
    weaviate_url_env: str = field(default_factory=lambda: os.environ.get("ESC_WEAVIATE_URL", ""))
    # Topics default to the app id's: two apps on one Kafka never share a topic unless told to.
    topic_prefix: str = field(default_factory=lambda: _env("ESC_TOPIC_PREFIX", _env("ESC_APP_ID", "esc")))
    app_id: str = field(default_factory=lambda: _env("ESC_APP_ID", "esc"))
    llm_base_url: str = field(default_factory=lambda: os.environ.get("ESC_LLM_BASE_URL", ""))
    llm_model: str = field(default_factory=lambda: _env("ESC_LLM_MODEL", "gpt-4o-mini"))
    llm_api_key: str = field(default_factory=lambda: _env("ESC_LLM_API_KEY", "none"))
    # Bearer token for the HTTP API's data endpoints; required to bind the API beyond loopback.
    api_token: str = field(default_factory=lambda: os.environ.get("ESC_API_TOKEN", ""), repr=False)

    @property
    def kafka_bootstrap(self) -> str:
        return self.kafka_bootstrap_env or f"{self.host}:{self.kafka_port}"

    @property
    def neo4j_uri(self) -> str:
        return self.neo4j_uri_env or f"bolt://{self.host}:{self.neo4j_port}"

    @property
    def weaviate_url(self) -> str:
        return self.weaviate_url_env or f"http://{self.host}:{self.weaviate_port}"

    @property
    def prometheus_url(self) -> str:
        return f"http://{self.host}:{self.prometheus_port}"

    def topic(self, name: str) -> str:
        """Full topic name for a logical name such as ``records`` -> ``esc.records``."""
        return f"{self.topic_prefix}.{name}"


def load() -> Settings:
    return Settings()
