"""Neo4j adapter: uniqueness constraints per identity key, batched ``UNWIND ... MERGE``, provenance edges.

Labels, property names and relationship types come from data, so they are always escaped with ``ident``;
values only ever travel as query parameters.

Apps sharing one Neo4j keep disjoint graphs: a store opened with a ``namespace`` (``label_namespace(app_id)``:
empty for the default app id, ``<app_id>__`` otherwise) prefixes every label it writes and reads, SourceRecord
included, so its MERGEs and uniqueness constraints never meet another app's nodes. Callers keep using the
contract's labels; only this adapter sees the stored ones.
"""

from __future__ import annotations

import hashlib
import random
import time
from collections import defaultdict
from collections.abc import Callable, Hashable, Sequence
from typing import Any

from esc.agents import metrics
from esc.agents.query.plan import PlanRow, QueryPlan
from esc.agents.stores.base import GraphStore
from esc.agents.stores.cypher import Sent, ident, to_properties
from esc.agents.stores.neo4j_chunks import Neo4jChunks
from esc.agents.stores.neo4j_lanes import run_lanes, split_rows
from esc.agents.stores.neo4j_statements import (
    DERIVED_FROM,
    FIRST_ROWS,
    First,
    creatable,
    create_query,
    create_rows,
    entity_query,
    fold,
    packed,
)
from esc.agents.types import EdgeWrite, EntityWrite, SourceRecordRef

try:
    import neo4j
except ImportError as exc:  # pragma: no cover - depends on the install
    raise ImportError("the Neo4j store needs the 'stack' extra: pip install 'esc-contracts[stack]'") from exc

SOURCE_RECORD = "SourceRecord"
DEFAULT_APP_ID = "esc"
WRITE_BATCH = 5000
"""Rows per ``UNWIND`` transaction: a backfill hands over a whole deferred source at once, and one transaction of
100k+ MERGEs exceeds Neo4j's transaction memory pool (``dbms.memory.transaction.total.max``)."""
DEADLOCK_RETRIES = 5
"""Immediate retries of a lane's transaction that Neo4j aborted to end a deadlock (then the caller's backoff)."""


def label_namespace(app_id: str) -> str:
    """The label prefix of an app's graph: none for the default app id (graphs written before namespacing stay
    readable), ``<app_id>__`` for any other."""
    return "" if app_id in ("", DEFAULT_APP_ID) else f"{app_id}__"


def chunks(rows: list[dict[str, Any]], size: int | None = None) -> list[list[dict[str, Any]]]:
    n = size or WRITE_BATCH
    return [rows[i : i + n] for i in range(0, len(rows), n)]


def _constraint_name(label: str, props: Sequence[str]) -> str:
    digest = hashlib.sha1("\x1f".join([label, *props]).encode()).hexdigest()[:12]
    return f"esc_key_{digest}"


class Neo4jGraphStore(Neo4jChunks, GraphStore):
    namespace = ""  # the label prefix of this app's graph (``label_namespace``)

    def __init__(self, uri: str, auth: tuple[str, str] | None = None, database: str | None = None,
                 namespace: str = "") -> None:  # fmt: skip
        # Notifications (e.g. "label does not exist" before the first write) are not errors for ESC.
        # The driver's own transaction retry (30 s by default) would hide an outage from the dependency tracker
        # (``resilient.py`` retries writes itself, with backoff and reporting): keep it short.
        self._driver = neo4j.GraphDatabase.driver(
            uri, auth=auth, notifications_min_severity="OFF", max_transaction_retry_time=1.0, connection_timeout=10.0
        )
        self._database = database
        self._known_constraints: set[tuple[str, tuple[str, ...]]] = set()
        self._planned: set[tuple[str, tuple[str, ...]]] = set()  # entity types written here once (FIRST_TOGETHER)
        self._fresh: set[tuple[str, tuple[str, ...]]] = set()  # constraint created here, nothing written yet
        self._dynamic_labels = True  # the server takes ``$(row.label)`` (Neo4j 5.26+; older: MERGE per type)
        self.namespace = namespace
        self.ensure_entity_key(SOURCE_RECORD, ["sid"])

    @property
    def _sr(self) -> str:
        return ident(self.namespace + SOURCE_RECORD)

    def _label(self, label: str) -> str:
        """The stored label of a contract label, escaped."""
        return ident(self.namespace + label)

    # -- schema -------------------------------------------------------------------------------------------------
    def ensure_entity_key(self, label: str, key_props: Sequence[str]) -> None:
        sig = (label, tuple(key_props))
        if sig in self._known_constraints or not key_props:
            return
        props = ", ".join(f"n.{ident(p)}" for p in key_props)
        query = (
            f"CREATE CONSTRAINT {ident(_constraint_name(self.namespace + label, key_props))} IF NOT EXISTS "
            f"FOR (n:{self._label(label)}) REQUIRE ({props}) IS UNIQUE"
        )
        summary = self._driver.execute_query(query, database_=self._database).summary
        self._known_constraints.add(sig)
        if summary.counters.constraints_added:
            self._fresh.add(sig)  # the label had no node before: its first rows may be CREATEd (create_query)

    def ensure_entity_keys(self, keys: Sequence[tuple[str, Sequence[str]]]) -> None:
        """Several constraints, the new ones at once: each new label costs the server a plan (neo4j_lanes.py)."""
        todo = list(dict.fromkeys((label, tuple(props)) for label, props in keys))
        todo = [(label, props) for label, props in todo if props and (label, props) not in self._known_constraints]
        run_lanes([lambda lb=label, ps=props: self.ensure_entity_key(lb, ps) for label, props in todo],  # type: ignore[misc]
                  [{label} for label, _ in todo])  # fmt: skip

    # -- writes -------------------------------------------------------------------------------------------------
    def upsert_entities(self, rows: Sequence[EntityWrite]) -> int:
        return self.upsert(rows, [])[0]

    def plan_upsert(self, entities: Sequence[EntityWrite], edges: Sequence[EdgeWrite]) -> Any:
        """The statements' parameters (``fold``): built while the batch before is written."""
        return fold(entities, edges)

    def upsert(
        self, entities: Sequence[EntityWrite], edges: Sequence[EdgeWrite], ahead: Any = None
    ) -> tuple[int, int]:
        """Entities with their SourceRecord + DERIVED_FROM, and the batch's edges. An edge that starts or ends at an
        entity of the batch is MERGEd in that entity's statement (``FOREACH`` per edge kind, skipped where the
        row has no such edge): the entity is already matched there, so the edge costs one index seek (the other
        end) instead of two plus a statement of its own. Other edges go through ``upsert_edges``."""
        groups, rest = ahead if ahead is not None else fold(entities, edges)
        self.ensure_entity_keys([(label, key_names) for label, key_names in groups]
                                + [(o, ok) for sigs, _ in groups.values() for _, _, o, ok in sigs])  # fmt: skip
        written = folded = 0
        alone: list[Callable[[], None]] = []  # statements with folded edges: they touch other labels' nodes
        jobs: list[Callable[[], None]] = []
        touches: list[set[Hashable]] = []
        first: list[First] = []  # new small types' first rows: a few types per statement
        created = self._creatable(groups, rest)  # types with no node yet: one CREATE statement for all
        for (label, key_names), (sigs, params) in groups.items():
            written += len(params)
            folded += sum(1 for row in params for t in row["e"] if t is not None)
            if (label, key_names) in created:
                continue
            if not sigs and (label, key_names) not in self._planned and len(params) <= min(FIRST_ROWS, WRITE_BATCH):
                first.append(((label, key_names), params))
                continue
            stored = [(out, rtype, self.namespace + other, ok) for out, rtype, other, ok in sigs]
            query = entity_query(self.namespace + label, key_names, stored, self.namespace + SOURCE_RECORD)
            if sigs:  # statements with folded edges touch other labels' nodes: after the lanes, one at a time
                alone.append(lambda q=query, rows=params, k=len(sigs): self._write_split(q, rows, k))  # type: ignore[misc]
            else:
                jobs.append(lambda q=query, rows=params: self._write_rows(q, rows))  # type: ignore[misc]
                touches.append({label, *(("sid", row["sid"]) for row in params)})
        for part in packed(first, WRITE_BATCH):
            jobs.append(lambda p=part: self._write_first(p))  # type: ignore[misc]
            touches.append({t for (label, _), params in part for t in (label, *(("sid", r["sid"]) for r in params))})
        if created:
            jobs.append(lambda: self._create_first(created))
            touches.append({t for (label, _), rows in created.items() for t in (label, *(("sid", r["sid"]) for r in rows))})
        run_lanes(jobs, touches)  # entity types at once (agents/stores/neo4j_lanes.py)
        for job in alone:
            job()
        return written, folded + (self.upsert_edges(rest) if rest else 0)

    def _creatable(self, groups: dict[tuple[str, tuple[str, ...]], Any], rest: Sequence[EdgeWrite]
                   ) -> dict[tuple[str, tuple[str, ...]], list[dict[str, Any]]]:  # fmt: skip
        """The batch's types whose constraint this store created and that nothing has written since (no edge of the
        batch may stub them either); every label the batch touches stops being fresh here, before any write, so
        a retried batch MERGEs."""
        stubbed = {lb for sigs, _ in groups.values() for _, _, lb, _ in sigs}
        stubbed |= {e.from_label for e in rest} | {e.to_label for e in rest}
        out = {
            key: params
            for key, (sigs, params) in groups.items()
            if self._dynamic_labels and key in self._fresh and not sigs and key[0] not in stubbed
            and len(params) <= WRITE_BATCH and creatable(key[1], params)
        }  # fmt: skip
        self._touched(stubbed | {label for label, _ in groups})
        return out

    def _touched(self, labels: set[str]) -> None:
        """Labels about to get nodes: no longer fresh (their next rows MERGE)."""
        self._fresh = {sig for sig in self._fresh if sig[0] not in labels}

    def _create_first(self, created: dict[tuple[str, tuple[str, ...]], list[dict[str, Any]]]) -> None:
        """``create_query`` for new types' first rows; when a node exists after all (another worker wrote the type,
        the constraint refuses a second one) or the server has no dynamic labels, the MERGE statements instead."""
        rows = [r for (label, names), params in created.items() for r in create_rows(self.namespace + label, names, params)]
        try:
            for part in chunks(rows):
                self._exec(create_query(self.namespace + SOURCE_RECORD), rows=part)
            return
        except neo4j.exceptions.CypherSyntaxError:
            self._dynamic_labels = False
        except neo4j.exceptions.ConstraintError:
            pass
        for types in packed(list(created.items()), WRITE_BATCH):
            self._write_first(types)

    def _write_first(self, part: list[First]) -> None:
        """The first rows of a few new entity types in one statement (``FIRST_TOGETHER``)."""
        sr = self.namespace + SOURCE_RECORD
        if len(part) == 1:
            (label, key_names), rows = part[0]
            self._write_rows(entity_query(self.namespace + label, key_names, [], sr), rows)
        else:
            query = " ".join(
                f"CALL () {{ {entity_query(self.namespace + label, key_names, [], sr, param=f'rows{j}')} }}"
                for j, ((label, key_names), _) in enumerate(part)
            )
            params = {f"rows{j}": rows for j, (_, rows) in enumerate(part)}
            self._exec(query, **params)
        self._planned.update(key for key, _ in part)

    def _write_rows(self, query: str, rows: list[dict[str, Any]]) -> None:
        for part in chunks(rows):
            self._exec(query, rows=part)

    def _write_split(self, query: str, rows: list[dict[str, Any]], folded: int) -> None:
        """A statement with folded edges, its rows in lanes written concurrently (``split_rows``): the server's
        two cores instead of one (a statement runs on one thread). A deadlock between the lanes aborts one
        transaction; it is retried at once (``_exec_lane``), not after the driver's and the store's backoff."""
        lanes_ = split_rows(rows, folded)
        if len(lanes_) == 1:
            self._write_rows(query, rows)
            return

        def lane(part: list[dict[str, Any]]) -> None:
            for piece in chunks(part):
                self._exec_lane(query, piece)

        run_lanes([lambda p=part: lane(p) for part in lanes_], [{i} for i in range(len(lanes_))])  # type: ignore[misc]

    def _exec_lane(self, query: str, rows: list[dict[str, Any]]) -> None:
        """One transaction of a lane; retried right away (a few times, with a short random pause) when the server
        chose it as a deadlock's victim. Any other error, or a deadlock that keeps coming, goes to the caller."""
        for attempt in range(DEADLOCK_RETRIES + 1):
            sent = Sent(rows)  # the driver keeps the parameters in a cycle: cleared below (see ``_exec``)
            try:
                with self._driver.session(database=self._database) as session, session.begin_transaction() as tx:
                    tx.run(query, rows=sent).consume()
                    tx.commit()
                return
            except neo4j.exceptions.TransientError as exc:
                if "DeadlockDetected" not in (exc.code or "") or attempt == DEADLOCK_RETRIES:
                    raise
                metrics.NEO4J_DEADLOCKS.inc()
                time.sleep(random.uniform(0.005, 0.05) * (attempt + 1))
            finally:
                sent.clear()

    def upsert_edges(self, rows: Sequence[EdgeWrite]) -> int:
        """MERGE edges; an endpoint not seen yet (a target, or a nested child's parent written by another batch)
        is MERGEd as a stub (``_stub = true``) that its own record fills in, so arrival order never loses an edge."""
        groups: dict[tuple[str, str, tuple[str, ...], str, tuple[str, ...]], list[dict[str, Any]]] = defaultdict(list)
        for row in rows:
            fk, tk = tuple(row.from_key), tuple(row.to_key)
            groups[(row.type, row.from_label, fk, row.to_label, tk)].append(
                {
                    "f": [row.from_key[k] for k in fk],
                    "t": [row.to_key[k] for k in tk],
                    "v": row.contract_version,
                }
            )
        written = 0
        for (rtype, flabel, fk, tlabel, tk), params in groups.items():
            fmap = ", ".join(f"{ident(k)}: row.f[{i}]" for i, k in enumerate(fk))
            tmap = ", ".join(f"{ident(k)}: row.t[{i}]" for i, k in enumerate(tk))
            query = (
                "UNWIND $rows AS row "
                f"MERGE (a:{self._label(flabel)} {{{fmap}}}) ON CREATE SET a._stub = true "
                f"MERGE (b:{self._label(tlabel)} {{{tmap}}}) ON CREATE SET b._stub = true "
                f"MERGE (a)-[r:{ident(rtype)}]->(b) SET r._contract_version = row.v"
            )
            self.ensure_entity_key(flabel, fk)
            self.ensure_entity_key(tlabel, tk)
            self._touched({flabel, tlabel})
            for part in chunks(params):
                summary = self._exec(query, rows=part).summary
                written += summary.counters.relationships_created + summary.counters.properties_set
        return written

    def retract_source_records(self, refs: Sequence[SourceRecordRef]) -> int:
        sids = [r.sid for r in refs]
        if not sids:
            return 0
        orphans = (
            f"UNWIND $sids AS sid MATCH (s:{self._sr} {{sid: sid}})<-[:{DERIVED_FROM}]-(n) "
            f"WHERE NOT EXISTS {{ MATCH (n)-[:{DERIVED_FROM}]->(o:{self._sr}) WHERE NOT o.sid IN $sids }} "
            "DETACH DELETE n"
        )
        self._exec(orphans, sids=sids)
        records = f"UNWIND $sids AS sid MATCH (s:{self._sr} {{sid: sid}}) DETACH DELETE s RETURN count(*) AS c"
        result = self._exec(records, sids=sids)
        return int(result.records[0]["c"]) if result.records else 0

    def source_records_for_file(self, file: str) -> list[SourceRecordRef]:
        """The source records read from ``file`` (used to retract a deleted file)."""
        rows = self.read(
            f"MATCH (s:{self._sr} {{file: $file}}) RETURN s.source AS source, s.record_id AS record_id, "
            "s.location AS location, s.file AS file",
            {"file": file},
        )
        return [SourceRecordRef(**{k: v for k, v in r.items() if v is not None}) for r in rows]

    # -- entity resolution: canonical entities -------------------------------------------------------------------
    def write_canonical(self, upserts: Sequence[Any], deletes: Sequence[str]) -> int:
        """Replace canonical entities whole, in one transaction (a reader never sees one half written): delete the
        old node (and its SAME_AS / DERIVED_FROM edges), create the new one with DERIVED_FROM to its members'
        source records, then one SAME_AS edge per member with its score and evidence. Labels and keys escaped;
        values as parameters."""
        from esc.agents.reconcile.model import CANONICAL, CID, SAME_AS

        canon = self._label(CANONICAL)
        self.ensure_entity_key(CANONICAL, [CID])
        self._touched({CANONICAL, *(m.label for u in upserts for m in u.members)})
        statements: list[tuple[str, dict[str, Any]]] = []
        cids = [*deletes, *(u.cid for u in upserts)]
        if cids:
            statements.append((f"UNWIND $rows AS cid MATCH (c:{canon} {{{ident(CID)}: cid}}) DETACH DELETE c", {"rows": cids}))
        rows = [{"props": to_properties(u.props), "sids": sorted(set(u.sids))} for u in upserts]
        if rows:
            statements.append((
                f"UNWIND $rows AS row CREATE (c:{canon}) SET c = row.props WITH c, row UNWIND row.sids AS sid "
                f"MATCH (s:{self._sr} {{sid: sid}}) MERGE (c)-[:{DERIVED_FROM}]->(s)", {"rows": Sent(rows)}))  # fmt: skip
        groups: dict[tuple[str, tuple[str, ...]], list[dict[str, Any]]] = defaultdict(list)
        for u in upserts:
            for m in u.members:
                names = tuple(m.key)
                groups[(m.label, names)].append(
                    {"cid": u.cid, "key": [m.key[k] for k in names], "score": m.score, "evidence": m.evidence}
                )
        for (label, names), params in groups.items():
            match = ", ".join(f"{ident(k)}: row.key[{i}]" for i, k in enumerate(names))
            statements.append((
                f"UNWIND $rows AS row MATCH (c:{canon} {{{ident(CID)}: row.cid}}) MATCH (m:{self._label(label)} "
                f"{{{match}}}) MERGE (m)-[r:{ident(SAME_AS)}]->(c) SET r.score = row.score, r.evidence = row.evidence",
                {"rows": Sent(params)}))  # fmt: skip

        def work(tx: Any) -> None:
            for query, params in statements:
                tx.run(query, params).consume()

        if statements:
            try:
                with self._driver.session(database=self._database) as session:
                    session.execute_write(work)
            finally:
                for _, sent in statements:  # (the driver keeps them in a reference cycle: see _exec)
                    sent["rows"].clear()
        return len(upserts)

    def canonical_ids(self) -> set[str]:
        from esc.agents.reconcile.model import CANONICAL, CID

        rows = self.read(f"MATCH (c:{self._label(CANONICAL)}) RETURN c.{ident(CID)} AS cid")
        return {str(r["cid"]) for r in rows if r["cid"] is not None}

    # -- reads --------------------------------------------------------------------------------------------------
    def count(self, label: str) -> int:
        rows = self.read(f"MATCH (n:{self._label(label)}) RETURN count(n) AS c")
        return int(rows[0]["c"])

    def read(self, query: str, params: dict[str, Any] | None = None) -> list[dict[str, Any]]:
        records, _, _ = self._driver.execute_query(
            query, parameters_=params or {}, routing_=neo4j.RoutingControl.READ, database_=self._database
        )
        return [r.data() for r in records]

    def distinct_values(self, label: str, props: Sequence[str], limit: int) -> list[tuple[Any, ...]]:
        """One record holding a list of the rows: the driver's per-record work in Python was most of a read (20,000
        rows: 0.45-0.55 CPU-s, collected in Neo4j 0.014-0.03), and it runs in the worker beside the records path
        (the mention dictionary, the query service's value index)."""
        cols = ", ".join(f"n.{ident(p)} AS v{i}" for i, p in enumerate(props))
        notnull = " AND ".join(f"n.{ident(p)} IS NOT NULL" for p in props)
        vs = ", ".join(f"v{i}" for i in range(len(props)))
        rows = self.read(f"MATCH (n:{self._label(label)}) WHERE {notnull} WITH DISTINCT {cols} LIMIT $limit "
                         f"RETURN collect([{vs}]) AS rows", {"limit": int(limit)})  # fmt: skip
        return [tuple(r) for r in rows[0]["rows"]] if rows else []

    def run_plan(self, plan: QueryPlan) -> list[PlanRow]:
        """Compile to parameterized Cypher (agents.query.cypher) and run it in a read transaction."""
        from esc.agents.query.cypher import compile_plan

        query, params = compile_plan(plan, self.namespace)
        rows = self.read(query, params)
        return [
            PlanRow(values={k: v for k, v in r.items() if k != "_citations"}, citations=r.get("_citations") or [])
            for r in rows
        ]

    def close(self) -> None:
        self._driver.close()
