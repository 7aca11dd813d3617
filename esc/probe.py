"""Cheap reachability checks used to choose a mode (no client libraries needed)."""

from __future__ import annotations

import socket


def tcp_open(hostport: str, timeout: float = 0.5) -> bool:
    host, _, port = hostport.rpartition(":")
    try:
        with socket.create_connection((host or "127.0.0.1", int(port)), timeout=timeout):
            return True
    except (OSError, ValueError):
        return False


def kafka_reachable(bootstrap: str) -> bool:
    """True if any bootstrap server accepts a TCP connection."""
    return any(tcp_open(server.strip()) for server in bootstrap.split(",") if server.strip())
