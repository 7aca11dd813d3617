"""Incremental entity resolution: records arrive, change or go; links and clusters follow, and the canonical
entities to write (or delete) come out with a merge/split event each time clusters join or fall apart.

Links are a pure function of two records (``contract.er_match.compare``), and clusters are the connected components
of the links (plus records of one entity node, which are one thing already), so the clusters depend only on the
records present, never on the order they came in: a replay, an edit or a delete leaves the clusters a fresh run of
the same final records gives. Candidates come from blocking keys (e-mail, phone tail, name words); a key shared by
more than ``MAX_BLOCK`` records is too common to find anything and is not searched.

Canonical entities exist for every cluster of a type that has at least one cluster of two or more records (so a
type without any duplicate keeps its graph as it was, and a count over a type that has some counts clusters).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field

from esc.agents.reconcile.consolidate import consolidate
from esc.agents.reconcile.model import CanonicalWrite, ClusterEvent, Member, cluster_id
from esc.contract.er_fields import ResolutionSpec
from esc.contract.er_match import Match, Norm, blocks, compare, normalize

MAX_BLOCK = 200
Node = tuple[str, tuple]


@dataclass
class Changes:
    upserts: list[CanonicalWrite] = field(default_factory=list)
    deletes: list[str] = field(default_factory=list)  # cluster ids whose canonical entity goes
    events: list[ClusterEvent] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.upserts or self.deletes or self.events)


@dataclass(frozen=True)
class _Cluster:
    sids: frozenset[str]
    labels: frozenset[str]
    nodes: int


class Resolver:
    def __init__(self, spec: ResolutionSpec) -> None:
        self.spec = spec
        self.members: dict[str, Member] = {}
        self.norms: dict[str, Norm] = {}
        self._keys: dict[str, set[str]] = {}
        self.blocks: dict[str, set[str]] = defaultdict(set)
        self.links: dict[str, dict[str, Match]] = defaultdict(dict)
        self.by_node: dict[Node, set[str]] = defaultdict(set)
        self.cluster_of: dict[str, str] = {}
        self.clusters: dict[str, _Cluster] = {}
        self.multi: Counter[str] = Counter()  # label -> clusters of 2+ nodes holding it
        self.written: set[str] = set()  # cluster ids with a canonical entity in the graph
        self.compared = 0

    # -- records in and out -----------------------------------------------------------------------------------
    def upsert(self, members: Iterable[Member]) -> Changes:
        affected: set[str] = set()
        old: set[str] = set()
        new: set[str] = set()
        for m in members:
            if self.spec.get(m.label) is None:
                continue
            have = self.members.get(m.sid)
            if have == m:
                affected.add(m.sid)
                continue
            if have is None:
                new.add(m.sid)
            else:
                affected |= self._drop(m.sid, old)
            self._add(m)
            affected.add(m.sid)
        return self._recluster(affected, old, new)

    def remove(self, sids: Iterable[str]) -> Changes:
        affected: set[str] = set()
        old: set[str] = set()
        for sid in sids:
            if sid in self.members:
                affected |= self._drop(sid, old)
        return self._recluster(affected, old, set())

    def set_spec(self, spec: ResolutionSpec) -> Changes:
        """A new contract version: compare everything again under its spec (records of types it no longer
        resolves go)."""
        if spec == self.spec:
            return Changes()
        kept = [m for m in self.members.values() if spec.get(m.label) is not None]
        gone = [s for s, m in self.members.items() if spec.get(m.label) is None]
        old = set(self.clusters)
        for sid in list(self.members):
            self._drop(sid, set())
        self.spec = spec
        for m in sorted(kept, key=lambda m: m.sid):
            self._add(m)
        del gone
        return self._recluster({m.sid for m in kept}, old, set())

    # -- state ------------------------------------------------------------------------------------------------
    def _drop(self, sid: str, old: set[str]) -> set[str]:
        """Forget a record's links and keys; returns the records it touched."""
        m = self.members.pop(sid)
        self.norms.pop(sid, None)
        touched = set(self.links.pop(sid, {}))
        for other in touched:
            self.links[other].pop(sid, None)
        for k in self._keys.pop(sid, set()):
            self.blocks[k].discard(sid)
            if not self.blocks[k]:
                del self.blocks[k]
        mates = self.by_node[m.node]
        mates.discard(sid)
        touched |= mates
        if not mates:
            del self.by_node[m.node]
        cid = self.cluster_of.get(sid)
        if cid is not None:
            old.add(cid)
        return touched

    def _add(self, m: Member) -> None:
        t = self.spec.get(m.label)
        assert t is not None
        n = normalize(t, dict(m.values))
        keys = blocks(n)
        seen: set[str] = set()
        for k in sorted(keys):
            group = self.blocks.get(k, set())
            if len(group) >= MAX_BLOCK:
                continue
            for other in group - seen:
                seen.add(other)
                if other == m.sid:
                    continue
                self.compared += 1
                match = compare(n, self.norms[other])
                if match.matched:
                    self.links[m.sid][other] = match
                    self.links[other][m.sid] = match
        self.members[m.sid] = m
        self.norms[m.sid] = n
        self._keys[m.sid] = keys
        for k in keys:
            self.blocks[k].add(m.sid)
        self.by_node[m.node].add(m.sid)

    def _component(self, start: str) -> set[str]:
        comp, todo = {start}, [start]
        while todo:
            s = todo.pop()
            nxt = set(self.links.get(s, {})) | self.by_node.get(self.members[s].node, set())
            for o in nxt - comp:
                comp.add(o)
                todo.append(o)
        return comp

    # -- clusters ---------------------------------------------------------------------------------------------
    def _participating(self) -> set[str]:
        return {label for label, n in self.multi.items() if n > 0}

    def _recluster(self, affected: set[str], old: set[str], new: set[str]) -> Changes:
        old |= {self.cluster_of[s] for s in affected if s in self.cluster_of}
        seeds = set(affected)
        while True:  # every old cluster a new component reaches is rebuilt whole (it may have split)
            seeds |= {s for cid in old if cid in self.clusters for s in self.clusters[cid].sids}
            comps: list[set[str]] = []
            done: set[str] = set()
            for s in sorted(x for x in seeds if x in self.members):
                if s not in done:
                    comp = self._component(s)
                    done |= comp
                    comps.append(comp)
            more = {self.cluster_of[s] for s in done if s in self.cluster_of} - old
            if not more:
                break
            old |= more
        before = self._participating()
        previous = {s: self.cluster_of[s] for s in done if s in self.cluster_of and s not in new}
        for cid in old:
            c = self.clusters.pop(cid, None)
            if c is None:
                continue
            for s in c.sids:
                if self.cluster_of.get(s) == cid:
                    del self.cluster_of[s]
            if c.nodes >= 2:
                self.multi.subtract(c.labels)
        made: dict[str, _Cluster] = {}
        for comp in comps:
            cid = cluster_id(comp)
            c = _Cluster(frozenset(comp), frozenset(self.members[s].label for s in comp),
                         len({self.members[s].node for s in comp}))  # fmt: skip
            made[cid] = self.clusters[cid] = c
            for s in comp:
                self.cluster_of[s] = cid
            if c.nodes >= 2:
                self.multi.update(c.labels)
        after = self._participating()
        out = Changes(events=self._events(made, previous, old))
        joined, left = after - before, before - after
        wanted = set(made)
        if joined or left:
            wanted |= {cid for cid, c in self.clusters.items() if c.labels & (joined | left)}
        for cid in sorted(old - set(made)):
            if cid in self.written:
                self.written.discard(cid)
                out.deletes.append(cid)
        for cid in sorted(wanted):
            c = self.clusters.get(cid)
            if c is None:
                continue
            if c.labels & after:
                out.upserts.append(self._canonical(cid, c))
                self.written.add(cid)
            elif cid in self.written:
                self.written.discard(cid)
                out.deletes.append(cid)
        return out

    def _events(self, made: dict[str, _Cluster], previous: dict[str, str], old: set[str]) -> list[ClusterEvent]:
        events = []
        for cid, c in sorted(made.items()):
            came = sorted({previous[s] for s in c.sids if s in previous})
            if len(came) >= 2:
                events.append(ClusterEvent("merge", (cid,), tuple(came), len(c.sids)))
        went: dict[str, set[str]] = defaultdict(set)
        for s, was in previous.items():
            cur = self.cluster_of.get(s)
            if cur is not None:
                went[was].add(cur)
        for was, into in sorted(went.items()):
            if len(into) >= 2:
                n = sum(len(made[c].sids) for c in into if c in made)
                events.append(ClusterEvent("split", tuple(sorted(into)), (was,), n))
        return events

    def _canonical(self, cid: str, c: _Cluster) -> CanonicalWrite:
        links = {
            (a, b): self.links[a][b] for a in sorted(c.sids) for b in sorted(self.links.get(a, {})) if a < b and b in c.sids
        }
        return consolidate(cid, (self.members[s] for s in c.sids), self.spec, links)

    def clusters_by_label(self) -> dict[str, int]:
        """Clusters holding each label (how many people a type's records describe)."""
        out: Counter[str] = Counter()
        for c in self.clusters.values():
            out.update(c.labels)
        return dict(out)
