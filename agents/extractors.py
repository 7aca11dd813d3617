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
from esc.agents.extract_compiled import PENDING as PENDING  # re-exported: the marker and coverage live there
from esc.agents.extract_compiled import SourcePlan, compiled
from esc.agents.extract_compiled import covers as covers
from esc.agents.stores.weaviate_ids import object_id
from esc.agents.type_nodes import plan_types
from esc.agents.types import EdgeWrite, EntityWrite, SourceRecordRef, TextObject, build
from esc.contract.entities import LONG_TEXT_CHARS
from esc.contract.fk_match import fold_key
from esc.contract.model import Contract
from esc.contract.records import render_location
from esc.contract.semantic import is_text
from esc.streams.events import DeadLetter, RecordEnvelope

RECORD_KEY = "_record_id"


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
    ahead: Any = None  # the graph store's own planning of the writes (GraphStore.plan_upsert), when done ahead


# ------------------------------------------------------------------------------------------------ planning


def provenance(env: RecordEnvelope) -> SourceRecordRef:
    location = env.record_id or ""
    if env.location.get("file"):
        try:
            location = render_location(env.location)
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
    key = _key_values(env.payload, sp.key_fields)
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
        if not sp.document and not (
            is_text(value) or (name in sp.long_strings and len(value) >= LONG_TEXT_CHARS)
        ):
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
        payload = env.payload
        props = {}
        for n, t in sp.attributes:
            if (v := payload.get(n)) is not None:
                props[n] = coerce_lenient(v, t)
        out.entities.append(build(EntityWrite, label=sp.label, key=key, properties=props, provenance=prov,
                                  contract_version=version))  # fmt: skip
        out.keys.add((sp.label, tuple(key)))
        out.sources.add(env.source)
        out.edges.extend(_fk_edges(sp, env, key, version))
        out.edges.extend(_nest_edges(sp, env, key, version))
        out.texts.extend(_texts(sp, env, key, prov, version))
        if sp.types:
            plan_types(out, sp.types, env, prov, version)
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
    if isinstance(vectors, np.ndarray) and vectors.dtype.kind == "f":  # Python floats of the same values, in C
        rows: list[list[float]] = vectors.tolist()
    else:
        rows = [[float(x) for x in vec] for vec in vectors]
    for obj, vec in zip(texts, rows, strict=True):
        obj.vector = vec
