"""The chinook eval pack as the pipeline sees it: discovered contract (with entities) and file-connector envelopes."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pytest

from esc.contract.evolve import evolve
from esc.contract.model import Contract
from esc.contract.records import Record
from esc.streams.discover import DiscoveryResult, discover
from esc.streams.events import RecordEnvelope, envelope_for
from esc.streams.readers import read, scan
from tests.paths import CHINOOK


@dataclass
class Pack:
    discovery: DiscoveryResult
    contract: Contract
    records: list[Record]
    envelopes: list[RecordEnvelope]
    files: dict[str, str]  # record source -> file rel
    truth: dict[str, Any]


@pytest.fixture(scope="session")
def chinook() -> Pack:
    if not CHINOOK.exists():
        pytest.fail(f"eval pack missing at {CHINOOK}")
    drop = CHINOOK / "drop"
    result = discover(drop)
    contract, _ = evolve(None, result.contract, "discovered")
    records: list[Record] = []
    envelopes: list[RecordEnvelope] = []
    files: dict[str, str] = {}
    for sf in scan(drop):
        for item in read(sf):
            if isinstance(item, Record):
                records.append(item)
                envelopes.append(envelope_for(item, sf.rel, "hash-" + sf.rel))
                files[item.source] = sf.rel
    truth = json.loads((CHINOOK / "truth.json").read_text("utf-8"))
    return Pack(result, contract, records, envelopes, files, truth)
