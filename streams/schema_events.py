"""Schema events on Kafka: one CloudEvent per new version on esc.schema.diffs, full contracts on the compacted
esc.schema.contracts.

Contracts topic keys: ``<contract id>`` always holds the latest version (what a subscriber wants), and
``<contract id>@v<N>`` holds version N forever (compaction keeps one message per key), so any version can be read
back without a separate store.
"""

from __future__ import annotations

from contract import serde
from contract.model import Contract, ContractDiff
from streams.events import CloudEvent

DIFF_EVENT_TYPE = "esc.schema.diff"


def diff_event(diff: ContractDiff, source: str = "esc/contract-agent") -> CloudEvent:
    by_kind = {kind: [item.model_dump() for item in items] for kind, items in sorted(diff.by_kind().items())}
    return CloudEvent(
        source=source,
        type=DIFF_EVENT_TYPE,
        subject=diff.contract_id,
        data={
            "contract_id": diff.contract_id,
            "from_version": diff.from_version,
            "to_version": diff.to_version,
            "added": by_kind,
            "reason": diff.reason,
        },
    )


def latest_key(contract_id: str) -> bytes:
    return contract_id.encode("utf-8")


def version_key(contract_id: str, version: int) -> bytes:
    return f"{contract_id}@v{version}".encode()


def contract_value(contract: Contract) -> bytes:
    return serde.dump_json(contract).encode("utf-8")


def parse_contract(value: bytes) -> Contract:
    return serde.load_json(value.decode("utf-8"))
