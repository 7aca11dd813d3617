"""Identity of embedded graph nodes: a (label, identity key) as its canonical JSON and its 64-bit ``eid``, and a
bounded memo of both for the write path (each endpoint hashed and dumped once, not once per edge)."""

from __future__ import annotations

import hashlib
import json
import math
from typing import Any

from esc.agents.stores.cypher import to_properties


def _finite(props: dict[str, Any]) -> dict[str, Any]:
    """JSON has no NaN/Infinity: a non-finite float is left out, as a missing value."""
    return {k: v for k, v in props.items() if not (isinstance(v, float) and not math.isfinite(v))}


def _canonical(value: Any) -> Any:
    """Key values compare as Cypher does: 1 and 1.0 are the same key."""
    if isinstance(value, float) and math.isfinite(value) and value.is_integer() and abs(value) < 2**63:
        return int(value)
    return value


_KEY_JSON = json.JSONEncoder(sort_keys=True, ensure_ascii=False)  # json.dumps(sort_keys=True, ensure_ascii=False)
_COMPACT = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))  # one encoder, not one per dumps() call


def key_json(key: dict[str, Any]) -> str:
    converted = to_properties(key)
    return _KEY_JSON.encode({k: _canonical(v) for k, v in converted.items()})


def entity_id(label: str, key: dict[str, Any]) -> int:
    """Deterministic 64-bit id of (label, identity key)."""
    digest = hashlib.sha1(f"{label}\x1f{key_json(key)}".encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


Endpoint = tuple[int, str, str]
"""(eid, key_json, the key as node properties in JSON) of one (label, identity key)."""

ENDPOINT_CACHE = 200_000
"""Endpoints remembered per store (a record's own key is an edge's source, and many edges share a target: each
is hashed and dumped once, not once per edge)."""


def _endpoint_of(label: str, key: dict[str, Any]) -> Endpoint:
    kj = key_json(key)
    eid = int.from_bytes(hashlib.sha1(f"{label}\x1f{kj}".encode()).digest()[:8], "big", signed=True)
    return eid, kj, _dumps(_finite(to_properties(key)))


def _dumps(props: dict[str, Any]) -> str:
    return _COMPACT.encode(props)


class EndpointMemo:
    """``_endpoint_of`` behind a bounded memo, keyed by label and key values with their types (1, 1.0 and True
    are different keys to a dict lookup's equality but not to ``key_json``: the type keeps them apart)."""

    def __init__(self, size: int = ENDPOINT_CACHE) -> None:
        self.size = size
        self._memo: dict[tuple[Any, ...], Endpoint] = {}

    def get(self, label: str, key: dict[str, Any]) -> Endpoint:
        try:
            memo = (label, tuple(key.items()), tuple(map(type, key.values())))
            hit = self._memo.get(memo)
        except TypeError:  # an unhashable key value: not remembered
            return _endpoint_of(label, key)
        if hit is None:
            if len(self._memo) >= self.size:
                self._memo.clear()
            hit = self._memo[memo] = _endpoint_of(label, key)
        return hit
