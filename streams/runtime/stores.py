"""Build store clients from settings (the only place store clients are constructed)."""

from __future__ import annotations

from agents.stores.base import GraphStore, VectorStore
from esc.settings import Settings


def graph_store(settings: Settings) -> GraphStore:
    from agents.stores.neo4j import Neo4jGraphStore

    return Neo4jGraphStore(settings.neo4j_uri)


def vector_store(settings: Settings) -> VectorStore:
    from agents.stores.weaviate import WeaviateVectorStore

    return WeaviateVectorStore(settings.weaviate_url, grpc_port=settings.weaviate_grpc_port)
