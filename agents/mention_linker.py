"""The mention linker: every chunk in the graph linked to the entities it mentions, with the current dictionary.

``MentionLinker.sync(graph, contract)`` builds the dictionary (``agents.mention_dictionary``) and its automaton
(``agents.mentions``) when the contract version or the named values changed, then links every chunk that the
current dictionary has not linked yet (``ChunkStore.chunks_to_link``), replacing the chunk's mentions. So the result
does not depend on the order records arrived in: a note ingested before the people it names is linked again once
the dictionary holds them. The runtimes call it when their queues are drained (``Ingestor.link_mentions``).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

from esc.agents.chunk_graph import ChunkStore, MentionWrite, chunk_store
from esc.agents.mention_dictionary import Stopped, build_surfaces, fingerprint
from esc.agents.mentions import MentionAutomaton
from esc.agents.stores.base import GraphStore
from esc.contract.model import Contract

log = logging.getLogger(__name__)

BATCH = 500
LATER_TRIES = 20
"""Syncs (the Faust worker: one per 5 s when idle) a batch waits for its vector objects (``LinkLater``) before it is linked in the graph without them (a
chunk whose object never comes must not hold back every chunk after it)."""
UNVERSIONED_TTL = 30.0
"""Seconds a dictionary is reused for a graph that cannot say whether its data changed (``generation()`` None)."""
REBUILD_SHARE = 0.1
"""A periodic sync (``every`` > 0, the Faust worker) rebuilds a dictionary whose contract is unchanged (only graph
data is new) at most this share of the time: after a build of ``b`` seconds, not before ``b / REBUILD_SHARE``
seconds (under a steady push every write changed the generation, and each rebuild reads every name in the graph).
A drained runtime's sync (``every`` 0) always rebuilds."""
GIVE_WAY = 3
"""Syncs in a row that may give way to graph work before they linked anything; the next one reads its dictionary
and links one batch whatever comes in (records arriving a little slower than the busy window must not starve
the links)."""


class LinkLater(RuntimeError):
    """Raised by ``on_linked`` when a batch cannot be finished yet (its vector objects are not written yet): the
    batch stays unlinked and the sync ends; the next sync links it."""


@dataclass
class LinkResult:
    chunks: int = 0
    mentions: int = 0
    waiting: int = 0  # chunks left for the next sync (LinkLater)
    stopped: bool = False  # gave way to graph work; the next sync goes on
    seconds: float = 0.0
    fingerprint: str = ""


class MentionLinker:
    def __init__(self) -> None:
        self._state: tuple[str, int, int | None] | None = None  # (contract hash, version, graph generation)
        self._fp = ""
        self.automaton: MentionAutomaton | None = None
        self._built = 0.0
        self._build_seconds = 0.0  # what the last build took
        self._synced = float("-inf")
        self._later: dict[str, int] = {}  # first chunk of a batch -> syncs it waited for its vector objects
        self._gave_way = 0  # syncs in a row that gave way before linking anything

    def dictionary(self, graph: GraphStore, contract: Contract, hold: bool = False,
                   stop: Callable[[], bool] | None = None) -> tuple[MentionAutomaton, str]:  # fmt: skip
        """The dictionary for the contract and the graph's data; with ``hold``, one built for the same contract
        is kept while the graph's new data is younger than ``REBUILD_SHARE`` allows. ``stop`` is asked between the
        build's reads (``build_surfaces``: :class:`Stopped`, the dictionary in use stays)."""
        state = (contract.content_hash, contract.version, graph.generation())
        age = time.monotonic() - self._built
        stale = state[2] is None and age > UNVERSIONED_TTL
        data_only = self._state is not None and state[:2] == self._state[:2]
        if hold and data_only and self.automaton is not None and not stale and age < self._build_seconds / REBUILD_SHARE:
            return self.automaton, self._fp
        if self.automaton is None or state != self._state or stale:
            t0 = time.perf_counter()
            surfaces = build_surfaces(contract, graph, stop)
            self.automaton, self._fp, self._state = MentionAutomaton(surfaces), fingerprint(surfaces), state
            self._built = time.monotonic()
            self._build_seconds = time.perf_counter() - t0
        return self.automaton, self._fp

    def sync(self, graph: GraphStore, contract: Contract | None, every: float = 0.0,
             on_linked: Callable[[list[str], list[MentionWrite]], object] | None = None,
             stop: Callable[[], bool] | None = None) -> LinkResult:  # fmt: skip
        """Link what the current dictionary has not linked; with ``every``, at most once per that many seconds.
        ``on_linked(chunk ids, mentions)`` runs before each batch is marked linked (the vector objects' entity
        refs, ``agents.mentions_vectors``): a failure there leaves the batch to link again. ``stop`` is asked
        between the dictionary's reads and before each batch: when it says so (graph work came in) the sync ends
        there, and the next one goes on with the chunks not linked yet (a dictionary cut short is read again);
        after ``GIVE_WAY`` syncs in a row that linked nothing, one links a batch before it asks."""
        store = chunk_store(graph)
        result = LinkResult()
        if store is None or contract is None or time.monotonic() - self._synced < every:
            return result
        self._synced = time.monotonic()
        if not store.chunk_rows("", 1):
            return result  # no prose at all: no dictionary to build
        result = self._link(store, graph, contract, every, on_linked, stop, patient=self._gave_way < GIVE_WAY)
        self._gave_way = self._gave_way + 1 if result.stopped and not result.chunks else 0
        return result

    def _link(self, store: ChunkStore, graph: GraphStore, contract: Contract, every: float,
              on_linked: Callable[[list[str], list[MentionWrite]], object] | None,
              stop: Callable[[], bool] | None, patient: bool) -> LinkResult:  # fmt: skip
        """``sync``'s dictionary and batches; not ``patient``: ``stop`` is asked only once a batch is linked."""
        result = LinkResult()
        t0 = time.perf_counter()
        try:
            automaton, fp = self.dictionary(graph, contract, hold=every > 0, stop=stop if patient else None)
        except Stopped as exc:
            log.info("mentions: %s (%.2f s into the dictionary); read again at the next sync", exc,
                     time.perf_counter() - t0)  # fmt: skip
            result.stopped = True
            return result
        result.fingerprint = fp
        while True:
            if stop is not None and (patient or result.chunks) and stop():
                result.stopped = True
                break
            rows = store.chunks_to_link(fp, BATCH)
            if not rows:
                break
            writes = [
                MentionWrite(chunk_id=r.id, label=m.entity.label, key=m.entity.key, start=m.start, end=m.end,
                             surface=m.surface, score=m.score, field=m.field, value=m.value)
                for r in rows for m in automaton.find(r.text)
                if (m.entity.label, m.entity.key) != (r.entity_label, r.entity_key)  # a text naming its own record
            ]  # fmt: skip
            if on_linked is not None:
                try:
                    on_linked([r.id for r in rows], writes)
                except LinkLater as exc:
                    tries = self._later[rows[0].id] = self._later.get(rows[0].id, 0) + 1
                    if tries < LATER_TRIES:
                        log.info("mentions: %s; linked at the next run", exc)
                        result.waiting = len(rows)
                        break
                    log.warning("mentions: %s after %d runs; linked in the graph without them", exc, tries)
                self._later.pop(rows[0].id, None)
            store.replace_mentions([r.id for r in rows], writes, fp)
            result.chunks += len(rows)
            result.mentions += len(writes)
        result.seconds = round(time.perf_counter() - t0, 3)
        if result.chunks:
            log.info("mentions: %d chunks linked, %d mentions (%.2f s)%s", result.chunks, result.mentions,
                     result.seconds, "; the rest after the graph work that came in" if result.stopped else "")
        return result
