"""docker-compose.yml stays in step with the native stack: same versions, ports, mounts that exist, wiring."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from esc.settings import Settings
from esc.stack.kafka import KAFKA_VERSION
from esc.stack.neo4j import neo4j_version
from esc.stack.services import REPO_ROOT
from esc.stack.weaviate import WEAVIATE_VERSION

COMPOSE = REPO_ROOT / "docker-compose.yml"


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    return dict(yaml.safe_load(COMPOSE.read_text()))


@pytest.fixture(scope="module")
def services(compose: dict[str, Any]) -> dict[str, Any]:
    return dict(compose["services"])


def host_ports(service: dict[str, Any]) -> set[int]:
    return {int(str(p).split(":")[0]) for p in service.get("ports", [])}


def env(service: dict[str, Any]) -> dict[str, str]:
    return {k: str(v) for k, v in service.get("environment", {}).items()}


def test_every_service_is_there(services: dict[str, Any]) -> None:
    assert set(services) == {"kafka", "neo4j", "weaviate", "prometheus", "grafana", "esc"}


def test_images_pin_the_native_versions(services: dict[str, Any]) -> None:
    assert services["kafka"]["image"] == f"apache/kafka:{KAFKA_VERSION}"
    major_minor = ".".join(neo4j_version().split(".")[:2])
    assert services["neo4j"]["image"] == f"neo4j:{major_minor}-community"
    assert services["weaviate"]["image"] == f"semitechnologies/weaviate:{WEAVIATE_VERSION}"
    assert services["prometheus"]["image"].startswith("prom/prometheus:v")
    assert services["grafana"]["image"].startswith("grafana/grafana:")


def test_host_ports_match_the_native_defaults(
    services: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("KAFKA", "NEO4J", "WEAVIATE", "WEAVIATE_GRPC", "PROMETHEUS", "WEB"):
        monkeypatch.delenv(f"ESC_{name}_PORT", raising=False)
    defaults = Settings()
    assert defaults.kafka_port in host_ports(services["kafka"])
    assert defaults.neo4j_port in host_ports(services["neo4j"])
    assert {defaults.weaviate_port, defaults.weaviate_grpc_port} <= host_ports(services["weaviate"])
    assert defaults.prometheus_port in host_ports(services["prometheus"])
    assert 6066 in host_ports(services["esc"])


def test_kafka_is_a_single_kraft_node_with_fast_group_joins(services: dict[str, Any]) -> None:
    e = env(services["kafka"])
    assert e["KAFKA_PROCESS_ROLES"] == "broker,controller"
    assert e["KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR"] == "1"
    assert e["KAFKA_TRANSACTION_STATE_LOG_MIN_ISR"] == "1"
    assert e["KAFKA_GROUP_INITIAL_REBALANCE_DELAY_MS"] == "0"
    assert "HOST://localhost:9092" in e["KAFKA_ADVERTISED_LISTENERS"]
    listeners = dict(item.split(":", 1) for item in e["KAFKA_LISTENER_SECURITY_PROTOCOL_MAP"].split(","))
    advertised = {item.split("://")[0] for item in e["KAFKA_ADVERTISED_LISTENERS"].split(",")}
    assert advertised <= set(listeners)


def test_neo4j_and_weaviate_match_the_native_settings(services: dict[str, Any]) -> None:
    assert env(services["neo4j"])["NEO4J_AUTH"] == "none"
    w = env(services["weaviate"])
    assert w["DEFAULT_VECTORIZER_MODULE"] == "none"
    assert "ENABLE_MODULES" not in w
    assert w["AUTHENTICATION_ANONYMOUS_ACCESS_ENABLED"] == "true"
    assert int(w["DISK_USE_READONLY_PERCENTAGE"]) > 90


def test_bind_mounts_exist_in_the_repo(services: dict[str, Any]) -> None:
    checked = 0
    for name, service in services.items():
        for volume in service.get("volumes", []):
            source = str(volume).split(":")[0]
            if source.startswith("./") and source != "./data":  # ./data is the user's drop folder
                assert (REPO_ROOT / source).exists(), f"{name} mounts missing {source}"
                checked += 1
    assert checked >= 3


def test_prometheus_runs_the_docker_config_with_the_repo_rules(services: dict[str, Any]) -> None:
    command = services["prometheus"]["command"]
    config_arg = next(c for c in command if c.startswith("--config.file="))
    mount = next(v for v in services["prometheus"]["volumes"] if str(v).startswith("./ops/prometheus:"))
    container_dir = mount.split(":")[1]
    config_in_repo = (
        REPO_ROOT / "ops/prometheus" / Path(config_arg.split("=", 1)[1]).relative_to(container_dir)
    )
    config = yaml.safe_load(config_in_repo.read_text())
    rule_glob = config["rule_files"][0]
    assert rule_glob.startswith(container_dir)
    assert list((REPO_ROOT / "ops/prometheus").glob(str(Path(rule_glob).relative_to(container_dir))))
    targets = {
        t for job in config["scrape_configs"] for sc in job.get("static_configs", []) for t in sc["targets"]
    }
    assert "esc:6066" in targets


def test_grafana_provisions_the_prometheus_datasource_and_the_dashboard(services: dict[str, Any]) -> None:
    grafana = REPO_ROOT / "ops" / "grafana"
    datasources = yaml.safe_load((grafana / "provisioning/datasources/prometheus.yml").read_text())[
        "datasources"
    ]
    assert datasources[0]["url"] == "http://prometheus:9090"
    uid = datasources[0]["uid"]
    provider = yaml.safe_load((grafana / "provisioning/dashboards/esc.yml").read_text())["providers"][0]
    mounts = {v.split(":")[1]: v.split(":")[0] for v in services["grafana"]["volumes"]}
    assert mounts[provider["options"]["path"]] == "./ops/grafana/dashboards"
    dashboard = json.loads((grafana / "dashboards/esc.json").read_text())
    exprs = " ".join(t["expr"] for p in dashboard["panels"] for t in p["targets"])
    for metric in (
        "esc_records_in_total",
        "esc_records_out_total",
        "esc_dlq_total",
        "esc_contract_version",
        "esc_schema_diffs_total",
        "esc_freshness_seconds_bucket",
        "esc_query_latency_seconds_bucket",
        "esc_consumer_lag",
        "esc_vector_outbox_pending",
    ):
        assert metric in exprs, metric
    assert all(t["datasource"]["uid"] == uid for p in dashboard["panels"] for t in p["targets"])


def test_esc_service_is_built_here_and_points_at_the_compose_services(services: dict[str, Any]) -> None:
    esc = services["esc"]
    assert esc["build"] == "."
    assert esc["command"] == ["esc", "up", "--data", "/data"]
    e = env(esc)
    assert e["ESC_KAFKA_BOOTSTRAP"] == "kafka:29092"
    assert e["ESC_NEO4J_URI"] == "bolt://neo4j:7687"
    assert e["ESC_WEAVIATE_URL"] == "http://weaviate:8080"
    assert set(esc["depends_on"]) == {"kafka", "neo4j", "weaviate"}
    dockerfile = (REPO_ROOT / "Dockerfile").read_text()
    assert dockerfile.startswith("#") and "FROM python:3.11-slim" in dockerfile
    assert 'pip install ".[stack,embed]"' in dockerfile
    assert 'CMD ["esc", "up", "--data", "/data"]' in dockerfile
    # The image copies these; .dockerignore must not exclude them.
    ignored = {
        line.strip()
        for line in (REPO_ROOT / ".dockerignore").read_text().splitlines()
        if line and line[0] != "#"
    }
    for needed in ("pyproject.toml", "README.md", "contract", "streams", "agents", "esc"):
        assert needed not in ignored and (REPO_ROOT / needed).exists()
