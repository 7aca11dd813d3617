"""Extraction planning: apply one contract version to record envelopes and say what to write. Pure (no I/O).

Per envelope of source ``S`` (see :func:`plan`):

* ``S`` not covered by the contract yet (:func:`covers`) -> ``deferred``: nothing is written; the runtime keeps or
  replays those records once a later version covers ``S`` (``agents.backfill``), so nothing is lost.
* Entity: the label of ``S``'s entity type, keyed by its identity key with values coerced by field type
  (``agents.coerce``), so CSV ``"1"`` and JSON ``1`` MERGE to one node. Without a proven key the record id is the
  key (``_record_id``). A null or unreadable key value is a dead letter with the reason.
* Properties: the entity's attributes only, coerced (leniently: a value that does not fit keeps its form).
* Edges: one per foreign-key relationship from ``S`` whose values are all non-null, to the referenced entity's key;
  one nesting edge ``(parent)-[:HAS_...]->(child)`` per child record, the parent found from the envelope's parent
  link (or, for pushed children, from the nesting fields).
* Texts: long text fields (physical ``text``, or ``free_text`` strings of 200+ characters, and the text of
  text/markdown/PDF documents) chunked to the embedder's window (``agents.chunking.chunk_for_embedding``: at most
  224 word pieces plus a short context, 32 overlapping), one object per chunk with a deterministic id, pointing
  back at the entity and the source record.
* ``deleted`` envelopes -> ``retractions`` (one record) or ``file_retractions`` (no record id: the whole file).

Everything written carries ``contract.version``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from esc.agents.chunking import chunk_for_embedding
from esc.agents.coerce import CoercionError, coerce, coerce_lenient
from esc.agents.stores.weaviate_ids import object_id
from esc.agents.types import EdgeWrite, EntityWrite, SourceRecordRef, TextObject, build
from esc.contract.entities import LONG_TEXT_CHARS
from esc.contract.fk_match import fold_key, folded_entities
from esc.contract.model import Contract, EntityType, Relationship, SourceSpec
from esc.contract.records import Location
from esc.contract.semantic import is_text
from esc.streams.events import DeadLetter, RecordEnvelope

RECORD_KEY = "_record_id"
DOCUMENT_FORMATS = frozenset({"text", "markdown", "pdf"})
PENDING = "pending"
"""``key_evidence`` marker the contract agent sets on a source whose key and links are not settled yet."""
MAX_CACHED = 8


@dataclass(frozen=True)
class FileRef:
    """A deleted file: every source record read from it is retracted."""

    source: str
    file: str


@dataclass
class Plan:
    entities: list[EntityWrite] = field(default_factory=list)
    edges: list[EdgeWrite] = field(default_factory=list)
    texts: list[TextObject] = field(default_factory=list)
    dead: list[DeadLetter] = field(default_factory=list)
    deferred: list[RecordEnvelope] = field(default_factory=list)
    retractions: list[SourceRecordRef] = field(default_factory=list)
    file_retractions: list[FileRef] = field(default_factory=list)
    keys: set[tuple[str, tuple[str, ...]]] = field(default_factory=set)  # (label, key props) written to
    sources: set[str] = field(default_factory=set)  # sources with at least one entity planned


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


def _names(contract: Contract, fids: Sequence[str]) -> list[tuple[str, str, str]] | None:
    """(source, field name, type) of field ids, or None when one is unknown."""
    out: list[tuple[str, str, str]] = []
    for fid in fids:
        hit = contract.field_by_id(fid)
        if hit is None:
            return None
        out.append((hit[0], hit[1].name, hit[1].type))
    return out


def _key_of(contract: Contract, entity: EntityType) -> tuple[Typed, ...]:
    named = _names(contract, entity.key) or []
    return tuple((n, t) for _, n, t in named)


def _fk_edge(
    contract: Contract, rel: Relationship, labels: dict[str, EntityType], folded: frozenset[str] = frozenset()
) -> FkEdge | None:
    target = labels.get(rel.to_entity)
    src, dst = _names(contract, rel.from_fields), _names(contract, rel.to_fields)
    if target is None or not src or not dst or len(src) != len(dst):
        return None
    target_key = _key_of(contract, target)
    by_to = {d[1]: (s[1], d[2]) for s, d in zip(src, dst, strict=True)}
    if not target_key or {n for n, _ in target_key} != set(by_to):
        return None  # references something other than the target's identity key: cannot MERGE one node
    pairs = tuple((by_to[n][0], n, t) for n, t in target_key)
    return FkEdge(rel.name, target.name, pairs, target.name in folded)


def _nest_edge(contract: Contract, rel: Relationship, labels: dict[str, EntityType]) -> NestEdge | None:
    parent = labels.get(rel.from_entity)
    if parent is None:
        return None
    parent_key = _key_of(contract, parent)
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
            fk = _fk_edge(contract, rel, labels, folded)
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
        key=_key_of(contract, entity),
        attributes=tuple((a.name, a.type) for a in entity.attributes),
        fks=tuple(fks),
        nesting=tuple(nesting),
        texts=tuple(texts),
        long_strings=tuple(long_strings),
        document=src.format in DOCUMENT_FORMATS,
        fold_key=entity.name in folded,
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


# ------------------------------------------------------------------------------------------------ planning


def provenance(env: RecordEnvelope) -> SourceRecordRef:
    location = env.record_id or ""
    if env.location.get("file"):
        try:
            location = Location(**env.location).render()
        except (TypeError, ValueError):
            pass
    return build(
        SourceRecordRef,
        source=env.source,
        record_id=env.resolved_id(),
        location=location,
        file=env.location.get("file"),
        file_hash=env.file_hash,
    )


def _dead(env: RecordEnvelope, reason: str, prov: SourceRecordRef) -> DeadLetter:
    return DeadLetter.of(
        reason,
        "extractor",
        env.model_dump_json(),
        source=env.source,
        location=prov.location or prov.record_id,
    )


def _key_values(values: dict[str, Any], key: Sequence[tuple[str, str, str]]) -> dict[str, Any] | str:
    """{target name: coerced value} for (value field, target name, type) triples; a reason string on failure."""
    out: dict[str, Any] = {}
    for vf, name, type_ in key:
        try:
            v = coerce(values.get(vf), type_)
        except CoercionError as exc:
            return f"identity key field {vf}: {exc}"
        if v is None:
            return f"identity key field {vf} is null"
        out[name] = v
    return out


def _entity_key(sp: SourcePlan, env: RecordEnvelope, prov: SourceRecordRef) -> dict[str, Any] | str:
    if not sp.key:
        return {RECORD_KEY: prov.record_id}
    key = _key_values(env.payload, [(n, n, t) for n, t in sp.key])
    return fold_key(key) if sp.fold_key and isinstance(key, dict) else key


def _fk_edges(sp: SourcePlan, env: RecordEnvelope, key: dict[str, Any], version: int) -> list[EdgeWrite]:
    out = []
    for fk in sp.fks:
        to_key = _key_values(env.payload, fk.pairs)
        if isinstance(to_key, str):
            continue  # a null (or unreadable) foreign key value: no edge
        if fk.fold:
            to_key = fold_key(to_key)
        out.append(
            build(
                EdgeWrite,
                type=fk.rel,
                from_label=sp.label,
                from_key=key,
                to_label=fk.to_label,
                to_key=to_key,
                contract_version=version,
            )
        )
    return out


def _nest_edges(sp: SourcePlan, env: RecordEnvelope, key: dict[str, Any], version: int) -> list[EdgeWrite]:
    out = []
    for nest in sp.nesting:
        parent_key: dict[str, Any] | str
        link = env.parent or {}
        if not nest.parent_key:
            rid = link.get("record_id")
            if not rid:
                continue
            parent_key = {RECORD_KEY: str(rid)}
        elif isinstance(link.get("values"), dict):
            parent_key = _key_values(link["values"], [(n, n, t) for n, t in nest.parent_key])
        elif nest.via_fields:
            types = dict(nest.parent_key)
            parent_key = _key_values(env.payload, [(c, p, types[p]) for c, p in nest.via_fields])
        else:
            continue
        if isinstance(parent_key, str):
            continue
        out.append(
            build(
                EdgeWrite,
                type=nest.rel,
                from_label=nest.parent_label,
                from_key=parent_key,
                to_label=sp.label,
                to_key=key,
                contract_version=version,
            )
        )
    return out


def _texts(
    sp: SourcePlan, env: RecordEnvelope, key: dict[str, Any], prov: SourceRecordRef, version: int
) -> list[TextObject]:
    out: list[TextObject] = []
    if not sp.texts and not sp.long_strings:
        return out
    entity_key: str | None = None
    for name in (*sp.texts, *sp.long_strings):
        value = env.payload.get(name)
        if not isinstance(value, str) or not value.strip():
            continue
        # A field is typed text once any value was long, but only values that are text themselves (long or
        # multi-sentence, the rule that typed the field) are worth a vector; short names stay graph-only.
        if not sp.document and not (is_text(value) or (name in sp.long_strings and len(value) >= LONG_TEXT_CHARS)):
            continue
        if entity_key is None:
            entity_key = json.dumps(key, sort_keys=True, default=str)
        for chunk in chunk_for_embedding(value, None if sp.document else name):
            out.append(
                build(
                    TextObject,
                    object_id=object_id(env.source, prov.record_id, name, str(chunk.index)),
                    text=chunk.text,
                    context=chunk.context,
                    field=name,
                    start=chunk.start,
                    provenance=prov,
                    chunk_index=chunk.index,
                    entity_label=sp.label,
                    entity_key=entity_key,
                    contract_version=version,
                )
            )
    return out


def plan(envelopes: Iterable[RecordEnvelope], contract: Contract) -> Plan:
    """What to write for ``envelopes`` under ``contract`` (see the module docstring)."""
    comp = compiled(contract)
    version = contract.version
    out = Plan()
    for env in envelopes:
        sp = comp.plan_for(env.source) if not env.deleted and comp.covers(env.source) else None
        if sp is None and not env.deleted:
            out.deferred.append(env)  # before anything else: a pending source's records are only kept
            continue
        prov = provenance(env)
        if env.deleted:
            if env.record_id:
                out.retractions.append(prov)
            elif prov.file:
                out.file_retractions.append(FileRef(env.source, prov.file))
            else:
                out.dead.append(_dead(env, "retraction without record id or file", prov))
            continue
        assert sp is not None
        key = _entity_key(sp, env, prov)
        if isinstance(key, str):
            out.dead.append(_dead(env, key, prov))
            continue
        props = {}
        for name, type_ in sp.attributes:
            v = env.payload.get(name)
            if v is not None:
                props[name] = coerce_lenient(v, type_)
        out.entities.append(
            build(
                EntityWrite,
                label=sp.label, key=key, properties=props, provenance=prov, contract_version=version
            )
        )
        out.keys.add((sp.label, tuple(key)))
        out.sources.add(env.source)
        out.edges.extend(_fk_edges(sp, env, key, version))
        out.edges.extend(_nest_edges(sp, env, key, version))
        out.texts.extend(_texts(sp, env, key, prov, version))
    return out


def render_text(payload: dict[str, Any]) -> str:
    """A readable one-line rendering of a record (for summaries and logs)."""
    parts = []
    for k, v in payload.items():
        if v is None:
            continue
        value = v if isinstance(v, str) else json.dumps(v, default=str, ensure_ascii=False)
        parts.append(f"{k}: {value}")
    return "; ".join(parts)


def attach_vectors(texts: Sequence[TextObject], vectors: Sequence[Sequence[float]] | np.ndarray) -> None:
    for obj, vec in zip(texts, vectors, strict=True):
        obj.vector = [float(x) for x in vec]
