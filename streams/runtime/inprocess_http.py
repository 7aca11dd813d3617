"""HTTP for the embedded runtime: /metrics, /healthz, /readyz, /contract, POST /v1/ask, GET /v1/schema (aiohttp)."""

from __future__ import annotations

import asyncio
import logging
import signal
from pathlib import Path
from typing import TYPE_CHECKING

from esc.agents import metrics
from esc.agents.ingest import Ingestor
from esc.agents.query.service import QueryService
from esc.settings import Settings
from esc.streams.runtime.http_auth import check_bind, middleware
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

    async def metrics_page(request: web.Request) -> web.Response:
        return web.Response(body=metrics.render(), content_type="text/plain", charset="utf-8")

    async def healthz(request: web.Request) -> web.Response:
        return web.json_response(runtime.health())

    async def readyz(request: web.Request) -> web.Response:
        # the embedded stores are in this process: ready unless a backfill stopped moving
        report = readiness({}, None, runtime.worker.tracker)
        return web.json_response(report, status=200 if report["ready"] else 503)

    async def contract_page(request: web.Request) -> web.Response:
        if runtime.contract is None:
            return web.json_response({"error": "no contract yet"}, status=404)
        return web.json_response(runtime.contract.model_dump(mode="json", by_alias=True))

    async def ask_page(request: web.Request) -> web.Response:
        if runtime.query is None:
            return web.json_response({"error": "questions are not served by this runtime"}, status=404)
        try:
            body = await request.json()
        except ValueError:
            return web.json_response({"error": "the body is not JSON"}, status=400)
        envelope = await runtime.query.answer_async(body)
        return web.json_response(envelope.model_dump(mode="json"))

    async def schema_page(request: web.Request) -> web.Response:
        if runtime.query is None:
            return web.json_response({"error": "questions are not served by this runtime"}, status=404)
        return web.json_response(await asyncio.to_thread(runtime.query.schema_card))

    app = web.Application(middlewares=[middleware(token)])
    app.router.add_get("/metrics", metrics_page)
    app.router.add_get("/healthz", healthz)
    app.router.add_get("/readyz", readyz)
    app.router.add_get("/contract", contract_page)
    app.router.add_post("/v1/ask", ask_page)
    app.router.add_get("/v1/schema", schema_page)
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
