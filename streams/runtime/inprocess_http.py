"""HTTP for the embedded runtime: /metrics, /healthz, /readyz, /contract, POST /v1/ask, GET /v1/schema (aiohttp)."""

from __future__ import annotations

import asyncio
import logging
import signal
from pathlib import Path
from typing import TYPE_CHECKING

from esc.agents.ingest import Ingestor
from esc.agents.query.service import QueryService
from esc.settings import Settings
from esc.streams.runtime.http_auth import check_bind, middleware
from esc.streams.runtime.http_surface import Surface, add_routes
from esc.streams.runtime.readiness import readiness

if TYPE_CHECKING:
    from esc.streams.runtime.inprocess import InProcessRuntime

log = logging.getLogger(__name__)


async def serve(runtime: InProcessRuntime, host: str, port: int, tick_seconds: float, token: str = "") -> None:
    """Watch the folder, keep contract, graph and vectors current, and serve HTTP until cancelled."""
    from aiohttp import web

    check_bind(host, token)

    if runtime.watcher is None:
        raise ValueError("no data folder: open the runtime with data_dir to serve")
    if runtime.query is None:
        runtime.query = query_service(runtime.ingestor)
    if runtime.contract is not None:
        runtime.query.on_contract(runtime.contract)

    app = web.Application(middlewares=[middleware(token)])
    # the embedded stores are in this process: ready unless a backfill stopped moving
    add_routes(app.router, Surface(runtime.health, lambda: readiness({}, None, runtime.worker.tracker),
                                   lambda: runtime.contract, lambda: runtime.query))  # fmt: skip
    runner = web.AppRunner(app)
    await runner.setup()
    await web.TCPSite(runner, host, port).start()
    log.info("embedded ESC serving on http://%s:%s (/metrics, /healthz, /readyz, /contract, /v1/ask, /v1/schema)", host, port)

    async def ticker() -> None:
        while True:
            await asyncio.sleep(tick_seconds)
            await runtime.tick()

    runtime.start()
    await runtime.pump()
    tick_task = asyncio.create_task(ticker())
    try:
        await runtime.watcher.run()
    finally:
        tick_task.cancel()
        await runtime.stop()
        await runner.cleanup()




def query_service(ingestor: Ingestor, settings: Settings | None = None) -> QueryService:
    """The question service over the runtime's own stores (DuckDB allows one process: questions to a running
    embedded ESC go through its HTTP API); the LLM planner when ``settings`` configure one. Built without
    ``stores.query_service``, which would reach for the stack's stores."""
    from esc.agents.llm import config_from_settings
    from esc.agents.query.llm_planner import LLMPlanner
    from esc.agents.query.service import LazyEmbedder

    config = config_from_settings(settings) if settings is not None else None
    return QueryService(
        lambda: ingestor.graph,
        lambda: ingestor.vectors,
        LazyEmbedder(lambda: ingestor.embedder),
        ingestor.collection,
        LLMPlanner(config) if config is not None else None,
    )


def serve_embedded(settings: Settings, data_dir: Path) -> None:
    """``esc up --data DIR --embedded``: watch, keep the stores current, serve HTTP (metrics, health, contract,
    ``POST /v1/ask``) until Ctrl-C / SIGTERM."""
    from esc.streams.runtime.gc_tuning import tune_gc
    from esc.streams.runtime.inprocess import open_runtime

    runtime, close = open_runtime(settings, data_dir)
    runtime.query = query_service(runtime.ingestor, settings)
    tune_gc()

    async def main() -> None:
        task = asyncio.current_task()
        loop = asyncio.get_running_loop()
        if task is not None:
            for sig in (signal.SIGTERM, signal.SIGINT):
                loop.add_signal_handler(sig, task.cancel)
        try:
            await runtime.serve(settings.host, settings.web_port, token=settings.api_token)
        except asyncio.CancelledError:
            log.info("embedded ESC stopping")

    try:
        asyncio.run(main())
    finally:
        close()
