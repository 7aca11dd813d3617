"""The worker's HTTP surface, defined once for both runtimes (both serve through aiohttp: the embedded runtime
with its own ``web.Application``, the Faust worker on the aiohttp application of Faust's web server).

| route | what |
|---|---|
| ``GET /metrics`` | Prometheus text (``agents.metrics``) |
| ``GET /healthz`` | alive: mode, contract version, backfill, deferred records, vectors pending, the contract agent's step |
| ``GET /readyz`` | ready (200) or not (503) with the reasons (``readiness``) |
| ``GET /contract`` | the contract the worker applies (404 before the first) |
| ``POST /v1/ask`` | a question (JSON ``QueryRequest``); the answer envelope; 400 for a bad request |
| ``GET /v1/schema`` | the live schema card of the query service |

``POST /v1/ask``, ``GET /v1/schema`` and ``GET /contract`` need the bearer token when ``ESC_API_TOKEN`` is set
(``http_auth.middleware``). A runtime passes a :class:`Surface`: what each route reads.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from esc.agents import metrics

if TYPE_CHECKING:
    from aiohttp import web

    from esc.agents.query.service import QueryService
    from esc.contract.model import Contract

ROUTES = (("GET", "/metrics"), ("GET", "/healthz"), ("GET", "/readyz"), ("GET", "/contract"), ("POST", "/v1/ask"),
          ("GET", "/v1/schema"))  # fmt: skip


@dataclass
class Surface:
    """What the routes read; every callable is cheap and runs on the event loop."""

    health: Callable[[], dict[str, Any]]
    readiness: Callable[[], dict[str, Any]]
    contract: Callable[[], Contract | None]
    query: Callable[[], QueryService | None]


def add_routes(router: web.UrlDispatcher, surface: Surface) -> None:
    """Register every route of :data:`ROUTES` on an aiohttp router."""
    from aiohttp import web

    async def metrics_page(request: web.Request) -> web.Response:
        return web.Response(body=metrics.render(), headers={"Content-Type": "text/plain; version=0.0.4; charset=utf-8"})

    async def healthz(request: web.Request) -> web.Response:
        return web.json_response(surface.health())

    async def readyz(request: web.Request) -> web.Response:
        report = surface.readiness()
        return web.json_response(report, status=200 if report["ready"] else 503)

    async def contract_page(request: web.Request) -> web.Response:
        contract = surface.contract()
        if contract is None:
            return web.json_response({"error": "no contract yet"}, status=404)
        return web.json_response(contract.model_dump(mode="json", by_alias=True))

    async def ask_page(request: web.Request) -> web.Response:
        service = surface.query()
        if service is None:
            return web.json_response({"error": "questions are not served by this runtime"}, status=404)
        env = await service.answer_async(await request.read())
        bad = env.route == "abstain" and (env.reason or "").startswith("bad request")
        return web.json_response(env.model_dump(mode="json"), status=400 if bad else 200)

    async def schema_page(request: web.Request) -> web.Response:
        service = surface.query()
        if service is None:
            return web.json_response({"error": "questions are not served by this runtime"}, status=404)
        card = await asyncio.to_thread(service.schema_card)
        return web.json_response(json.loads(json.dumps(card, default=str)))

    handlers = {"/metrics": metrics_page, "/healthz": healthz, "/readyz": readyz, "/contract": contract_page,
                "/v1/ask": ask_page, "/v1/schema": schema_page}  # fmt: skip
    for method, path in ROUTES:
        router.add_route(method, path, handlers[path])
