"""Opening the in-process runtime over the embedded stores, and ``esc ingest --embedded`` (one ingest, then exit)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

from esc.agents.embedding import Embedder, get_embedder
from esc.agents.stores.base import GraphStore, VectorStore
from esc.settings import Settings
from esc.streams.runtime.embedded_columnar import (
    columnar_lane as columnar_lane,  # re-exported for inprocess.py
)
from esc.streams.runtime.inprocess import INGEST_SETTLE, InProcessRuntime, Progress
from esc.streams.runtime.inprocess_bus import InProcessBus
from esc.streams.runtime.inprocess_files import RunSummary, state_folder


def open_runtime(
    settings: Settings,
    data_dir: Path | None,
    *,
    graph: GraphStore | None = None,
    vectors: VectorStore | None = None,
    embedder: Embedder | None = None,
    bus: InProcessBus | None = None,
    settle: float = 0.5,
) -> tuple[InProcessRuntime, Callable[[], None]]:
    """A runtime over the embedded stores in ``settings.state_dir`` (or the stores given); and its closer."""
    opened: list[GraphStore | VectorStore] = []
    if graph is None or vectors is None:
        from esc.agents.stores.embedded import open_embedded

        g, v = open_embedded(settings.state_dir)
        graph, vectors = graph or g, vectors or v
        opened = [g, v]
    runtime = InProcessRuntime(
        graph,
        vectors,
        embedder or get_embedder(),
        settings.state_dir,
        data_dir,
        contract_id=settings.app_id,
        bus=bus or InProcessBus(settings.topic_prefix),
        settle=settle,
    )

    def close() -> None:
        runtime.close()
        for store in opened:
            store.close()

    return runtime, close


def ingest_embedded(
    settings: Settings, data_dir: Path, embedder: Embedder | None = None, progress: Progress | None = None
) -> RunSummary:
    """``esc ingest DIR --embedded``: ingest once into the embedded stores and return when everything is current."""
    runtime, close = open_runtime(settings, data_dir, embedder=embedder, settle=INGEST_SETTLE)
    try:
        summary = asyncio.run(runtime.ingest_once(progress))
        if runtime.writer.llm is not None and runtime.writer.llm.wait(settings.llm_deadline):
            asyncio.run(runtime.tick())  # a one-shot ingest writes the LLM pass's version (agents/llm_stream.py)
        if runtime.contract is not None:
            # the first `esc ask --embedded` then reads the grounding instead of building it
            from esc.agents.query.grounding import Grounding

            Grounding.cached(runtime.contract, runtime.ingestor.graph, state_folder(settings.state_dir) / "grounding")
        return summary
    finally:
        close()


