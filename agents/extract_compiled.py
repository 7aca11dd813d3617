"""The compiled form of one contract version for extraction: which sources it covers, and per source the label, key,
attributes, foreign-key and nesting edges, text fields and further entity types (:class:`SourcePlan`), compiled once
per version and cached (:func:`compiled`). Pure (no I/O); ``agents.extractors`` applies it to envelopes."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

from esc.agents.type_nodes import TypePlan, compile_types
from esc.contract.fk_match import folded_entities
from esc.contract.model import Contract, EntityType, Relationship, SourceSpec

DOCUMENT_FORMATS = frozenset({"text", "markdown", "pdf"})
PENDING = "pending"
"""``key_evidence`` marker the contract agent sets on a source whose key and links are not settled yet."""
MAX_CACHED = 8


# ------------------------------------------------------------------------------------------------ coverage


def is_pending(src: SourceSpec | None) -> bool:
    return src is not None and not src.identity_key and bool(src.key_evidence.get(PENDING))


def covers(contract: Contract, source: str) -> bool:
    """True when ``contract`` knows how to write ``source``: it has an entity type whose key is decided (proven,
    or settled as keyless), and the nesting parent (if any) is covered too."""
    seen: set[str] = set()
    while source not in seen:
        seen.add(source)
        src = contract.sources.get(source)
        entity = contract.entity_for_source(source)
        if src is None or entity is None or is_pending(src):
            return False
        if src.parent is None:
            return True
        source = src.parent
    return True


# ------------------------------------------------------------------------------------------ compiled form

Typed = tuple[str, str]  # (field name, physical type)


@dataclass(frozen=True)
class FkEdge:
    rel: str
    to_label: str
    pairs: tuple[tuple[str, str, str], ...]  # (from field, to field, to type), in the target key's order
    fold: bool = False  # the target's keys join case-folded (esc.contract.fk_match)


@dataclass(frozen=True)
class NestEdge:
    rel: str
    parent_label: str
    parent_key: tuple[Typed, ...]  # empty: the parent is keyed by its record id
    via_fields: tuple[tuple[str, str], ...]  # (child field, parent key field) for children without a link


@dataclass(frozen=True)
class SourcePlan:
    label: str
    key: tuple[Typed, ...]  # empty: keyed by record id
    attributes: tuple[Typed, ...]
    fks: tuple[FkEdge, ...]
    nesting: tuple[NestEdge, ...]
    texts: tuple[str, ...]  # text fields to chunk
    long_strings: tuple[str, ...]  # free_text strings chunked only when long
    document: bool = False  # a text/markdown/PDF source: its text is always chunked
    fold_key: bool = False  # a case-folded foreign key references this entity: its key values are folded
    types: tuple[TypePlan, ...] = ()  # further entity types over the source (agents/type_nodes.py)

    @cached_property
    def key_fields(self) -> tuple[tuple[str, str, str], ...]:
        """The key as (value field, key name, type) triples, as ``_key_values`` reads them."""
        return tuple((n, n, t) for n, t in self.key)


def _names(contract: Contract, fids: Sequence[str]) -> list[tuple[str, str, str]] | None:
    """(source, field name, type) of field ids, or None when one is unknown."""
    out: list[tuple[str, str, str]] = []
    for fid in fids:
        hit = contract.field_by_id(fid)
        if hit is None:
            return None
        out.append((hit[0], hit[1].name, hit[1].type))
    return out


def key_of(contract: Contract, entity: EntityType) -> tuple[Typed, ...]:
    named = _names(contract, entity.key) or []
    return tuple((n, t) for _, n, t in named)


def fk_edge(
    contract: Contract, rel: Relationship, labels: dict[str, EntityType], folded: frozenset[str] = frozenset()
) -> FkEdge | None:
    target = labels.get(rel.to_entity)
    src, dst = _names(contract, rel.from_fields), _names(contract, rel.to_fields)
    if target is None or not src or not dst or len(src) != len(dst):
        return None
    target_key = key_of(contract, target)
    by_to = {d[1]: (s[1], d[2]) for s, d in zip(src, dst, strict=True)}
    if not target_key or {n for n, _ in target_key} != set(by_to):
        return None  # references something other than the target's identity key: cannot MERGE one node
    pairs = tuple((by_to[n][0], n, t) for n, t in target_key)
    return FkEdge(rel.name, target.name, pairs, target.name in folded)


def _nest_edge(contract: Contract, rel: Relationship, labels: dict[str, EntityType]) -> NestEdge | None:
    parent = labels.get(rel.from_entity)
    if parent is None:
        return None
    parent_key = key_of(contract, parent)
    via: tuple[tuple[str, str], ...] = ()
    pf, cf = _names(contract, rel.from_fields), _names(contract, rel.to_fields)
    if pf and cf and len(pf) == len(cf) and parent_key and {p[1] for p in pf} == {n for n, _ in parent_key}:
        via = tuple((c[1], p[1]) for p, c in zip(pf, cf, strict=True))
    return NestEdge(rel.name, parent.name, parent_key, via)


def compile_source(contract: Contract, source: str) -> SourcePlan | None:
    entity = contract.entity_for_source(source)
    src = contract.sources.get(source)
    if entity is None or src is None:
        return None
    labels = {e.name: e for e in contract.entities}
    folded = folded_entities(contract)
    fks: list[FkEdge] = []
    nesting: list[NestEdge] = []
    for rel in contract.relationships:
        if rel.kind == "foreign_key" and rel.from_entity == entity.name:
            fk = fk_edge(contract, rel, labels, folded)
            if fk is not None:
                fks.append(fk)
        elif rel.kind == "nesting" and rel.to_entity == entity.name:
            nest = _nest_edge(contract, rel, labels)
            if nest is not None:
                nesting.append(nest)
    texts: list[str] = []
    long_strings: list[str] = []
    for a in entity.attributes:
        if a.type == "text" or (src.format in DOCUMENT_FORMATS and a.name == "text"):
            texts.append(a.name)
        elif a.type == "string" and a.semantic == "free_text":
            long_strings.append(a.name)
    return SourcePlan(
        label=entity.name,
        key=key_of(contract, entity),
        attributes=tuple((a.name, a.type) for a in entity.attributes),
        fks=tuple(fks),
        nesting=tuple(nesting),
        texts=tuple(texts),
        long_strings=tuple(long_strings),
        document=src.format in DOCUMENT_FORMATS,
        fold_key=entity.name in folded,
        types=compile_types(contract, source),
    )


class Compiled:
    """Per-source plans of one contract version (compiled once, reused for every batch)."""

    def __init__(self, contract: Contract) -> None:
        self.contract = contract
        self.version = contract.version
        self._plans: dict[str, SourcePlan | None] = {}
        self._covers: dict[str, bool] = {}

    def covers(self, source: str) -> bool:
        hit = self._covers.get(source)
        if hit is None:
            hit = self._covers[source] = covers(self.contract, source)
        return hit

    def plan_for(self, source: str) -> SourcePlan | None:
        if source not in self._plans:
            self._plans[source] = compile_source(self.contract, source)
        return self._plans[source]


_cache: dict[tuple[str, int, str, frozenset[str]], Compiled] = {}


def compiled(contract: Contract) -> Compiled:
    pending = frozenset(s for s, src in contract.sources.items() if is_pending(src))
    sig = (contract.contract_id, contract.version, contract.content_hash, pending)
    hit = _cache.get(sig)
    if hit is None or not contract.content_hash:
        hit = Compiled(contract)
        if contract.content_hash:
            if len(_cache) >= MAX_CACHED:
                _cache.pop(next(iter(_cache)))
            _cache[sig] = hit
    return hit
