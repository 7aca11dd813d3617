"""The TCP probe behind /readyz for Neo4j and Weaviate: it marks an unreachable server down even when no call is
made, clears only an outage it found itself, and never fights the store calls' own view."""

from __future__ import annotations

import asyncio
import socket

from esc.agents.stores.resilient import Dependency
from esc.streams.runtime.readiness import hostport, watch_tcp


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])  # nothing listens once the socket is closed


async def _probe(dep: Dependency, target: str, seconds: float = 0.2) -> None:
    task = asyncio.create_task(watch_tcp(dep, target, every=0.02))
    await asyncio.sleep(seconds)
    task.cancel()


def test_an_unreachable_server_is_down_and_comes_back() -> None:
    dep = Dependency("neo4j-test")
    port = _closed_port()
    asyncio.run(_probe(dep, f"127.0.0.1:{port}"))
    assert not dep.up and "nothing accepts connections" in dep.error

    async def back() -> None:
        server = await asyncio.start_server(lambda r, w: w.close(), "127.0.0.1", port)
        async with server:
            found = asyncio.create_task(watch_tcp(dep, f"127.0.0.1:{port}", every=0.02))
            await asyncio.sleep(0.2)
            found.cancel()

    # a fresh probe did not find this outage: it leaves it to the store calls
    asyncio.run(back())
    assert not dep.up


def test_the_probe_clears_an_outage_it_found() -> None:
    dep = Dependency("weaviate-test")

    async def run() -> None:
        server = await asyncio.start_server(lambda r, w: w.close(), "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        server.close()
        await server.wait_closed()
        task = asyncio.create_task(watch_tcp(dep, f"127.0.0.1:{port}", every=0.02))
        await asyncio.sleep(0.15)
        assert not dep.up
        again = await asyncio.start_server(lambda r, w: w.close(), "127.0.0.1", port)
        async with again:
            await asyncio.sleep(0.2)
            assert dep.up
        task.cancel()

    asyncio.run(run())


def test_hostport_of_service_urls() -> None:
    assert hostport("bolt://127.0.0.1:7787") == "127.0.0.1:7787"
    assert hostport("http://localhost:8180") == "localhost:8180"
    assert hostport("bolt://db") == "db:7687"
