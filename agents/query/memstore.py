"""In-memory ``GraphStore``: the reference semantics of the query IR, and the store unit tests and ``bench/qa.py
--backend memory`` use.

Nodes are keyed by (label, identity key) and hold their properties and source records; edges are (type, from,
to) sets; ``run_plan`` evaluates a ``QueryPlan`` by walking the pattern over these structures. ``read`` (a
backend's native language) is not available here.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

from esc.agents.query.plan import CITE_CAP, Expr, Filter, PlanRow, QueryPlan, ReturnItem
from esc.agents.stores.base import GraphStore
from esc.agents.stores.cypher import to_properties
from esc.agents.types import EdgeWrite, EntityWrite, SourceRecordRef

NodeId = tuple[str, str]  # (label, canonical key JSON)


def _nid(label: str, key: dict[str, Any]) -> NodeId:
    return label, json.dumps(sorted(key.items()), default=str)


class _Node:
    __slots__ = ("label", "props", "records")

    def __init__(self, label: str) -> None:
        self.label = label
        self.props: dict[str, Any] = {}
        self.records: dict[str, dict[str, Any]] = {}  # sid -> {source, record_id, location}


def _text(v: Any) -> str:
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


def _match(value: Any, f: Filter) -> bool:
    if f.op == "isnull":
        return value is None
    if f.op == "notnull":
        return value is not None
    if value is None:
        return False
    target = f.value
    try:
        if f.op == "eq":
            return bool(value == target)
        if f.op == "ne":
            return bool(value != target)
        if f.op == "ieq":
            return _text(value).strip().casefold() == _text(target).strip().casefold()
        if f.op == "contains":
            return _text(target).casefold() in _text(value).casefold()
        if f.op == "startswith":
            return _text(value).startswith(_text(target))
        if f.op == "in":
            return value in target
        if f.op == "gt":
            return bool(value > target)
        if f.op == "gte":
            return bool(value >= target)
        if f.op == "lt":
            return bool(value < target)
        if f.op == "lte":
            return bool(value <= target)
    except TypeError:
        return False
    return False


def _eval(e: Expr, props: dict[str, Any]) -> Any:
    if e.prop is not None:
        return props.get(e.prop)
    if e.const is not None:
        return e.const
    a, b = (_eval(x, props) for x in e.args)
    if not isinstance(a, int | float) or not isinstance(b, int | float):
        return None
    if e.op == "add":
        return a + b
    if e.op == "sub":
        return a - b
    if e.op == "mul":
        return a * b
    return a / b if b else None


class MemoryGraphStore(GraphStore):
    def __init__(self) -> None:
        self.nodes: dict[NodeId, _Node] = {}
        self.by_label: dict[str, list[NodeId]] = defaultdict(list)
        self.out: dict[tuple[NodeId, str], set[NodeId]] = defaultdict(set)
        self.inc: dict[tuple[NodeId, str], set[NodeId]] = defaultdict(set)
        self.edge_props: dict[tuple[str, NodeId, NodeId], dict[str, Any]] = {}

    # -- writes -------------------------------------------------------------------------------------------------
    def ensure_entity_key(self, label: str, key_props: Sequence[str]) -> None:
        return None

    def _node(self, label: str, key: dict[str, Any]) -> tuple[NodeId, _Node]:
        nid = _nid(label, key)
        node = self.nodes.get(nid)
        if node is None:
            node = self.nodes[nid] = _Node(label)
            node.props.update(to_properties(key))
            self.by_label[label].append(nid)
        return nid, node

    def upsert_entities(self, rows: Sequence[EntityWrite]) -> int:
        for row in rows:
            _, node = self._node(row.label, row.key)
            node.props.update(to_properties(row.properties))
            node.props.update(to_properties(row.key))
            p = row.provenance
            node.records[p.sid] = {"source": p.source, "record_id": p.record_id, "location": p.location}
        return len(rows)

    def upsert_edges(self, rows: Sequence[EdgeWrite]) -> int:
        for row in rows:
            a, _ = self._node(row.from_label, row.from_key)
            b, _ = self._node(row.to_label, row.to_key)
            self.out[(a, row.type)].add(b)
            self.inc[(b, row.type)].add(a)
        return len(rows)

    def retract_source_records(self, refs: Sequence[SourceRecordRef]) -> int:
        sids = {r.sid for r in refs}
        for node in self.nodes.values():
            for sid in sids & node.records.keys():
                del node.records[sid]
        return len(sids)

    def write_canonical(self, upserts: Sequence[Any], deletes: Sequence[str]) -> int:
        from esc.agents.reconcile.memstore_canonical import write_canonical

        return write_canonical(self, upserts, deletes)

    def canonical_ids(self) -> set[str]:
        from esc.agents.reconcile.model import CANONICAL, CID

        return {str(self.nodes[n].props[CID]) for n in self.by_label.get(CANONICAL, [])}

    # -- reads --------------------------------------------------------------------------------------------------
    def count(self, label: str) -> int:
        return len(self.by_label.get(label, []))

    def read(self, query: str, params: dict[str, Any] | None = None) -> list[dict[str, Any]]:
        raise NotImplementedError("the in-memory store runs query plans only (run_plan)")

    def _candidates(self, label: str, filters: list[Filter]) -> Iterable[NodeId]:
        for nid in self.by_label.get(label, []):
            props = self.nodes[nid].props
            if all(_match(props.get(f.prop), f) for f in filters):
                yield nid

    def _bindings(self, plan: QueryPlan) -> list[dict[str, NodeId]]:
        """Matches of the path; as in one Cypher MATCH, a path never uses the same relationship twice."""
        Edge = tuple[str, NodeId, NodeId]  # (type, from, to)
        rows: list[tuple[dict[str, NodeId], frozenset[Edge]]] = [
            ({plan.start.var: nid}, frozenset()) for nid in self._candidates(plan.start.label, plan.start.filters)
        ]
        prev = plan.start.var
        for hop in plan.hops:
            t = hop.target
            nxt: list[tuple[dict[str, NodeId], frozenset[Edge]]] = []
            index = self.out if hop.direction == "out" else self.inc
            for row, used in rows:
                here = row[prev]
                for nid in index.get((here, hop.rel_type), ()):
                    edge = (hop.rel_type, here, nid) if hop.direction == "out" else (hop.rel_type, nid, here)
                    if edge in used:
                        continue
                    if t.var in row and row[t.var] != nid:  # a cycle back to a bound node
                        continue
                    node = self.nodes[nid]
                    if node.label == t.label and all(_match(node.props.get(f.prop), f) for f in t.filters):
                        nxt.append(({**row, t.var: nid}, used | {edge}))
            rows = nxt
            prev = t.var
        return [row for row, _ in rows]

    def _value(self, item: ReturnItem, nid: NodeId) -> Any:
        props = self.nodes[nid].props
        if item.expr is not None:
            return _eval(item.expr, props)
        return props.get(item.prop) if item.prop is not None else nid

    def _cites(self, nids: Iterable[NodeId]) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for nid in nids:
            out.extend(self.nodes[nid].records.values())
        return out

    def distinct_values(self, label: str, props: Sequence[str], limit: int) -> list[tuple[Any, ...]]:
        out: dict[str, tuple[Any, ...]] = {}
        for nid in self.by_label.get(label, []):
            got = self.nodes[nid].props
            vals = tuple(got.get(p) for p in props)
            if any(v is None for v in vals):
                continue
            out.setdefault(repr(vals), vals)
            if len(out) >= limit:
                break
        return list(out.values())

    def run_plan(self, plan: QueryPlan) -> list[PlanRow]:
        bindings = self._bindings(plan)
        aggs = [r for r in plan.returns if r.agg is not None]
        plain = [r for r in plan.returns if r.agg is None]
        order = plan.order_by
        if not aggs:
            needed = list(dict.fromkeys([r.var for r in plain] + plan.cite + ([order.var] if order and order.var else [])))
            seen: dict[tuple[NodeId, ...], dict[str, NodeId]] = {}
            for b in bindings:
                seen.setdefault(tuple(b[v] for v in needed), b)
            chosen = list(seen.values())
            if order is not None and order.prop is not None:
                prop = order.prop
                present = [b for b in chosen if self.nodes[b[order.var]].props.get(prop) is not None]
                present.sort(key=lambda b: self.nodes[b[order.var]].props[prop], reverse=order.desc)
                chosen = present + [b for b in chosen if b not in present]
            if plan.limit is not None:
                chosen = chosen[: plan.limit]
            return [
                PlanRow(
                    values={r.alias: self._value(r, b[r.var]) for r in plain},
                    citations=self._cites(b[v] for v in plan.cite),
                )
                for b in chosen
            ]
        groups: dict[tuple[Any, ...], list[dict[str, NodeId]]] = {}
        for b in bindings:
            key = tuple(b[v] for v in plan.group_by) + tuple(
                self._value(r, b[r.var]) for r in plain if r.var not in plan.group_by
            )
            groups.setdefault(key, []).append(b)
        if not groups and not plain and not plan.group_by:
            groups[()] = []
        results: list[tuple[dict[str, Any], list[dict[str, Any]]]] = []
        for members in groups.values():
            values: dict[str, Any] = {}
            for r in plain:
                values[r.alias] = self._value(r, members[0][r.var]) if members else None
            for r in aggs:
                values[r.alias] = self._aggregate(r, members)
            cited: list[NodeId] = []
            for v in plan.cite:
                cited.extend(list(dict.fromkeys(b[v] for b in members))[:CITE_CAP])
            results.append((values, self._cites(cited)[:CITE_CAP]))
        if order is not None and order.alias is not None:
            alias = order.alias
            sign = -1 if order.desc else 1
            results.sort(key=lambda vr: (vr[0][alias] is None, sign * (vr[0][alias] or 0)))
        if plan.limit is not None:
            results = results[: plan.limit]
        return [PlanRow(values=v, citations=c) for v, c in results]

    def _aggregate(self, r: ReturnItem, members: list[dict[str, NodeId]]) -> Any:
        if r.agg == "count" and r.prop is None and r.expr is None:
            return len({b[r.var] for b in members})
        vals = [self._value(r, b[r.var]) for b in members]
        vals = [v for v in vals if v is not None]
        if r.agg == "count":
            return len(vals)
        if r.agg == "count_distinct":
            return len(set(map(str, vals)))
        nums: list[int | float] = [
            v for v in vals if isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)
        ]
        if r.agg in ("min", "max"):  # the value keeps its type (an integer stays an integer, as in Neo4j)
            pool: list[Any] = nums if nums else vals
            if not pool:
                return None
            try:
                return min(pool) if r.agg == "min" else max(pool)
            except TypeError:  # mixed non-numeric types: compare as text
                return min(pool, key=str) if r.agg == "min" else max(pool, key=str)
        if r.agg == "sum":  # the sum of nothing is 0 (Neo4j); of integers an integer
            return sum(nums) if all(isinstance(v, int) for v in nums) else float(sum(nums))
        if not nums:
            return None
        return sum(nums) / len(nums)

    def close(self) -> None:
        return None


def load_folder(store: GraphStore, root: Any, contract: Any, batch: int = 2000) -> int:
    """Read every source under ``root`` with the contract readers and write it through the extractor into
    ``store`` (any GraphStore). Returns the number of entities written. Used by tests and bench/qa.py."""
    from pathlib import Path

    from esc.agents.extractors import plan as extract
    from esc.contract.records import Record
    from esc.streams.events import envelope_for
    from esc.streams.readers import read, scan_with_errors

    files, _ = scan_with_errors(Path(root))
    written = 0
    for sf in files:
        envs = []
        for item in read(sf):
            if isinstance(item, Record):
                envs.append(envelope_for(item, sf.rel, "bench"))
            if len(envs) >= batch:
                written += _write(store, extract(envs, contract))
                envs = []
        if envs:
            written += _write(store, extract(envs, contract))
    return written


def _write(store: GraphStore, planned: Any) -> int:
    store.upsert_entities(planned.entities)
    store.upsert_edges(planned.edges)
    return len(planned.entities)
