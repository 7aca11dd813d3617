"""Fixtures that connect to the running stack (``esc stack up``; scripts/test starts it before pytest).

A fixture whose server does not answer FAILS (never skips) with the service, its address and its log file, so a
broken stack can never pass as "all integration tests skipped". Addresses come from esc/settings.py, so the same
tests run against the native stack or any other (ESC_KAFKA_BOOTSTRAP, ESC_NEO4J_URI, ESC_WEAVIATE_URL, ...).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import urlparse

import pytest

from esc.settings import Settings, load
from esc.stack import log_path
from esc.stack.process import http_ok, port_open


@pytest.fixture(scope="session")
def stack_settings() -> Settings:
    return load()


def require(settings: Settings, service: str, address: str, check: Callable[[], Any]) -> None:
    """Fail the test unless ``check()`` succeeds, naming the service, its address and its log file."""
    try:
        ok = check()
    except Exception as exc:
        reason = f"{type(exc).__name__}: {exc}"
    else:
        if ok is not False:
            return
        reason = "readiness check answered 'not ready'"
    pytest.fail(
        f"{service} is not reachable at {address} ({reason}). Start the stack with `esc stack up` "
        f"(`esc stack status` shows what is down); {service} log: {log_path(settings, service)}",
        pytrace=False,
    )


@pytest.fixture(scope="session")
def kafka_bootstrap(stack_settings: Settings) -> str:
    from esc.stack.kafka import describe_cluster

    bootstrap = stack_settings.kafka_bootstrap
    require(stack_settings, "kafka", bootstrap, lambda: describe_cluster(bootstrap, timeout_s=5.0))
    return bootstrap


@pytest.fixture(scope="session")
def neo4j_driver(stack_settings: Settings) -> Iterator[Any]:
    from neo4j import GraphDatabase

    from esc.stack.neo4j import bolt_ping

    uri = stack_settings.neo4j_uri
    require(stack_settings, "neo4j", uri, lambda: bolt_ping(uri, timeout_s=5.0))
    driver = GraphDatabase.driver(uri, auth=None, notifications_min_severity="OFF")
    try:
        yield driver
    finally:
        driver.close()


@pytest.fixture(scope="session")
def weaviate_client(stack_settings: Settings) -> Iterator[Any]:
    import weaviate

    url = urlparse(stack_settings.weaviate_url)
    host, port = url.hostname or stack_settings.host, url.port or stack_settings.weaviate_port
    grpc_port = stack_settings.weaviate_grpc_port

    def check() -> bool:
        return http_ok(f"{stack_settings.weaviate_url}/v1/.well-known/ready") and port_open(host, grpc_port)

    require(stack_settings, "weaviate", f"{stack_settings.weaviate_url} (grpc {grpc_port})", check)
    client = weaviate.connect_to_local(host=host, port=port, grpc_port=grpc_port)
    try:
        yield client
    finally:
        client.close()


@pytest.fixture(scope="session")
def prometheus_url(stack_settings: Settings) -> str:
    url = stack_settings.prometheus_url
    require(stack_settings, "prometheus", url, lambda: http_ok(f"{url}/-/ready"))
    return url


@pytest.fixture(autouse=True)
def _wipe_worker_graphs(request: pytest.FixtureRequest) -> Iterator[None]:
    """After each test, the graphs (nodes and constraints) of the workers it made: tests delete their nodes, but
    leftover constraints made every later constraint slower (tests/integration/worker.py ``wipe_graph``)."""
    from tests.integration.worker import CREATED, wipe_graph

    before = len(CREATED)
    yield
    made = CREATED[before:]
    if made:
        driver = request.getfixturevalue("neo4j_driver")
        for w in made:
            wipe_graph(driver, w.label(""))
        del CREATED[before:]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test in this folder needs the real stack: mark it ``integration`` even if its module forgot to, so
    ``-m "not integration"`` never runs it against servers that are not there."""
    here = __file__.rsplit("/", 1)[0]
    for item in items:
        if str(item.path).startswith(here + "/"):
            item.add_marker(pytest.mark.integration)
