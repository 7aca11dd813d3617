"""Embedded stores: the graph and vector ports on local DuckDB files, no servers (issue 6).

``open_embedded(state_dir)`` opens (or creates) ``<state_dir>/embedded/graph.duckdb`` and
``<state_dir>/embedded/vectors.duckdb``; the data is there again after a restart.
"""

from __future__ import annotations

from pathlib import Path

from esc.agents.stores.embedded.graph import EmbeddedGraphStore
from esc.agents.stores.embedded.sql import InvalidPlan, compile_plan
from esc.agents.stores.embedded.vectors import EmbeddedVectorStore

__all__ = [
    "EmbeddedGraphStore",
    "EmbeddedVectorStore",
    "InvalidPlan",
    "compile_plan",
    "embedded_dir",
    "open_embedded",
]


def embedded_dir(state_dir: str | Path) -> Path:
    return Path(state_dir) / "embedded"


def open_embedded(state_dir: str | Path) -> tuple[EmbeddedGraphStore, EmbeddedVectorStore]:
    folder = embedded_dir(state_dir)
    return EmbeddedGraphStore(folder / "graph.duckdb"), EmbeddedVectorStore(folder / "vectors.duckdb")
