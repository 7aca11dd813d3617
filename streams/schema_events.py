"""Keys and values on esc.schema.contracts (the schema-diff CloudEvent itself is agents.contract_agent.diff_event).

Contracts topic keys: ``<contract id>`` always holds the latest version (what a subscriber wants), and
``<contract id>@v<N>`` holds version N forever (compaction keeps one message per key), so any version can be read
back without a separate store.
"""

from __future__ import annotations

from esc.contract import serde
from esc.contract.model import Contract


def latest_key(contract_id: str) -> bytes:
    return contract_id.encode("utf-8")


def version_key(contract_id: str, version: int) -> bytes:
    return f"{contract_id}@v{version}".encode()


def parse_contract(value: bytes) -> Contract:
    """A contract from a contracts-topic value (a CloudEvent in structured mode, streams/ce_binding.py)."""
    from esc.streams.ce_binding import contract_data

    return serde.from_dict(contract_data(value))
