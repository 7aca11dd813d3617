"""Backfill: which already-ingested sources a new contract version makes stale, and replay bookkeeping. Pure.

A contract version can change what an already-written record should have produced:

* a new **attribute** of a source's entity (a new field), or a **widened type** (values are coerced differently);
* a new **identity key** of a source that was written keyed by record id (``rekey``: its record-id nodes must be
  retracted before the replay, and its nesting children replayed so their parent edges use the new key);
* a new **foreign key** / FK relationship (the referencing side gains edges);
* a new **nesting** edge or relationship (the child side gains the edge to its parent);
* an entity turning **descriptive** (its text is vectorised now);
* a further **entity type** over a source that has one (``agents.type_nodes``: its nodes come from the same records).

:func:`sources_to_replay` answers "which ingested sources" for one diff; :func:`plan_replay` adds the sources
whose deferred records the contract now covers (``agents.extractors.covers``) and orders the work.
:class:`BackfillTracker` keeps progress for reporting; :class:`DeferredRecords` is a bounded in-memory buffer for
runtimes that keep deferred envelopes rather than replaying them from the records topic.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic_core import to_json

from esc.agents import metrics
from esc.agents.extractors import covers
from esc.contract.model import Contract, ContractDiff, DiffItem
from esc.streams.events import RecordEnvelope

MAX_DEFERRED = 200_000
_FIELDS = tuple(RecordEnvelope.model_fields)


def _entity_source(contract: Contract, name: str) -> str | None:
    e = contract.entity(name)
    return e.source if e is not None else None


def _field_source(contract: Contract, fid: str) -> str | None:
    hit = contract.field_by_id(fid)
    return hit[0] if hit is not None else None


def _children(contract: Contract, parent: str) -> set[str]:
    out = {h.child for h in contract.hierarchy if h.parent == parent}
    out |= {s for s, src in contract.sources.items() if src.parent == parent}
    return out


def _is_key_field(contract: Contract, source: str, field_name: str) -> bool:
    src = contract.sources.get(source)
    return src is not None and field_name in src.identity_key


def _split_target(target: str, contract: Contract) -> tuple[str, str] | None:
    """``source.field`` targets: the source may itself hold dots (``Invoice.InvoiceLine.Quantity``)."""
    for name in sorted(contract.sources, key=len, reverse=True):
        if target.startswith(name + "."):
            return name, target[len(name) + 1 :]
    return None


def _touched(item: DiffItem, contract: Contract) -> tuple[set[str], set[str]]:
    """(sources to replay, sources to re-key) for one diff item, before intersecting with what was ingested."""
    replay: set[str] = set()
    rekey: set[str] = set()
    d: Mapping[str, Any] = item.detail
    if item.kind == "attribute":
        fid = d.get("field_id")
        src = _field_source(contract, fid) if isinstance(fid, str) else None
        if src is None:
            src = _entity_source(contract, item.target.split(".", 1)[0])
        if src is not None:
            replay.add(src)
    elif item.kind == "type_widened":
        hit = _split_target(item.target, contract)
        if hit is not None:
            replay.add(hit[0])
            if _is_key_field(contract, *hit):
                rekey.add(hit[0])
    elif item.kind == "identity_key":
        src = item.target if item.target in contract.sources else _entity_source(contract, item.target)
        if src is not None:
            replay.add(src)
            rekey.add(src)
            replay |= _children(contract, src)
    elif item.kind == "foreign_key":
        frm = d.get("from")
        if isinstance(frm, Mapping) and isinstance(frm.get("source"), str):
            replay.add(frm["source"])
    elif item.kind == "hierarchy":
        if isinstance(d.get("child"), str):
            replay.add(d["child"])
    elif item.kind == "relationship":
        ends = item.target.split("-[", 1)
        to_entity = item.target.rsplit("]->", 1)[-1]
        name = to_entity if d.get("kind") == "nesting" else ends[0]
        src = _entity_source(contract, name)
        if src is not None:
            replay.add(src)
    elif item.kind == "entity" and d.get("descriptive") is True and "source" not in d:
        src = _entity_source(contract, item.target)
        if src is not None:
            replay.add(src)
    elif item.kind == "entity" and isinstance(d.get("source"), str):
        primary = contract.entity_for_source(d["source"])
        if primary is not None and primary.name != item.target:  # a further type over a written source
            replay.add(d["source"])  # (agents/type_nodes.py)
    return replay, rekey


def sources_to_replay(diff: ContractDiff, contract: Contract, ingested: set[str]) -> set[str]:
    """Already-ingested sources whose records must be replayed so the stores match ``contract``."""
    out: set[str] = set()
    for item in diff.added:
        replay, _ = _touched(item, contract)
        out |= replay
    return out & ingested


def sources_to_rekey(diff: ContractDiff, contract: Contract, ingested: set[str]) -> set[str]:
    """Ingested sources whose identity changed: replay them with ``Ingestor.handle(..., rekey=True)``."""
    out: set[str] = set()
    for item in diff.added:
        _, rekey = _touched(item, contract)
        out |= rekey
    return out & ingested


def ready_sources(contract: Contract, deferred: Iterable[str]) -> set[str]:
    """Sources with deferred records that ``contract`` now covers."""
    return {s for s in deferred if covers(contract, s)}


@dataclass
class ReplayPlan:
    version: int
    rekey: set[str] = field(default_factory=set)  # replay with rekey=True, first
    replay: set[str] = field(default_factory=set)  # ingested sources made stale
    ready: set[str] = field(default_factory=set)  # deferred sources now covered
    reason: str = ""

    def ordered(self) -> list[tuple[str, bool]]:
        """(source, rekey) in replay order: re-keyed sources first, parents before their nested children."""
        every = self.rekey | self.replay | self.ready
        return sorted(((s, s in self.rekey) for s in every), key=lambda x: (not x[1], x[0].count("."), x[0]))

    def __bool__(self) -> bool:
        return bool(self.rekey or self.replay or self.ready)


def plan_replay(
    contract: Contract, diff: ContractDiff | None, ingested: set[str], deferred: Iterable[str] = ()
) -> ReplayPlan:
    """Everything a new contract (with its diff, if the version changed) asks the runtime to replay."""
    out = ReplayPlan(version=contract.version)
    if diff is not None:
        out.replay = sources_to_replay(diff, contract, ingested)
        out.rekey = sources_to_rekey(diff, contract, ingested)
        out.reason = f"contract v{diff.from_version} -> v{diff.to_version}"
    out.ready = ready_sources(contract, deferred)
    out.replay -= out.rekey
    return out


# ------------------------------------------------------------------------------------------------ progress


@dataclass
class _Progress:
    version: int
    rekey: bool
    total: int | None = None  # records to replay, when known
    done: int = 0


class BackfillTracker:
    """Replays in flight, per source; a newer request for a source replaces the older one."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._pending: dict[str, _Progress] = {}
        self.completed: list[tuple[str, int, int]] = []  # (source, version, records)
        self._clock = clock
        self.moved = clock()  # the last start, progress or finish

    def start(self, plan: ReplayPlan, totals: Mapping[str, int] | None = None) -> list[tuple[str, bool]]:
        order = plan.ordered()
        for source, rekey in order:
            old = self._pending.get(source)
            self._pending[source] = _Progress(
                plan.version, rekey or (old is not None and old.rekey), (totals or {}).get(source)
            )
        self._gauge()
        self.moved = self._clock()
        return order

    def progress(self, source: str, records: int) -> None:
        p = self._pending.get(source)
        if p is not None:
            p.done += records
            self._gauge()
        self.moved = self._clock()

    def finish(self, source: str) -> None:
        p = self._pending.pop(source, None)
        if p is not None:
            self.completed.append((source, p.version, p.done))
        self._gauge()
        self.moved = self._clock()

    def stalled_for(self) -> float:
        """Seconds a pending backfill has made no progress (0 when none is pending)."""
        return self._clock() - self.moved if self._pending else 0.0

    def pending(self) -> set[str]:
        return set(self._pending)

    def snapshot(self) -> dict[str, dict[str, Any]]:
        return {
            s: {"version": p.version, "rekey": p.rekey, "done": p.done, "total": p.total}
            for s, p in sorted(self._pending.items())
        }

    def _gauge(self) -> None:
        left = sum(max(0, p.total - p.done) for p in self._pending.values() if p.total is not None)
        metrics.BACKFILL_PENDING.set(left)


class DeferredRecords:
    """Deferred envelopes per source, bounded: past ``limit`` records a source is marked ``overflowed`` and its
    records must be replayed from the records topic (or files) instead of from memory.

    Each is kept as its JSON and read back when taken (non-finite floats as ``NaN``/``Infinity``, which the envelope
    parser reads back): about 620 bytes for a TPC-H lineitem record against 2,700 for the envelope object, so at
    the 200,000-record limit ~125 MB of worker memory instead of ~540 MB."""

    def __init__(self, limit: int = MAX_DEFERRED) -> None:
        self.limit = limit
        self._by_source: dict[str, dict[str, bytes]] = {}
        self.overflowed: set[str] = set()
        self._size = 0

    def add(self, envelopes: Sequence[RecordEnvelope]) -> None:
        for env in envelopes:
            if env.source in self.overflowed:
                continue
            bucket = self._by_source.setdefault(env.source, {})
            rid = env.resolved_id()
            if rid not in bucket:
                if self._size >= self.limit:
                    self.overflowed.add(env.source)
                    self._size -= len(self._by_source.pop(env.source, {}))
                    continue
                self._size += 1
            bucket[rid] = to_json({k: getattr(env, k) for k in _FIELDS}, inf_nan_mode="constants")  # re-delivery: replaced

    def sources(self) -> set[str]:
        return set(self._by_source) | self.overflowed

    def take_raw(self, sources: Iterable[str]) -> list[bytes]:
        """Remove and return the buffered records of ``sources`` as JSON (parents first, then in arrival order):
        a backfill parses them batch by batch, so they never all exist as objects at once."""
        out: list[bytes] = []
        for s in sorted(sources, key=lambda x: (x.count("."), x)):
            bucket = self._by_source.pop(s, {})
            self._size -= len(bucket)
            out.extend(bucket.values())
        return out

    def drop(self, sources: Iterable[str]) -> None:
        """Forget the buffered records of ``sources`` (the log has them all)."""
        for s in sources:
            self._size -= len(self._by_source.pop(s, {}))

    def __len__(self) -> int:
        return self._size
