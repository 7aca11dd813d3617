"""Nodes of the further entity types over one source (``contract.type_links``): what ``agents.extractors.plan``
writes for them beside the source's primary node. Pure (no I/O).

Per record of a source, for each entity type over it other than the primary one (in contract order):

* a node of that type keyed by its identity key (values coerced like the primary's); records that share the key
  values share the node, which then has a ``DERIVED_FROM`` to each of them (so it is retracted with the last one);
  a type without a key gets one node per record, keyed by the record id like a keyless primary;
* its attributes (coerced leniently), and
* its foreign-key edges to other types (``FkEdge`` of the extractor, compiled the same way).

A record whose value for the type's key is null or unreadable writes no node of that type (the primary node and
its edges stand; nothing is dead-lettered for a view of the record). Records already written when a version adds
such a type are written again by the backfill (``agents.backfill``: a new entity type over an ingested source
replays it), so the type's nodes exist for every record, on either runtime.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from esc.agents.coerce import coerce_lenient
from esc.agents.types import EdgeWrite, EntityWrite, SourceRecordRef, build
from esc.contract.fk_match import fold_key, folded_entities
from esc.contract.model import Contract
from esc.contract.type_links import secondary_types

if TYPE_CHECKING:
    from esc.agents.extract_compiled import FkEdge
    from esc.agents.extractors import Plan
    from esc.streams.events import RecordEnvelope

Typed = tuple[str, str]


@dataclass(frozen=True)
class TypePlan:
    label: str
    key: tuple[Typed, ...]  # empty: keyed by record id
    attributes: tuple[Typed, ...]
    fks: tuple[FkEdge, ...]
    fold_key: bool = False


def compile_types(contract: Contract, source: str) -> tuple[TypePlan, ...]:
    """The plans of ``source``'s further entity types (empty for almost every source)."""
    extra = secondary_types(contract, source)
    if not extra:
        return ()
    from esc.agents.extract_compiled import fk_edge, key_of  # the compiled forms (that module imports us)

    labels = {e.name: e for e in contract.entities}
    folded = folded_entities(contract)
    out = []
    for entity in extra:
        fks = [fk_edge(contract, r, labels, folded) for r in contract.relationships
               if r.kind == "foreign_key" and r.from_entity == entity.name]  # fmt: skip
        out.append(TypePlan(entity.name, key_of(contract, entity), tuple((a.name, a.type) for a in entity.attributes),
                            tuple(fk for fk in fks if fk is not None), entity.name in folded))  # fmt: skip
    return tuple(out)


def plan_types(
    out: Plan, types: tuple[TypePlan, ...], env: RecordEnvelope, prov: SourceRecordRef, version: int
) -> None:
    """Add the nodes and edges of ``types`` for one record to ``out``."""
    from esc.agents.extractors import RECORD_KEY, _key_values

    for tp in types:
        key: dict[str, Any] | str
        if tp.key:
            key = _key_values(env.payload, [(n, n, t) for n, t in tp.key])
            if isinstance(key, str):
                continue
            key = fold_key(key) if tp.fold_key else key
        else:
            key = {RECORD_KEY: prov.record_id}
        props = {
            n: coerce_lenient(env.payload[n], t) for n, t in tp.attributes if env.payload.get(n) is not None
        }
        out.entities.append(build(EntityWrite, label=tp.label, key=key, properties=props, provenance=prov,
                                  contract_version=version))  # fmt: skip
        out.keys.add((tp.label, tuple(key)))
        out.edges.extend(_edges(tp, env, key, version))


def _edges(tp: TypePlan, env: RecordEnvelope, key: dict[str, Any], version: int) -> list[EdgeWrite]:
    from esc.agents.extract_compiled import SourcePlan
    from esc.agents.extractors import _fk_edges

    as_source = SourcePlan(
        label=tp.label, key=tp.key, attributes=(), fks=tp.fks, nesting=(), texts=(), long_strings=()
    )
    return _fk_edges(as_source, env, key, version)
