"""Contract agent: the single writer of the contract. Profile deltas in, new contract versions and diffs out.

``ContractAgent.apply(deltas, completions, now)`` merges each :class:`~agents.profiler.ProfileDelta` into its
source's running profile (dropping a delta whose watermark was already applied), then evolves the contract
through ``contract.evolve`` and returns ``(contract, diff)``; ``diff`` is ``None`` when nothing structural changed.

Streaming and keys. Keys and foreign keys inferred from a prefix of a source can be wrong (the first 100 rows of
``PlaylistTrack`` make ``TrackId`` look unique; a child read before its parent fails containment), and the contract
is monotonic: a key can never be taken back. So:

* fields, types, new sources and parents enter the contract at once (schema-diff latency is one batch);
* identity keys, foreign keys and hierarchy are inferred only over **settled** sources. A file-fed source is
  settled when every file it has records from has a :class:`SourceComplete` and the profile counted at least the
  records the completion announced for that file (deltas and completions travel on different partitions, so either
  may arrive first). A pushed (topic) source is settled after ``settle_records`` records, or when no record arrived
  for ``settle_seconds`` (the runtime passes ``now``; call :meth:`ContractAgent.tick` on a timer).
* a source that has never settled carries ``key_evidence["pending"]`` (``agents.extractors.covers`` defers its
  records); once settled, keys and links are re-inferred whenever a settled source's profile changes — at most
  once per ``reinfer_seconds`` (0: at every change). A change inside that window marks the re-inference due: the
  next apply after it, or the next tick (a runtime's timer, and its end of drain), runs it, so what a quiet stream
  leaves is inferred over the complete profiles. Fields and types of a settled source still enter at once.

A source settling without a key removes its ``pending`` mark but changes no structure: ``apply`` returns the
same version, and :attr:`ContractAgent.newly_settled` names the sources so the runtime republishes the contract
and replays their deferred records.

State (profiles, meta, per-file counts, completions, watermarks, contract) round-trips through
:meth:`ContractAgent.to_state` / :meth:`ContractAgent.from_state` as JSON-able data, for a changelog topic or file.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from pydantic import BaseModel, Field

from esc.agents import metrics
from esc.agents.extractors import PENDING
from esc.agents.profiler import STREAM_CAPS, ProfileDelta
from esc.agents.scan_groups import ScanComplete, ScanGroups
from esc.agents.source_state import SourceState
from esc.contract.evolve import evolve
from esc.contract.field_profile import Caps
from esc.contract.inference import infer
from esc.contract.model import Contract, ContractDiff, ForeignKey, SourceSpec
from esc.contract.profile import SourceProfile
from esc.contract.serde import diff_added_by_kind, dump_json
from esc.streams.events import CloudEvent

SETTLE_RECORDS = 1000
SETTLE_SECONDS = 30.0
STATE_VERSION = 2
MAX_REASON_SOURCES = 8


class SourceComplete(BaseModel):
    """Sent by a file connector after the last record of ``file``: it produced ``records`` records of ``source``.

    A file that yields several sources (nested arrays, Excel sheets) gets one per source. ``file_hash`` names the
    file version (the ``file_hash`` its records carry); ``records == 0`` says the file is gone from the source
    (deleted, or its new version no longer yields it): see :mod:`agents.source_state`."""

    source: str
    file: str
    records: int
    file_hash: str | None = None
    scan: str | None = None  # the connector's scan this file was read in (agents/scan_groups.py)
    # key candidates the connector saw repeat on rows that differ in this file (contract/key_witness.py)
    conflicts: dict[str, int] = Field(default_factory=dict)

    @classmethod
    def for_file(
        cls,
        file: str,
        counts: Mapping[str, int],
        file_hash: str | None = None,
        scan: str | None = None,
        conflicts: Mapping[str, Mapping[str, int]] | None = None,
    ) -> list[SourceComplete]:
        found = conflicts or {}
        return [cls(source=s, file=file, records=n, file_hash=file_hash, scan=scan, conflicts=dict(found.get(s, {})))
                for s, n in sorted(counts.items())]  # fmt: skip


DIFF_EVENT_TYPE = "esc.schema.diff"
EVENT_SOURCE = "esc/contract-agent"


def diff_event(diff: ContractDiff, contract: Contract) -> CloudEvent:
    """The CloudEvents 1.0 schema-diff event of one version (DESIGN.md section 3): from/to version, the added
    items grouped by kind, and the reason. The id is deterministic, so a re-sent event is recognisably the same."""
    added = diff_added_by_kind(diff)
    return CloudEvent(
        id=f"{diff.contract_id}:{diff.to_version}:{contract.content_hash}",
        source=EVENT_SOURCE,
        type=DIFF_EVENT_TYPE,
        subject=diff.contract_id,
        data={
            "contract_id": diff.contract_id,
            "from_version": diff.from_version,
            "to_version": diff.to_version,
            "content_hash": contract.content_hash,
            "added": added,
            "reason": diff.reason,
        },
    )


def contract_message(contract: Contract) -> tuple[bytes, bytes]:
    """Key and value for the compacted contracts topic: key = contract id, value = the full contract (JSON)."""
    return contract.contract_id.encode("utf-8"), dump_json(contract).encode("utf-8")


def _names(items: Iterable[str]) -> str:
    xs = sorted(items)
    shown = ", ".join(xs[:MAX_REASON_SOURCES])
    return shown + (f" and {len(xs) - MAX_REASON_SOURCES} more" if len(xs) > MAX_REASON_SOURCES else "")


class ContractAgent:
    def __init__(
        self,
        contract: Contract | None = None,
        *,
        contract_id: str = "esc",
        settle_records: int = SETTLE_RECORDS,
        settle_seconds: float = SETTLE_SECONDS,
        caps: Caps = STREAM_CAPS,
        reinfer_seconds: float = 0.0,
    ) -> None:
        self.contract = contract if contract is not None else Contract(contract_id=contract_id)
        self.settle_records = settle_records
        self.settle_seconds = settle_seconds
        self.caps = caps
        # Re-inference of the settled sources (the keys and links of all of them, each time) at most once per
        # reinfer_seconds when only their profiles grew: under a steady push it ran for every delta.
        self.reinfer_seconds = reinfer_seconds
        self.reinfer_due = False
        self.reinferred_at = float("-inf")
        self.sources: dict[str, SourceState] = {}
        self.applied: dict[str, int] = {}  # "stream\x1fsource" -> last offset applied
        self.marks_of: dict[str, set[str]] = {}  # source -> its keys in ``applied``
        self.scans = ScanGroups()  # sources of one folder scan settle together
        self.dropped = 0  # re-delivered deltas dropped
        self.newly_settled: list[str] = []  # sources that settled in the last apply
        self.resettled: list[str] = []  # settled again in the last apply (a new file version, a scan's end)
        self.last_seconds = 0.0  # time the last apply spent inferring and evolving
        # Never-settled file sources whose changes wait for the open scans to end: one version per scan, not one
        # per file (a folder of 500 small files made 500 versions, each a full contract dump).
        self.held: set[str] = set()
        # Incremental state (agents/agent_state.py): sources changed since the last save, and the contract saved.
        self.touched: set[str] = set()
        self.saved_contract: Contract | None = None

    # ---------------------------------------------------------------------------------------------- intake
    def _take(self, d: ProfileDelta, now: float, batch: dict[tuple[str, str | None, str | None], list[SourceProfile]]) -> bool:
        """Accept a delta: its profile joins ``batch`` (added to the source by :meth:`_merge_batch`)."""
        file = d.meta.files[0] if len(d.meta.files) == 1 else None
        scope = d.source if file is None else f"{d.source}\x1f{file}"  # one mark per source and file
        marks = {f"{stream}\x1f{scope}": offset for stream, offset in d.watermark.marks().items()}
        if all(offset <= self.applied.get(key, -1) for key, offset in marks.items()):
            self.dropped += 1  # re-delivered: every stream it covers was applied already
            return False
        for key, offset in marks.items():
            self.applied[key] = max(offset, self.applied.get(key, -1))
        self.marks_of.setdefault(d.source, set()).update(marks)
        batch.setdefault((d.source, file, d.meta.file_hash), []).append(SourceProfile.from_dict(d.profile, self.caps))
        st = self.sources.get(d.source)
        if st is None:
            st = self.sources[d.source] = SourceState(d.source, format=d.meta.format)
        elif not st.gens and st.loose is None:  # only a completion was seen so far
            st.format = d.meta.format
        st.parent = st.parent or d.meta.parent
        st.array_path = st.array_path or d.meta.array_path
        st.last_seen = now
        self.touched.add(d.source)
        return True

    def _merge_batch(self, batch: Mapping[tuple[str, str | None, str | None], list[SourceProfile]]) -> set[str]:
        """Merge a batch's deltas among themselves first (pairwise, small with small), then once into the
        source's evidence: merging costs about the size of the larger side, so folding 4 deltas one by one into a
        big profile cost 4 big merges where this costs one. Returns the sources whose counting profile changed."""
        changed = set()
        for (source, file, file_hash), profs in batch.items():
            while len(profs) > 1:
                profs = [profs[i].merge(profs[i + 1]) if i + 1 < len(profs) else profs[i]
                         for i in range(0, len(profs), 2)]
            if self.sources[source].add(profs[0], profs[0].records, file, file_hash):
                changed.add(source)
        return changed

    def _complete(self, c: SourceComplete, now: float) -> bool:
        st = self.sources.get(c.source)
        if st is None:  # the completion overtook every delta of its source
            st = self.sources[c.source] = SourceState(c.source, format="json")
            st.last_seen = now
        if c.scan is not None and c.records:
            self.scans.note(c.scan, c.source, c.file)
        self.touched.add(c.source)
        return st.complete(c.file, c.file_hash, c.records, c.conflicts)

    # ---------------------------------------------------------------------------------------------- observed
    def _pending_spec(self, name: str, st: SourceState) -> SourceSpec:
        """Fields now, key and links later: the previous key decision is carried unchanged."""
        prev = self.contract.sources.get(name)
        spec = SourceSpec.model_validate(
            {
                "format": st.format,
                "files": sorted(st.files),
                "records": st.profile.records,
                "parent": st.profile.parent.parent if st.profile.parent is not None else st.parent,
                "fields": st.profile.field_specs(),
            }
        )
        if prev is not None and st.ever_settled:
            spec.identity_key = list(prev.identity_key)
            spec.key_confidence = prev.key_confidence
            spec.key_evidence = dict(prev.key_evidence)
        else:
            waiting = st.waiting()
            spec.key_evidence = {
                PENDING: (
                    f"waiting for the end of {_names(waiting)}" if waiting else "waiting for more records"
                )
                + f" ({st.profile.records} records profiled)"
            }
        return spec

    def _observed(self, changed: set[str], reinfer: bool) -> Contract:
        settled = {s: st for s, st in self.sources.items() if st.settled and st.profile.records}
        if reinfer and settled:
            observed = infer(
                {s: st.profile for s, st in settled.items()}, {s: st.meta() for s, st in settled.items()}
            )
        else:
            observed = Contract()
        observed.contract_id = self.contract.contract_id
        for s in sorted(changed):
            st = self.sources[s]
            if s not in observed.sources and st.profile.records:
                observed.sources[s] = self._pending_spec(s, st)
        carried: list[ForeignKey] = [
            fk
            for fk in self.contract.foreign_keys
            if not (fk.from_.source in settled and fk.to.source in settled)
        ]
        known = {fk.signature() for fk in observed.foreign_keys}
        observed.foreign_keys += [fk.model_copy(deep=True) for fk in carried if fk.signature() not in known]
        return observed

    # ---------------------------------------------------------------------------------------------- apply
    def apply(
        self,
        deltas: Sequence[ProfileDelta],
        completions: Sequence[SourceComplete] = (),
        now: float | None = None,
        scans: Sequence[ScanComplete] = (),
        flushes: Sequence[str] = (),
        opened: Sequence[str] = (),
    ) -> tuple[Contract, ContractDiff | None]:
        """Open and close scans, merge deltas and completions, mark flushed topic sources (a producer's end of
        batch, after its records' deltas); evolve the contract. ``(contract, diff or None)``."""
        now = time.time() if now is None else now
        for scan in opened:
            self.scans.open(scan)
        changed: set[str] = set()
        taken: dict[str, int] = {}
        marks: dict[str, str] = {}
        batch: dict[tuple[str, str | None, str | None], list[SourceProfile]] = {}
        for d in deltas:
            if self._take(d, now, batch):
                taken[d.source] = taken.get(d.source, 0) + d.records
                marks[d.source] = f"{d.watermark.stream}@{d.watermark.offset}"
        changed |= self._merge_batch(batch)  # (a newer file version collected beside the one in use changes none)
        for c in completions:
            if self._complete(c, now):
                changed.add(c.source)
        for done in scans:
            self.scans.close(done)
        for name in flushes:
            if name in self.sources:
                self.sources[name].flushed = True
                self.touched.add(name)
        own = {s: st.check_settled(now, self.settle_records, self.settle_seconds) for s, st in self.sources.items()}
        held = self.scans.holding(lambda s: own.get(s, False))
        self.newly_settled = []
        self.resettled = []
        reinfer = False
        grew = self.reinfer_due  # a settled source's profile changed since the last re-inference
        for s, st in sorted(self.sources.items()):
            was = st.settled
            st.settled = own[s] and s not in held
            if st.settled != was:
                self.touched.add(s)
            if st.settled and not was:
                if not st.ever_settled:
                    self.newly_settled.append(s)
                else:
                    self.resettled.append(s)
                st.ever_settled = True
                reinfer = True
            elif st.settled and s in changed:
                grew = True
        tick = not (deltas or completions or scans or flushes or opened)
        if grew and not reinfer:
            reinfer = tick or now - self.reinferred_at >= self.reinfer_seconds
        if reinfer:
            self.reinferred_at = now
        self.reinfer_due = grew and not reinfer
        changed = self._hold(changed)
        if not changed and not reinfer:
            return self.contract, None
        reason = self._reason(taken, marks, completions)
        t0 = time.perf_counter()
        observed = self._observed(changed | set(self.newly_settled), reinfer)
        if not observed.sources:
            return self.contract, None
        self.contract, diff = evolve(self.contract, observed, reason)
        self.last_seconds = time.perf_counter() - t0
        metrics.CONTRACT_VERSION.set(self.contract.version)
        if diff is not None:
            metrics.SCHEMA_DIFF_EVENTS.inc()
            for item in diff.added:
                metrics.SCHEMA_DIFFS.labels(item.kind).inc()
        return self.contract, diff

    def _hold(self, changed: set[str]) -> set[str]:
        """Changes to never-settled file sources wait while a scan is open (they are pending, their records are
        not written yet); once no scan is open they go into one version with everything that settled."""
        if self.scans.any_open():
            held = {s for s in changed if not self.sources[s].ever_settled and self.sources[s].file_fed}
            self.held |= held
            return changed - held
        changed |= {s for s in self.held if s in self.sources}
        self.held.clear()
        return changed

    def tick(self, now: float | None = None) -> tuple[Contract, ContractDiff | None]:
        """Settle idle topic sources (no delta needed); call on a timer."""
        return self.apply((), (), now)

    def _reason(
        self, taken: Mapping[str, int], marks: Mapping[str, str], completions: Sequence[SourceComplete]
    ) -> str:
        parts = []
        if taken:
            shown = [f"{s} (+{n} records, {marks[s]})" for s, n in sorted(taken.items())[:MAX_REASON_SOURCES]]
            more = len(taken) - len(shown)
            parts.append("profiles of " + ", ".join(shown) + (f" and {more} more" if more > 0 else ""))
        if completions:
            files = sorted({c.file for c in completions})
            parts.append(f"end of {_names(files)}")
        if self.newly_settled:
            parts.append(f"settled: {_names(self.newly_settled)}")
        return "; ".join(parts) or "settled sources re-inferred"

    # ---------------------------------------------------------------------------------------------- reading
    @property
    def settled(self) -> set[str]:
        return {s for s, st in self.sources.items() if st.settled}

    def profiles(self) -> dict[str, SourceProfile]:
        return {s: st.profile for s, st in self.sources.items()}

    # ---------------------------------------------------------------------------------------------- state
    def to_state(self) -> dict[str, Any]:
        return {
            "state_version": STATE_VERSION,
            "contract": self.contract.model_dump(mode="json", by_alias=True),
            "settle_records": self.settle_records,
            "settle_seconds": self.settle_seconds,
            "sources": {s: st.to_dict() for s, st in sorted(self.sources.items())},
            "applied": dict(sorted(self.applied.items())),
            "scans": self.scans.to_dict(),
        }

    @classmethod
    def from_state(cls, state: Mapping[str, Any], caps: Caps = STREAM_CAPS) -> ContractAgent:
        if state.get("state_version") not in (1, STATE_VERSION):  # 1: additive profiles (agents/source_state.py)
            raise ValueError(f"unknown contract agent state version {state.get('state_version')!r}")
        agent = cls(
            Contract.model_validate(state["contract"]),
            settle_records=int(state["settle_records"]),
            settle_seconds=float(state["settle_seconds"]),
            caps=caps,
        )
        agent.sources = {s: SourceState.from_dict(s, d, caps) for s, d in state["sources"].items()}
        agent.applied = {k: int(v) for k, v in state["applied"].items()}
        for key in agent.applied:
            agent.marks_of.setdefault(key.split("\x1f")[1] if "\x1f" in key else "", set()).add(key)
        agent.scans = ScanGroups.from_dict(state.get("scans", {}))
        agent.reinfer_due = True  # a re-inference a crash cut off runs at the first apply or tick
        return agent
