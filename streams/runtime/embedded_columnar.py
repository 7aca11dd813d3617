"""The embedded runtime's columnar path for CSV/TSV files (issue 15.3): one Arrow read per file, one profile per
file, one bulk write per file — the same contract, graph and vectors as the record path.

``esc ingest --embedded`` hands each file of its scan to :meth:`ColumnarLane.deliver` first (a hook in
``FileWatcher._deliver``). A file the columnar reader takes (``streams/readers/csv_table.py``; anything it is not
sure to read exactly like the record reader goes record by record, as before):

- is appended to the records log (what a later backfill replays) with the envelopes the record path would have
  written, and its record keys go to the connector as the record path's would;
- is profiled whole, vectorised, into the profile the record path's batches merge into
  (``contract/profile_table.py``) — one profile update per file, counted once through the seen-index under the
  file's name and content hash, as records are under theirs;
- is held until the scan's contract covers its source, then planned row by row without envelopes and written in
  one bulk transaction (``agents/stores/embedded/bulk_plan.py``, ``bulk.py``). Rows whose key is null or does not
  coerce, and files whose source the contract does not cover (or that entity resolution or nesting concern), go
  through the record path's extraction instead, which dead-letters or defers them with its own reasons.

Text chunks are written after every held file's structured rows (``structured_seconds`` in the run summary marks
that moment), so structured records never wait on the embedder.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING

import pyarrow as pa

from esc.agents import metrics
from esc.agents.chunk_graph import chunk_store
from esc.agents.extract_compiled import SourcePlan, compile_source, covers
from esc.agents.extractors import _entity_key, _texts, provenance
from esc.agents.file_profile import table_delta
from esc.agents.pipeline import profile_update
from esc.agents.profiler import Watermark
from esc.agents.stores.embedded.bulk import BulkRows, write_bulk
from esc.agents.stores.embedded.bulk_plan import plan_rows
from esc.agents.stores.embedded.graph import EmbeddedGraphStore
from esc.agents.types import EntityWrite, TextObject
from esc.contract.entities import LONG_TEXT_CHARS
from esc.contract.key_witness import table_conflicts
from esc.contract.labels import record_label
from esc.contract.model import Contract
from esc.contract.records import Location
from esc.contract.semantic import is_text
from esc.settings import load
from esc.streams.csv_envelopes import payload_fragments
from esc.streams.events import RecordEnvelope, record_key
from esc.streams.readers import SourceFile
from esc.streams.readers.csv_table import read_csv_table

if TYPE_CHECKING:
    from esc.streams.runtime.inprocess import InProcessRuntime

log = logging.getLogger(__name__)

PROFILE_BATCH = 500  # the record path's profile batch (inprocess.BATCH): the frequent values follow its merges


@dataclass
class Held:
    """A file read and profiled, waiting for a contract that covers its source."""

    sf: SourceFile
    digest: str
    table: pa.Table
    ids: list[str]
    locations: list[str]
    event_time: str
    columns: dict[str, list[str | None]]  # the table's columns as Python lists (converted once)
    conflicts: dict[str, int]  # key candidates that repeat in the file (contract/key_witness.py)


def _worth_a_vector(name: str, value: str | None, long: set[str]) -> bool:
    """``extractors._texts``' test of a non-document value, made before an envelope is built for its row."""
    if not value or not value.strip():
        return False
    return is_text(value) or (name in long and len(value) >= LONG_TEXT_CHARS)


def columnar_lane(runtime: InProcessRuntime) -> ColumnarLane | None:
    """A lane for one ingest when ``ESC_COLUMNAR`` is on (the default) and the runtime's graph store is the embedded
    one; its watcher then offers each file to it first."""
    if not load().columnar or runtime.watcher is None or not isinstance(runtime.worker.ingestor.graph, EmbeddedGraphStore):
        return None
    lane = ColumnarLane(runtime)
    runtime.watcher.columnar = lane.deliver
    return lane


class ColumnarLane:
    def __init__(self, runtime: InProcessRuntime) -> None:
        self.rt = runtime
        self.held: list[Held] = []
        self.declined: dict[str, str] = {}  # file -> why it went record by record
        self.files = 0
        self.records = 0
        self.chunks = 0  # text chunks the lane embedded, and the seconds it took (chunking, embedding, storing)
        self.vector_seconds = 0.0

    # ------------------------------------------------------------------------------------------- delivery
    async def deliver(
        self, sf: SourceFile, digest: str
    ) -> tuple[list[str], Counter[str], dict[str, dict[str, int]]] | None:
        """Deliver one file the columnar way; None: the record path must read it."""
        watcher = self.rt.watcher
        max_fields = watcher.max_fields if watcher is not None else None
        got = await asyncio.to_thread(read_csv_table, sf, max_fields=max_fields)
        if isinstance(got, str):
            self.declined[sf.rel] = got
            log.info("%s: record by record (%s)", sf.rel, got)
            return None
        n = got.table.num_rows
        if n == 0:
            self.declined[sf.rel] = "no rows"
            return None
        now = datetime.now(UTC).isoformat()
        held = await asyncio.to_thread(self._prepare, sf, digest, got.table, now)
        self.held.append(held)
        self.files += 1
        self.records += n
        metrics.RECORDS_PRODUCED.labels(metrics.source_label(sf.source)).inc(n)
        self.rt.summary.records += n
        conflicts = {sf.source: held.conflicts}
        return [record_key(sf.source, rid) for rid in held.ids], Counter({sf.source: n}), conflicts

    def _prepare(self, sf: SourceFile, digest: str, table: pa.Table, now: str) -> Held:
        """Record ids, the records log, and the file's profile update (in a thread)."""
        n = table.num_rows
        locations = [Location(file=sf.rel, row=i + 1, line=i + 2).render() for i in range(n)]
        ids = [record_label(loc) for loc in locations]
        names = table.schema.names
        cols = [table.column(c).to_pylist() for c in names]
        log_ = self.rt.log
        # the envelopes the record path would log, from one JSON fragment per (column, distinct cell)
        frags = [payload_fragments(c, col, (", ", ": ")) for c, col in zip(names, cols, strict=True)]
        head = '{"source": ' + json.dumps(sf.source, ensure_ascii=False) + ', "record_id": '
        mid = ', "event_time": "' + now + '", "format": ' + json.dumps(sf.format) + ', "location": {"file": '
        mid += json.dumps(sf.rel, ensure_ascii=False) + ', "row": '
        tail = ', "parent": null, "file_hash": ' + json.dumps(digest) + ', "deleted": false}'
        for i in range(n):
            env = (head + json.dumps(ids[i], ensure_ascii=False) + ', "payload": {' + ", ".join([f[i] for f in frags])
                   + "}" + mid + str(i + 1) + ', "line": ' + str(i + 2) + "}" + tail)  # fmt: skip
            log_.append(record_key(sf.source, ids[i]).encode("utf-8"), env.encode("utf-8"))
        key = f"columnar\x1f{sf.rel}".encode()
        fresh, observed = self.rt.seen.check([(key, digest.encode())])
        if fresh[0]:  # a re-delivery of a version already profiled (a crash before the manifest) counts once
            self.rt._observed.extend(observed)
            mark = Watermark(stream=f"columnar/{sf.rel}", offset=time.time_ns())
            delta = table_delta(sf, digest, table, mark, PROFILE_BATCH)
            from esc.streams.runtime.inprocess import PROFILES

            self.rt.bus.publish(PROFILES, sf.source.encode(), profile_update(delta))
            metrics.PROFILE_UPDATES.labels(metrics.source_label(sf.source)).inc()
        return Held(sf, digest, table, ids, locations, now, dict(zip(names, cols, strict=True)), table_conflicts(table))

    # ------------------------------------------------------------------------------------------- writing
    async def finish(self, t0: float) -> None:
        """After the scan's end: let its sources settle, write what is held, and say when (since ``t0``)."""
        from esc.agents.pipeline import TICK
        from esc.streams.runtime.inprocess import PROFILES

        rt = self.rt
        if rt.watcher is not None:
            rt.watcher.columnar = None
        rt.bus.publish(PROFILES, b"tick", TICK)  # the scan's sources settle: the contract covers them
        await rt.pump()
        rt.summary.structured_seconds = round(await self.write() - t0, 3)
        rt.summary.columnar_files, rt.summary.columnar_records = self.files, self.records
        rt.summary.vector_chunks, rt.summary.vector_seconds = self.chunks, round(self.vector_seconds, 3)

    async def write(self) -> float:
        """Write every held file under the current contract (after the scan settled), texts last; returns the
        moment (``time.perf_counter``) the structured rows were written."""
        contract = self.rt.contract
        ingestor = self.rt.worker.ingestor
        chunked: list[tuple[Held, SourcePlan, set[int]]] = []
        for held in self.held:
            source = held.sf.source
            direct = (
                contract is not None
                and isinstance(ingestor.graph, EmbeddedGraphStore)
                and covers(contract, source)
            )
            sp = compile_source(contract, source) if direct and contract is not None else None
            if contract is None or sp is None or sp.nesting or sp.document or sp.types:
                log.info("%s: extracted record by record (not covered, nested, or typed)", held.sf.rel)
                await self._record_path(held, range(held.table.num_rows))
                continue
            rows = BulkRows()
            graph = ingestor.graph
            assert isinstance(graph, EmbeddedGraphStore)
            er = ingestor.reconciler
            members: list[EntityWrite] | None = (
                [] if er is not None and er.resolver is not None and er.resolver.spec.get(sp.label) is not None else None
            )
            bad = plan_rows(sp, held.columns, source, held.ids, held.locations, held.sf.rel, held.digest,
                            contract.version, graph._endpoints, rows, members)  # fmt: skip
            written, _ = await asyncio.to_thread(write_bulk, graph, rows, contract.version)
            if er is not None and members:
                er.use(contract)
                er.on_written(members)
            self.rt.summary.written += written
            metrics.RECORDS_IN.labels(metrics.source_label(source)).inc(held.table.num_rows)
            metrics.RECORDS_OUT.labels(metrics.source_label(source), "neo4j").inc(written)
            ingestor.ingested.add(source)
            if bad:
                log.info("%s: %d rows record by record (null or unreadable identity key)", held.sf.rel, len(bad))
                await self._record_path(held, bad)
            if sp.texts or sp.long_strings:
                chunked.append((held, sp, set(bad)))
        self.rt.worker._save()
        structured = time.perf_counter()
        # the vector lane: chunks of every written file, embedded and stored after all structured rows
        texts: list[TextObject] = []
        for held, sp, skip in chunked:
            assert contract is not None  # (only planned files are chunked)
            texts.extend(self._texts(held, sp, contract, skip))
        if texts:
            await asyncio.to_thread(self._write_texts, texts)
        self.chunks = len(texts)
        self.vector_seconds = time.perf_counter() - structured
        self.held.clear()  # (the tables and their columns go now)
        return structured

    def _texts(self, held: Held, sp: SourcePlan, contract: Contract, skip: set[int]) -> list[TextObject]:
        names = [n for n in (*sp.texts, *sp.long_strings) if n in held.table.schema.names]
        cols = held.columns
        keyed = {k for k, _ in sp.key}
        key_cols = {k: held.columns[k] for k in keyed if k in held.columns}
        long = set(sp.long_strings)
        out: list[TextObject] = []
        for i in range(held.table.num_rows):
            if i in skip or not any(_worth_a_vector(n, cols[n][i], long) for n in names):
                continue  # (what _texts would skip: no value that is text itself)
            payload = {n: cols[n][i] for n in names} | {k: c[i] for k, c in key_cols.items()}
            env = RecordEnvelope.model_construct(source=held.sf.source, record_id=held.ids[i], payload=payload,
                                                 format=held.sf.format, file_hash=held.digest, deleted=False,
                                                 location={"file": held.sf.rel, "row": i + 1, "line": i + 2})  # fmt: skip
            prov = provenance(env)
            key = _entity_key(sp, env, prov)
            if isinstance(key, str):
                continue
            out.extend(_texts(sp, env, key, prov, contract.version))
        return out

    def _write_texts(self, texts: list[TextObject]) -> None:
        ingestor = self.rt.worker.ingestor
        ingestor._write_texts(texts)
        chunks = chunk_store(ingestor.graph)
        if chunks is not None:
            chunks.upsert_chunks(texts)

    async def _record_path(self, held: Held, rows: range | list[int]) -> None:
        """Rows the record path's extraction takes (its dead letters and deferrals, with its reasons)."""
        names = held.table.schema.names
        cols = [held.columns[c] for c in names]
        messages = []
        for i in rows:
            env = {"source": held.sf.source, "record_id": held.ids[i],
                   "payload": dict(zip(names, (c[i] for c in cols), strict=True)), "event_time": held.event_time,
                   "format": held.sf.format, "location": {"file": held.sf.rel, "row": i + 1, "line": i + 2},
                   "file_hash": held.digest}  # fmt: skip
            key = record_key(held.sf.source, held.ids[i]).encode("utf-8")
            messages.append((key, json.dumps(env, ensure_ascii=False).encode("utf-8")))
        for start in range(0, len(messages), 500):
            result = await self.rt.worker.on_records(messages[start : start + 500])
            self.rt.summary.written += result.written
            for dead in result.dead:
                self.rt._send_dead(dead)
