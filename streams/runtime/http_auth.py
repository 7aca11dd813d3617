"""Bearer-token access to the HTTP API, the same for both runtimes.

``ESC_API_TOKEN`` set: the data endpoints (``POST /v1/ask``, ``GET /v1/schema``, ``GET /contract``) answer 401
without ``Authorization: Bearer <token>``. ``/metrics`` and ``/healthz`` stay open, as Prometheus and process
supervisors expect. Binding beyond loopback without a token is refused at start (``check_bind``): an open question
endpoint on a network is a data leak.
"""

from __future__ import annotations

import hmac
import ipaddress
from collections.abc import Mapping
from typing import Any

from esc.contract.errors import InsecureBind

PROTECTED = ("/v1/ask", "/v1/schema", "/contract")
UNAUTHORIZED = {"error": "unauthorized: send Authorization: Bearer <ESC_API_TOKEN>"}
CHALLENGE = {"WWW-Authenticate": 'Bearer realm="esc"'}


def is_loopback(host: str) -> bool:
    if host in ("localhost", "ip6-localhost"):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False  # a host name other than localhost may resolve anywhere


def check_bind(host: str, token: str) -> None:
    if not token and not is_loopback(host):
        raise InsecureBind(
            f"refusing to serve the HTTP API on {host!r} without a token: set ESC_API_TOKEN (clients then send "
            "'Authorization: Bearer <token>'), or bind to 127.0.0.1 with ESC_HOST"
        )


def protected(path: str) -> bool:
    return any(path == p or path.startswith(p + "/") for p in PROTECTED)


def authorized(path: str, headers: Mapping[str, str], token: str) -> bool:
    """True when ``path`` needs no token, or the request's bearer token equals ``token`` (constant-time)."""
    if not token or not protected(path):
        return True
    scheme, _, given = (headers.get("Authorization") or "").partition(" ")
    return scheme.lower() == "bearer" and hmac.compare_digest(given.strip().encode(), token.encode())


def bearer(token: str) -> dict[str, str]:
    """Request headers for a client of the API (empty without a token)."""
    return {"Authorization": f"Bearer {token}"} if token else {}


def middleware(token: str) -> Any:
    """An aiohttp middleware answering 401 where ``authorized`` says no (both runtimes serve through aiohttp)."""
    from aiohttp import web

    @web.middleware
    async def check(request: web.Request, handler: Any) -> web.StreamResponse:
        if not authorized(request.path, request.headers, token):
            return web.json_response(UNAUTHORIZED, status=401, headers=CHALLENGE)
        return await handler(request)

    return check
