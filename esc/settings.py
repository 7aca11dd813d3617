"""Configuration: one settings object read from ``ESC_*`` environment variables (pydantic-settings), with local
defaults. README.md's Configuration table is checked against this model (tests/unit/test_settings.py).

An empty variable counts as unset. Values given to the constructor win over the environment, so tests and bench
scripts build variants with ``Settings(app_id=...)`` or ``settings.model_copy(update={...})``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import AliasChoices, Field, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from esc.contract.field_cap import MAX_FIELDS_PER_SOURCE


def _env_alias(name: str) -> Any:
    return AliasChoices(name, name.lower())


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="ESC_", env_ignore_empty=True, extra="ignore", frozen=True, populate_by_name=True
    )

    state_dir: Path = Field(
        default_factory=lambda: Path.cwd() / "state",
        description="all local state: stack data and logs, worker state, embedded store",
    )
    cache_dir: Path = Field(
        default_factory=lambda: Path.home() / ".cache" / "esc",
        description="downloads and builds (jars, Weaviate binary, Maven and Go caches, TPC-H data)",
    )
    host: str = Field(default="127.0.0.1", description="address services and the worker bind to")
    kafka_port: int = 9092
    kafka_controller_port: int = 9093
    neo4j_port: int = 7687
    neo4j_page_cache_mb: int = Field(default=1024, ge=16,
        description="page cache of the Neo4j that `esc stack up` starts (MiB; memory is taken as the store grows)",
    )
    weaviate_port: int = 8080
    weaviate_grpc_port: int = 50051
    # Weaviate's internal cluster ports: gossip (and data = gossip + 1), raft (and its RPC = raft + 1).
    weaviate_gossip_port: int = 7946
    weaviate_raft_port: int = 8300
    prometheus_port: int = 19090
    web_port: int = 6066
    # Set ESC_KAFKA_BOOTSTRAP to use Kafka mode explicitly; empty means "probe the local stack".
    kafka_bootstrap_env: str = Field(default="", validation_alias=_env_alias("ESC_KAFKA_BOOTSTRAP"),
        description="use an existing Kafka; set it to force Kafka mode",
    )
    neo4j_uri_env: str = Field(default="", validation_alias=_env_alias("ESC_NEO4J_URI"))
    weaviate_url_env: str = Field(default="", validation_alias=_env_alias("ESC_WEAVIATE_URL"))
    app_id: str = Field(default="esc", description="Faust app id, consumer group, contract id, namespaces")
    # Topics default to the app id's: two apps on one Kafka never share a topic unless told to.
    topic_prefix: str = ""
    llm_base_url: str = ""
    llm_model: str = "gpt-4o-mini"
    llm_api_key: str = Field(default="none", repr=False)
    llm_timeout: float = Field(default=60.0, ge=0.1, description="seconds for one LLM request")
    llm_retries: int = Field(default=2, ge=0, description="retries of one LLM request")
    llm_max_calls: int = Field(default=12, ge=1, description="chat calls per operation")
    llm_deadline: float = Field(default=300.0, ge=0.1, description="seconds per operation, all calls")
    llm_stream: bool = Field(default=True, description="two-pass LLM discovery of new sources in the stream")
    llm_stream_queue: int = Field(default=16, ge=1, description="stream discovery jobs waiting at most")
    # Bearer token for the HTTP API's data endpoints; required to bind the API beyond loopback.
    api_token: str = Field(default="", repr=False)
    corpus_min_files: int = Field(
        default=50, ge=2, description="similar files in one directory that make it one source (a corpus)"
    )
    embedder: str = Field(default="", description="minilm | hashing | openai; empty: minilm if installed")
    embed_base_url: str = ""
    embed_model: str = ""
    embed_api_key: str = Field(default="", repr=False)
    embed_dim: int | None = Field(default=None, ge=1)
    embed_model_path: str = ""
    embed_tokenizer_path: str = ""
    columnar: bool = Field(default=True, description="CSV/TSV files read as whole Arrow tables (embedded ingest; the worker's profiles)")
    reinfer_seconds: float = Field(
        default=1.0, ge=0.0,
        description="the contract agent re-infers keys and links of settled sources at most this often while their profiles only grow (0: at every change); a tick runs a due one",
    )
    child_send: bool = Field(default=True, description="the Faust worker's profiling child sends a profiled CSV/TSV file's records itself (false: the worker reads them record by record)")
    max_fields: int = Field(
        default=MAX_FIELDS_PER_SOURCE, ge=1, description="fields per source; later names go to the _overflow map"
    )

    @model_validator(mode="after")
    def _topic_prefix_defaults_to_app_id(self) -> Settings:
        if not self.topic_prefix:
            object.__setattr__(self, "topic_prefix", self.app_id)
        return self

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

    def replace(self, **changes: Any) -> Settings:
        """A copy with ``changes`` (validated like the environment's values)."""
        return type(self).model_validate({**self.model_dump(), **changes})


def load() -> Settings:
    return Settings()
