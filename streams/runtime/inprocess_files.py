"""What the embedded runtime publishes in ``<ESC_STATE_DIR>/inprocess/`` (its topics as files: ``contract.json``,
``contracts/v<N>.json``, ``diffs.jsonl``, ``dlq.jsonl``) read back for the CLI, and the summary of one run."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from esc.contract.model import Contract
from esc.contract.serde import load_json

MAX_REASONS = 20


def state_folder(state_dir: Path) -> Path:
    return state_dir / "inprocess"


def load_contract(state_dir: Path, version: int | None = None) -> Contract | None:
    """The latest contract (or one version) the embedded runtime published in ``state_dir``; None if none yet."""
    folder = state_folder(state_dir)
    path = folder / "contract.json" if version is None else folder / "contracts" / f"v{version}.json"
    return load_json(path.read_text("utf-8")) if path.exists() else None


def load_diffs(state_dir: Path) -> list[dict[str, Any]]:
    """Every schema-diff CloudEvent the embedded runtime published in ``state_dir``, oldest first."""
    path = state_folder(state_dir) / "diffs.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]


@dataclass
class RunSummary:
    files: int = 0  # files delivered (new or changed)
    files_deleted: int = 0
    records: int = 0  # record messages emitted
    tombstones: int = 0
    written: int = 0  # entities written by live batches
    backfilled: int = 0  # records written again by backfills
    dead: int = 0
    dead_reasons: Counter[str] = field(default_factory=Counter)
    deferred: int = 0  # records still waiting for a contract that covers their source
    contract_version: int = 0
    diffs: list[dict[str, Any]] = field(default_factory=list)  # schema-diff CloudEvents published in this run
    seconds: float = 0.0
    structured_seconds: float | None = None  # until every structured record was written (the columnar path)
    columnar_files: int = 0  # files that took the columnar path (streams/runtime/embedded_columnar.py)
    columnar_records: int = 0  # their records (logged and profiled per file, never on the in-process records topic)
    vector_chunks: int = 0  # text chunks its vector lane embedded after the structured rows, and in how long
    vector_seconds: float = 0.0

    def to_json(self) -> dict[str, Any]:
        out = self.__dict__.copy()
        out["dead_reasons"] = dict(self.dead_reasons.most_common(MAX_REASONS))
        return out
