"""What the resolver keeps per record, and what it asks a graph store to write."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

CANONICAL = "_Canonical"
"""Label of canonical entities (a leading underscore: no contract label can take it, they are PascalCase)."""
SAME_AS = "SAME_AS"
CID = "_cid"
MEMBER_COUNT = "_members"
CONFLICTS = "_conflicts"
SOURCES = "_sources"


def member_marker(label: str) -> str:
    """Property of a canonical entity counting its members of ``label`` (how a query asks "has a T member")."""
    return f"_n_{label}"


def cluster_id(sids: set[str] | frozenset[str] | list[str]) -> str:
    """A cluster's id: a digest of its least source-record id (stable while that record stays in it)."""
    return hashlib.sha1(min(sids).encode("utf-8")).hexdigest()[:20]


@dataclass(frozen=True)
class Member:
    """One source record of an identifying type, as the resolver sees it."""

    sid: str
    label: str
    key: tuple[tuple[str, Any], ...]  # identity key of its entity node
    values: tuple[tuple[str, Any], ...]  # the entity's attributes from this record
    source: str
    record_id: str
    location: str = ""

    @property
    def node(self) -> tuple[str, tuple[tuple[str, Any], ...]]:
        return (self.label, self.key)

    def value(self, name: str) -> Any:
        return next((v for k, v in self.values if k == name), None)


@dataclass
class MemberRef:
    label: str
    key: dict[str, Any]
    score: float
    evidence: str  # JSON: which fields matched how, and the rule


@dataclass
class CanonicalWrite:
    """A cluster's canonical entity: current values, its members (SAME_AS with score and evidence) and the source
    records behind them (DERIVED_FROM, so answers about it cite every source)."""

    cid: str
    props: dict[str, Any]
    members: list[MemberRef] = field(default_factory=list)
    sids: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class ClusterEvent:
    kind: str  # "merge" | "split"
    into: tuple[str, ...]  # cluster ids after
    from_: tuple[str, ...]  # cluster ids before
    records: int  # source records involved
