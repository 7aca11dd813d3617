"""Deterministic ids for vector objects (no client import, so pure planning code can use it)."""

from __future__ import annotations

import uuid

_NAMESPACE = uuid.UUID("6f1c1b0e-8f6d-4b8e-9a57-0e5c2b9f0e11")


def object_id(*parts: str) -> str:
    """uuid5 of the parts, so re-delivery of the same chunk overwrites instead of duplicating."""
    return str(uuid.uuid5(_NAMESPACE, "\x1f".join(parts)))
