"""Runtime-agnostic orchestration of the pipeline: what a worker does with records, profile updates and contracts.

Both runtimes (Faust on Kafka, and the in-process bus) only move messages; the decisions live here:

- ``ContractWriter`` (exactly one per deployment) turns profile updates and file completions into contract
  versions and returns the messages to publish (schema-diff CloudEvents, full contracts).
- ``ExtractionWorker`` (one per worker, ``agents/extraction.py``) applies the current contract to record batches,
  defers records whose source the contract does not cover yet, and backfills — from memory when it can, else by
  replaying the records log — whenever a new contract version touches what was ingested or covers what was
  deferred.

Messages are ``(key, value)`` byte pairs as on the topics; a ``None`` value on the records topic is a tombstone
(the record was deleted) and retracts that source record.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from esc.agents import agent_state, llm_stream
from esc.agents.contract_agent import ContractAgent, SourceComplete, contract_message, diff_event
from esc.agents.contract_reports import ContractReports
from esc.agents.extraction import (  # noqa: F401  (the extraction stage; re-exported for the runtimes)
    KEY_SEP,
    REPLAY_BATCH,
    ExtractionWorker,
    Message,
    ReplayLog,
    envelope_or_dead,
    split_messages,
)
from esc.agents.ingest import parse
from esc.agents.llm_stream import StreamDiscovery
from esc.agents.profiler import ProfileDelta, Watermark, profile_batch
from esc.agents.scan_groups import ScanComplete
from esc.agents.stores.seen import SeenRecords
from esc.contract.model import Contract, ContractDiff
from esc.streams.events import DeadLetter, RecordEnvelope
from esc.streams.schema_events import version_key

# ------------------------------------------------------------------------------------------------- profiling


def profile_messages(
    values: Sequence[bytes | None],
    stream: str,
    first_offset: int,
    last_offset: int,
    also: dict[str, int] | None = None,
) -> list[ProfileDelta]:
    """Profile one batch of record messages (tombstones and invalid messages carry no profile evidence).
    ``also`` names further streams (partitions) the batch covers, with their last offsets."""
    envs = [e for e in (parse(v) for v in values if v is not None) if isinstance(e, RecordEnvelope) and not e.deleted]
    if not envs:
        return []
    return profile_batch(envs, Watermark(stream=stream, offset=last_offset, first=first_offset, also=also or {}))


def first_sightings(
    messages: Sequence[Message], seen: SeenRecords | None
) -> tuple[list[bytes | None], list[tuple[bytes, bytes]]]:
    """Values of the records the profiler has not observed yet (new, or changed content), and the (key, content
    hash) pairs to ``seen.remember_hashes`` once their profile updates are durable. At-least-once re-deliveries of
    the same record are dropped, so a profile counts each record once. Tombstones are forgotten."""
    if seen is None:
        return [v for _, v in messages], []
    tombstones = [k for k, v in messages if v is None and k is not None]
    if tombstones:
        seen.forget(tombstones)
    live = [(k or b"", v) for k, v in messages if v is not None]
    flags, observed = seen.check(live)
    return [v for (_, v), new in zip(live, flags, strict=True) if new], observed


def profile_update(delta: ProfileDelta) -> bytes:
    return json.dumps({"kind": "delta", "delta": delta.model_dump(mode="json")}).encode("utf-8")


def completion_update(done: SourceComplete) -> bytes:
    return json.dumps({"kind": "complete", "complete": done.model_dump(mode="json")}).encode("utf-8")


def scan_update(done: ScanComplete) -> bytes:
    return json.dumps({"kind": "scan", "scan": done.model_dump(mode="json")}).encode("utf-8")


def scan_open_update(scan: str) -> bytes:
    """A file connector starts delivering a scan (before its first record; ``agents.scan_groups``)."""
    return json.dumps({"kind": "scan-open", "scan": scan}).encode("utf-8")


def flush_update(source: str) -> bytes:
    """A producer's end of batch for a topic source: it settles once its profile has records (``esc push
    --embedded`` sends it after its records were profiled; file sources settle by their completions instead)."""
    return json.dumps({"kind": "flush", "source": source}).encode("utf-8")


TICK = json.dumps({"kind": "tick"}).encode("utf-8")


# --------------------------------------------------------------------------------------------- contract agent


@dataclass
class Outgoing:
    diffs: list[Message] = field(default_factory=list)  # for esc.schema.diffs
    contracts: list[Message] = field(default_factory=list)  # for esc.schema.contracts (latest + per version)
    contract: Contract | None = None
    diff: ContractDiff | None = None


REPORTS = "reports"
"""The state-table entry of the drift and example reports (beside ``agents.agent_state``'s entries)."""


class ContractWriter:
    """The single writer of the contract: profile updates in, schema-diff events and contracts out."""

    def __init__(
        self, agent: ContractAgent | None = None, contract_id: str = "esc", reports: ContractReports | None = None,
        llm: StreamDiscovery | Literal["env"] | None = "env", reinfer_seconds: float | None = None,
    ) -> None:
        self.agent = agent or ContractAgent()
        if reinfer_seconds is None:  # ESC_REINFER_SECONDS
            from esc.settings import Settings

            reinfer_seconds = Settings().reinfer_seconds
        self.agent.reinfer_seconds = reinfer_seconds
        self.contract_id = contract_id
        self.dead: list[DeadLetter] = []
        self.reports = reports or ContractReports()  # drift and example results (agents/contract_reports.py)
        self._reports_saved: str | None = None  # the reports entry as last saved (state_changes writes it on change)
        # The LLM pass in the stream (agents/llm_stream.py): "env" asks ESC_LLM_BASE_URL / ESC_LLM_STREAM; None: off.
        self.llm: StreamDiscovery | None = llm_stream.from_settings() if isinstance(llm, str) else llm
        # Reports change only in on_updates (counted in _updates): a save with no update since the last one needs
        # no new dump of the drift windows (a dump per save cost the embedded runtime most of its time while a
        # backfill pumped every 20 ms). _dumped: (updates count, dump) of the last state_changes.
        self._updates = 0
        self._dumped: tuple[int, str] | None = None
        self._saved_at = -1  # the updates count the saved reports entry reflects

    @classmethod
    def from_state(cls, state: dict[str, Any] | None, contract_id: str = "esc") -> ContractWriter:
        reports = ContractReports.from_state((state or {}).get("reports"))
        return cls(ContractAgent.from_state(state) if state else None, contract_id, reports)

    @classmethod
    def from_entries(cls, entries: Mapping[str, str], contract_id: str = "esc") -> ContractWriter:
        """The writer a state table describes (``agents.agent_state``; empty: a new one)."""
        reports = ContractReports.from_state(json.loads(entries[REPORTS]) if REPORTS in entries else None)
        writer = cls(agent_state.load_entries(entries, contract_id=contract_id), contract_id, reports)
        writer._reports_saved = entries.get(REPORTS)
        return writer

    def state(self) -> dict[str, Any]:
        return {**self.agent.to_state(), "reports": self.reports.to_state()}

    def state_changes(self) -> dict[str, str]:
        """The state-table entries changed since the last :meth:`state_saved`, in the order to write them (the
        drift and example reports are one entry of their own, written when they changed)."""
        out = agent_state.changed_entries(self.agent)
        if self._updates != self._saved_at:
            self._dumped = (self._updates, self._dump_reports())
            if self._dumped[1] != self._reports_saved:
                out[REPORTS] = self._dumped[1]
        return out

    def state_saved(self) -> None:
        """What the last :meth:`state_changes` returned is durable."""
        agent_state.mark_saved(self.agent)
        if self._dumped is not None:  # else the reports were not dumped: nothing more is saved than before
            self._saved_at, self._reports_saved = self._dumped
            self._dumped = None

    def _dump_reports(self) -> str:
        return json.dumps(self.reports.to_state(), separators=(",", ":"), sort_keys=True)

    def on_updates(self, values: Sequence[bytes], now: float | None = None) -> Outgoing:
        self._updates += 1
        deltas: list[ProfileDelta] = []
        completions: list[SourceComplete] = []
        scans: list[ScanComplete] = []
        flushes: list[str] = []
        opened: list[str] = []
        for raw in values:
            try:
                msg = json.loads(raw)
                if msg.get("kind") == "delta":
                    deltas.append(ProfileDelta.model_validate(msg["delta"]))
                elif msg.get("kind") == "complete":
                    completions.append(SourceComplete.model_validate(msg["complete"]))
                elif msg.get("kind") == "scan":
                    scans.append(ScanComplete.model_validate(msg["scan"]))
                elif msg.get("kind") == "flush":
                    flushes.append(str(msg["source"]))
                elif msg.get("kind") == "scan-open":
                    opened.append(str(msg["scan"]))
                else:
                    self.reports.take(msg)
            except (ValueError, KeyError, TypeError) as exc:
                self.dead.append(DeadLetter.of(f"invalid profile update: {exc}", "contract-agent", raw))
        contract, diff = self.agent.apply(deltas, completions, now=time.time() if now is None else now, scans=scans,
                                          flushes=flushes, opened=opened)  # fmt: skip
        if self.llm is not None:  # the LLM pass beside ingestion: queue new sources, version finished answers
            contract, diff = self.llm.step(self.agent, deltas, contract, diff)
        reported = self.reports.update(contract, self.agent.sources)
        if reported is not None:
            contract = self.agent.contract = reported
        out = Outgoing(contract=contract, diff=diff)
        if contract.contract_id != self.contract_id:
            contract = contract.model_copy(update={"contract_id": self.contract_id})
            out.contract = contract
        if diff is not None:
            diff = diff.model_copy(update={"contract_id": self.contract_id})
            out.diff = diff
            out.diffs.append((self.contract_id.encode(), diff_event(diff, contract).model_dump_json().encode()))
        # The latest contract is published again (same version) when sources settled: their statistics are those
        # of complete evidence now (an edited file's row counts and profiles), not those of the last version.
        if diff is not None or self.agent.newly_settled or self.agent.resettled or reported is not None:
            key, value = contract_message(contract)
            out.contracts.append((key, value))
            if diff is not None:
                out.contracts.append((version_key(contract.contract_id, contract.version), value))
        return out


