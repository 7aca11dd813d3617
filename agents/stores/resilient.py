"""Outages of Neo4j and Weaviate: every write retries with exponential backoff and jitter (``tenacity``) until the
store is back, so the pipeline waits (Kafka keeps the uncommitted records) instead of exiting; reads for questions
retry briefly, then fail with a clear error.

Each store is a ``Dependency`` whose state the worker reports on ``/readyz`` and ``esc_dependency_up``; the log
gets one line when it goes down, one when it is back, and a summary every ``SUMMARY_SECONDS`` in between, never a
line per failed call (nor for a blip: ``BLIP_SECONDS``).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from tenacity import Retrying, retry_if_exception, stop_after_attempt, stop_never, wait_exponential_jitter

from esc.agents import metrics
from esc.agents.query.plan import PlanRow, QueryPlan
from esc.agents.stores.base import GraphStore, VectorStore
from esc.agents.types import EdgeWrite, EntityWrite, SourceRecordRef, TextObject

log = logging.getLogger(__name__)

T = TypeVar("T")
Transient = Callable[[BaseException], bool]
"""Whether an error means "the server is not reachable now" (retry) rather than "this call is wrong" (raise)."""
SUMMARY_SECONDS = 30.0
WAIT = wait_exponential_jitter(multiplier=0.2, max=5.0, jitter=0.5)  # 0.2 s, 0.4 s, ... up to 5 s
READ_ATTEMPTS = 3
BLIP_SECONDS = 2.0
BLIP_FAILURES = 3
"""An outage is logged once it lasted BLIP_SECONDS or BLIP_FAILURES failed calls: a server going down or coming up
fails one call while the next one succeeds (concurrent calls saw both within a second), and each such blip cost two
log lines. ``up`` (``/readyz``, ``esc_dependency_up``) flips at once all the same."""


class Dependency:
    """Reachability of one external service, as the calls to it see it (thread-safe)."""

    def __init__(self, name: str, clock: Callable[[], float] = time.monotonic) -> None:
        self.name = name
        self._clock = clock
        self._lock = threading.Lock()
        self.up = True
        self.since = clock()
        self.failures = 0  # failed calls in the current outage
        self.error = ""
        self._summarized = self.since
        self._logged = False  # the current outage's first line was written
        metrics.DEPENDENCY_UP.labels(name).set(1)

    def failed(self, exc: BaseException | None) -> None:
        now = self._clock()
        with self._lock:
            self.failures += 1
            self.error = f"{type(exc).__name__}: {exc}"[:300] if exc is not None else "unknown error"
            if self.up:
                self.up, self.since, self._logged = False, now, False
                metrics.DEPENDENCY_UP.labels(self.name).set(0)
            if not self._logged and (now - self.since >= BLIP_SECONDS or self.failures >= BLIP_FAILURES):
                self._logged, self._summarized = True, now
                log.warning("%s is unreachable (%s): writes wait and retry with backoff", self.name, self.error)
            elif self._logged and now - self._summarized >= SUMMARY_SECONDS:
                self._summarized = now
                log.warning("%s still unreachable after %.0f s (%d failed attempts): %s", self.name, now - self.since,
                            self.failures, self.error)  # fmt: skip

    def ok(self) -> None:
        if self.up:  # the common case: no lock
            return
        now = self._clock()
        with self._lock:
            if not self.up:
                if self._logged:
                    log.warning("%s is reachable again after %.0f s (%d failed attempts)", self.name,
                                now - self.since, self.failures)  # fmt: skip
                self.up, self.since, self.failures, self.error = True, now, 0, ""
                metrics.DEPENDENCY_UP.labels(self.name).set(1)

    def snapshot(self) -> dict[str, Any]:
        out: dict[str, Any] = {"up": self.up, "for_seconds": round(self._clock() - self.since, 1)}
        if not self.up:
            out.update(failures=self.failures, error=self.error)
        return out


def call(dep: Dependency, transient: Transient, fn: Callable[..., T], *args: Any,
         forever: bool = True, **kwargs: Any) -> T:  # fmt: skip
    """``fn(*args, **kwargs)``, retried on ``transient`` errors: forever (writes) or ``READ_ATTEMPTS`` times."""
    retrying = Retrying(
        retry=retry_if_exception(transient),
        wait=WAIT,
        stop=stop_never if forever else stop_after_attempt(READ_ATTEMPTS),
        before_sleep=lambda state: dep.failed(state.outcome.exception() if state.outcome else None),
        reraise=True,
    )
    for attempt in retrying:
        with attempt:
            result = fn(*args, **kwargs)
    dep.ok()
    return result


class _Lazy:
    """The client is made on first use, inside a call that retries: a server down at start delays the first
    write (in a worker thread) instead of blocking the event loop that builds the store."""

    def __init__(self, make: Callable[[], Any], dep: Dependency, transient: Transient) -> None:
        self._make, self.dep, self.transient = make, dep, transient
        self._inner: Any = None
        self._lock = threading.Lock()

    @property
    def inner(self) -> Any:
        if self._inner is None:
            with self._lock:
                if self._inner is None:
                    self._inner = call(self.dep, self.transient, self._make)
        return self._inner

    def __getattr__(self, name: str) -> Any:  # store-specific extras (delete_by_record, drop, ...): retried like writes
        if name.startswith("_"):
            raise AttributeError(name)
        attr = getattr(self.inner, name)
        if not callable(attr):
            return attr
        return lambda *a, **k: call(self.dep, self.transient, attr, *a, **k)

    def _w(self, fn: Callable[..., T], *args: Any) -> T:
        return call(self.dep, self.transient, fn, *args)

    def _r(self, fn: Callable[..., T], *args: Any) -> T:
        return call(self.dep, self.transient, fn, *args, forever=False)

    def close(self) -> None:
        if self._inner is not None:
            self._inner.close()


class ResilientGraphStore(_Lazy, GraphStore):
    """A graph store whose calls survive an outage of the server behind it."""

    def ensure_entity_key(self, label: str, key_props: Sequence[str]) -> None:
        self._w(self.inner.ensure_entity_key, label, key_props)

    def ensure_entity_keys(self, keys: Sequence[tuple[str, Sequence[str]]]) -> None:
        self._w(self.inner.ensure_entity_keys, keys)

    def upsert_entities(self, rows: Sequence[EntityWrite]) -> int:
        return self._w(self.inner.upsert_entities, rows)

    def upsert_edges(self, rows: Sequence[EdgeWrite]) -> int:
        return self._w(self.inner.upsert_edges, rows)

    def plan_upsert(self, entities: Sequence[EntityWrite], edges: Sequence[EdgeWrite]) -> Any:
        return self.inner.plan_upsert(entities, edges)  # no server call: nothing to retry

    def upsert(
        self, entities: Sequence[EntityWrite], edges: Sequence[EdgeWrite], ahead: Any = None
    ) -> tuple[int, int]:
        return self._w(self.inner.upsert, entities, edges, ahead)  # MERGE only: a retried batch writes nothing twice

    def retract_source_records(self, refs: Sequence[SourceRecordRef]) -> int:
        return self._w(self.inner.retract_source_records, refs)

    def source_records_for_file(self, file: str) -> list[SourceRecordRef]:
        return self._w(self.inner.source_records_for_file, file)

    def count(self, label: str) -> int:
        return self._r(self.inner.count, label)

    def read(self, query: str, params: dict[str, Any] | None = None) -> list[dict[str, Any]]:
        return self._r(self.inner.read, query, params)

    def run_plan(self, plan: QueryPlan) -> list[PlanRow]:
        return self._r(self.inner.run_plan, plan)

    def generation(self) -> int | None:
        return self._r(self.inner.generation)

    def distinct_values(self, label: str, props: Sequence[str], limit: int) -> list[tuple[Any, ...]]:
        return self._r(self.inner.distinct_values, label, props, limit)

    def write_canonical(self, upserts: Sequence[Any], deletes: Sequence[str]) -> int:
        return self._w(self.inner.write_canonical, upserts, deletes)  # replaces whole canonical entities: idempotent

    def canonical_ids(self) -> set[str]:
        return self._w(self.inner.canonical_ids)

    # chunk reads that questions make (agents/query/prose.py) fail after a few attempts like the reads above; the
    # other ChunkStore methods (the linker's) go through __getattr__ and wait out an outage like writes
    def chunk_rows(self, after: str, limit: int) -> list[Any]:
        return self._r(self.inner.chunk_rows, after, limit)

    def mentioning(self, label: str, key: str, limit: int) -> list[dict[str, Any]]:
        return self._r(self.inner.mentioning, label, key, limit)

    def mentions_in(self, chunk_ids: Sequence[str]) -> list[Any]:
        return self._r(self.inner.mentions_in, chunk_ids)


class ResilientVectorStore(_Lazy, VectorStore):
    """A vector store whose writes wait out an outage (the vector outbox keeps its texts until acknowledged)."""

    def ensure_collection(self, name: str) -> None:
        self._w(self.inner.ensure_collection, name)

    def upsert(self, collection: str, objects: Sequence[TextObject]) -> int:
        return self._w(self.inner.upsert, collection, objects)

    def near_vector(self, collection: str, vector: Sequence[float], limit: int = 5) -> list[dict[str, Any]]:
        return self._r(self.inner.near_vector, collection, vector, limit)

    def count(self, collection: str) -> int:
        return self._r(self.inner.count, collection)
