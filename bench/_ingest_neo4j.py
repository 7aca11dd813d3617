"""``bench/ingest.py``: reading and wiping the bench's part of the shared stack (Neo4j labels and source records,
baseline constraints, the run's Kafka topics and Weaviate collection)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from bench._baselines import q
from bench._ingest_names import SUBDIR
from esc.settings import Settings

# ------------------------------------------------------------------------------------------------ neo4j


def driver(settings: Settings) -> Any:
    import neo4j

    return neo4j.GraphDatabase.driver(settings.neo4j_uri, auth=None, notifications_min_severity="OFF")


def count(drv: Any, label: str, real_only: bool = True) -> int:
    where = " WHERE n._stub IS NULL" if real_only else ""
    recs, _, _ = drv.execute_query(f"MATCH (n:{q(label)}){where} RETURN count(n) AS c")
    return int(recs[0]["c"])


def wipe(drv: Any, labels: list[str], batch: int = 2_000) -> None:
    """Delete our labels' nodes, the source records they derive from, and orphaned bench source records, in
    bounded transactions (a single ``CALL {} IN TRANSACTIONS`` over 600k nodes planned an Eager step that held
    them all and ran Neo4j's 1 GB heap out of memory)."""

    def drain(query: str, **params: Any) -> None:
        while drv.execute_query(query, n=batch, **params).records[0]["c"]:
            pass

    for label in labels:  # leaves first (lineitem before part): a node's DETACH DELETE costs its relationships
        drain(
            f"MATCH (n:{q(label)}) WITH n LIMIT $n OPTIONAL MATCH (n)-[:DERIVED_FROM]->(r) "
            "DETACH DELETE n, r RETURN count(*) AS c"
        )
    # Earlier runs' graphs (each run's app id namespaces its labels, agents/stores/neo4j.py), a label at a time,
    # relationships first: a run stopped halfway leaves nodes with many edges, whose DETACH DELETE in batches of
    # nodes ran out of Neo4j's transaction memory.
    for (label,) in drv.execute_query("CALL db.labels() YIELD label WHERE label STARTS WITH 'escbench-' "
                                      "RETURN label").records:  # fmt: skip
        drain(f"MATCH (n:{q(label)})-[r]-() WITH DISTINCT r LIMIT $n DELETE r RETURN count(*) AS c")
        drain(f"MATCH (n:{q(label)}) WITH n LIMIT $n DELETE n RETURN count(*) AS c")
    drain(
        "MATCH (r:SourceRecord) WHERE r.file STARTS WITH $dir OR r.record_id STARTS WITH 'esc_bench_' "
        "WITH r LIMIT $n DETACH DELETE r RETURN count(*) AS c",
        dir=SUBDIR + "/",
    )


def drop_run_schema(drv: Any, prefix: str = "escbench-") -> int:
    """The constraints and indexes of bench runs' namespaced labels (a worker's keys, its chunks' index)."""
    from tests.integration.worker import drop_schema

    return drop_schema(drv, prefix)


def drop_baseline_constraints(drv: Any, labels: list[str]) -> None:
    for label in labels:
        drv.execute_query(f"DROP CONSTRAINT {q('esc_bench_' + label)} IF EXISTS")


# ------------------------------------------------------------------------------------------------ cleanup


async def _drop_topics(settings: Settings, run_id: str) -> list[str]:
    from aiokafka.admin import AIOKafkaAdminClient

    admin = AIOKafkaAdminClient(bootstrap_servers=settings.kafka_bootstrap, request_timeout_ms=15000)
    await admin.start()
    try:
        mine = [t for t in await admin.list_topics() if t.startswith(run_id)]
        if mine:
            await admin.delete_topics(mine)
        return mine
    finally:
        await admin.close()


def drop_collection(settings: Settings, run_id: str) -> None:
    from urllib.parse import urlparse

    import weaviate

    from esc.agents.stores.weaviate import collection_name

    url = urlparse(settings.weaviate_url)
    client = weaviate.connect_to_local(host=url.hostname or "127.0.0.1", port=url.port or 8080,
                                       grpc_port=settings.weaviate_grpc_port)
    try:
        name = collection_name(run_id)
        if client.collections.exists(name):
            client.collections.delete(name)
    finally:
        client.close()


@contextmanager
def cleanup_step(errors: list[str], what: str) -> Iterator[None]:
    try:
        yield
    except Exception as exc:
        errors.append(f"cleanup {what}: {type(exc).__name__}: {exc}")
