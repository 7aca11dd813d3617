"""Build store clients from settings (the only place store clients are constructed). Stack stores come wrapped
in ``agents.stores.resilient``: writes wait out an outage, and each server is a ``Dependency`` on ``/readyz``."""

from __future__ import annotations

from agents.stores.base import GraphStore, VectorStore
from agents.stores.resilient import Dependency, ResilientGraphStore, ResilientVectorStore
from esc.settings import Settings

DEPENDENCIES: dict[str, Dependency] = {}
"""One per external service of this process (kafka, neo4j, weaviate), shared by every client of it."""


def dependency(name: str) -> Dependency:
    if name not in DEPENDENCIES:
        DEPENDENCIES[name] = Dependency(name)
    return DEPENDENCIES[name]


def neo4j_transient(exc: BaseException) -> bool:
    """Connection lost or refused, a leader switch, a deadlock: retry. A transaction over the memory cap is the
    call's own fault (a retry would fail the same way): raise."""
    import neo4j.exceptions as e

    if isinstance(exc, e.TransientError):
        return "MemoryPoolOutOfMemory" not in (exc.code or "")
    return isinstance(exc, (e.ServiceUnavailable, e.SessionExpired, e.IncompleteCommit, OSError))


def weaviate_transient(exc: BaseException) -> bool:
    """Connection refused, timeouts, gRPC UNAVAILABLE / DEADLINE_EXCEEDED (also inside a failed batch): retry."""
    import grpc
    import weaviate.exceptions as e

    if isinstance(exc, e.AioRpcError | grpc.RpcError):
        code = exc.code() if callable(getattr(exc, "code", None)) else None
        return code in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED)
    if isinstance(exc, e.WeaviateConnectionError | e.WeaviateGRPCUnavailableError | e.WeaviateTimeoutError
                  | e.WeaviateRetryError | e.WeaviateStartUpError | OSError):  # fmt: skip
        return True
    if isinstance(exc, e.WeaviateInsertManyAllFailedError):  # every object of a batch: the server, not the data
        return True
    cause = exc.__cause__ or exc.__context__
    if isinstance(exc, e.WeaviateBaseError) and cause is not None and cause is not exc:
        return weaviate_transient(cause)
    text = str(exc).lower()
    return isinstance(exc, e.WeaviateBaseError) and ("connection refused" in text or "unavailable" in text)


def graph_store(settings: Settings) -> GraphStore:
    from agents.stores.neo4j import Neo4jGraphStore, label_namespace

    def make() -> GraphStore:
        return Neo4jGraphStore(settings.neo4j_uri, namespace=label_namespace(settings.app_id))

    return ResilientGraphStore(make, dependency("neo4j"), neo4j_transient)


def vector_store(settings: Settings) -> VectorStore:
    from agents.stores.weaviate import WeaviateVectorStore

    def make() -> VectorStore:
        return WeaviateVectorStore(settings.weaviate_url, grpc_port=settings.weaviate_grpc_port)

    return ResilientVectorStore(make, dependency("weaviate"), weaviate_transient)
