"""The contract agent's state as entries of a key-value table with changelog semantics, saved incrementally.

The agent's state is one entry per source (its evidence per file version, completions, settle flags, and the
watermarks of the deltas applied to it) plus two small shared entries: ``contract`` (the contract in use) and
``meta`` (open scans, held sources, settle parameters). After each batch only what changed is written: the
sources the batch touched, ``meta``, and ``contract`` when it is a new object. Saving the whole state after every
batch cost O(sources) per batch, so a folder of 500 small files took O(files^2) (issue 14).

Crash consistency. A source's entry holds the watermarks of the deltas merged into it, so an entry is
self-consistent: a crash between two entries leaves each source either with a delta and its mark, or with neither
(the re-delivered delta is then applied again). ``contract`` and ``meta`` are written before the sources: a
restart that finds a newer contract than its sources re-applies their deltas, which re-derive the same structure
(no new version). The embedded runtime writes every entry of a save in one SQLite transaction anyway; a Kafka
changelog writes them one message each, in that order.

The previous format (one ``state`` entry holding everything, ``ContractAgent.to_state``) is still read.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from esc.agents.profiler import STREAM_CAPS
from esc.agents.scan_groups import ScanGroups
from esc.agents.source_state import SourceState
from esc.contract.field_profile import Caps
from esc.contract.model import Contract

if TYPE_CHECKING:
    from esc.agents.contract_agent import ContractAgent

LEGACY = "state"
CONTRACT = "contract"
META = "meta"
SOURCE = "source:"
ENTRIES_VERSION = 3


def _source_entry(agent: ContractAgent, name: str, marks: Mapping[str, int]) -> str:
    d = agent.sources[name].to_dict()
    d["applied"] = dict(sorted(marks.items()))
    return json.dumps(d, separators=(",", ":"))


def _meta(agent: ContractAgent) -> str:
    return json.dumps(
        {
            "state_version": ENTRIES_VERSION,
            "settle_records": agent.settle_records,
            "settle_seconds": agent.settle_seconds,
            "scans": agent.scans.to_dict(),
            "held": sorted(agent.held),
        },
        separators=(",", ":"),
    )


def changed_entries(agent: ContractAgent, *, everything: bool = False) -> dict[str, str]:
    """The entries to write since the last :func:`mark_saved` (all of them with ``everything``), in write order:
    ``contract``, ``meta``, then sources."""
    out: dict[str, str] = {}
    if everything or agent.contract is not agent.saved_contract:
        out[CONTRACT] = agent.contract.model_dump_json(by_alias=True)
    out[META] = _meta(agent)
    names = set(agent.sources) if everything else agent.touched & set(agent.sources)
    for name in sorted(names):
        marks = {k: agent.applied[k] for k in agent.marks_of.get(name, ())}
        out[SOURCE + name] = _source_entry(agent, name, marks)
    return out


def mark_saved(agent: ContractAgent) -> None:
    agent.touched.clear()
    agent.saved_contract = agent.contract


def load_entries(entries: Mapping[str, str], caps: Caps = STREAM_CAPS, **kwargs: Any) -> ContractAgent:
    """The agent the entries describe (a fresh one when there are none)."""
    from esc.agents.contract_agent import ContractAgent

    if LEGACY in entries and META not in entries:
        agent = ContractAgent.from_state(json.loads(entries[LEGACY]), caps)
        agent.touched = set(agent.sources)  # re-written in the new form at the next save
        return agent
    if META not in entries:
        return ContractAgent(caps=caps, **kwargs)
    meta = json.loads(entries[META])
    if meta.get("state_version") != ENTRIES_VERSION:
        raise ValueError(f"unknown contract agent state version {meta.get('state_version')!r}")
    contract = Contract.model_validate_json(entries[CONTRACT]) if CONTRACT in entries else None
    agent = ContractAgent(contract, settle_records=int(meta["settle_records"]),
                          settle_seconds=float(meta["settle_seconds"]), caps=caps)  # fmt: skip
    agent.scans = ScanGroups.from_dict(meta.get("scans", {}))
    agent.held = set(meta.get("held", []))
    for key, raw in entries.items():
        if not key.startswith(SOURCE):
            continue
        name = key[len(SOURCE) :]
        d = json.loads(raw)
        marks = {k: int(v) for k, v in d.pop("applied", {}).items()}
        agent.applied.update(marks)
        agent.marks_of[name] = set(marks)
        agent.sources[name] = SourceState.from_dict(name, d, caps)
    agent.saved_contract = agent.contract
    agent.reinfer_due = True  # a re-inference a crash cut off runs at the first apply or tick
    return agent
