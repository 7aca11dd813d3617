"""Build store clients from settings (the only place store clients are constructed). Stack stores come wrapped
in ``agents.stores.resilient``: writes wait out an outage, and each server is a ``Dependency`` on ``/readyz``."""

from __future__ import annotations

from pathlib import Path

from esc.agents.embedding import Embedder
from esc.agents.query.llm_planner import LLMPlanner
from esc.agents.query.service import LazyEmbedder, QueryService
from esc.agents.stores.base import GraphStore, VectorStore
from esc.agents.stores.resilient import Dependency, ResilientGraphStore, ResilientVectorStore
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
    if isinstance(exc, e.WeaviateBaseError) and cause is not None and cause is not exc and weaviate_transient(cause):
        return True  # (else its own message decides: a gRPC UNKNOWN that says "no read replica found")
    text = str(exc).lower()
    # "no read replica found": a shard being unloaded while the server shuts down (or not loaded yet)
    busy = ("connection refused", "unavailable", "no read replica")
    return isinstance(exc, e.WeaviateBaseError) and any(word in text for word in busy)


def graph_store(settings: Settings) -> GraphStore:
    from esc.agents.stores.neo4j import Neo4jGraphStore, label_namespace

    def make() -> GraphStore:
        return Neo4jGraphStore(settings.neo4j_uri, namespace=label_namespace(settings.app_id))

    return ResilientGraphStore(make, dependency("neo4j"), neo4j_transient)


def vector_store(settings: Settings) -> VectorStore:
    from esc.agents.stores.weaviate import WeaviateVectorStore

    def make() -> VectorStore:
        return WeaviateVectorStore(settings.weaviate_url, grpc_port=settings.weaviate_grpc_port)

    return ResilientVectorStore(make, dependency("weaviate"), weaviate_transient)


def query_service(
    settings: Settings,
    *,
    graph: GraphStore | None = None,
    vectors: VectorStore | None = None,
    embedder: Embedder | None = None,
    collection: str | None = None,
    llm: LLMPlanner | None = None,
    use_vectors: bool = True,
    cache_dir: Path | None = None,
) -> QueryService:
    """A query service over the stack stores in ``settings`` (Neo4j, Weaviate collection of ``settings.app_id``),
    created lazily, or over the stores given. The LLM planner is on when ``ESC_LLM_BASE_URL`` is set."""

    def graph_factory() -> GraphStore | None:
        return graph if graph is not None else graph_store(settings)

    def vectors_factory() -> VectorStore | None:
        return vectors if vectors is not None else vector_store(settings)

    if llm is None:
        from esc.agents.llm import config_from_settings

        config = config_from_settings(settings)
        llm = LLMPlanner(config) if config is not None else None
    if embedder is None and use_vectors:
        from esc.agents.embedding import get_embedder

        embedder = LazyEmbedder(get_embedder)
    if collection is None:
        from esc.agents.stores.weaviate import collection_name  # needs the Weaviate client: only without one

        collection = collection_name(settings.app_id)
    return QueryService(
        graph_factory,
        vectors_factory if use_vectors else None,
        embedder,
        collection,
        llm,
        cache_dir=cache_dir,
    )
