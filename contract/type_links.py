"""Links for entity types added over a source that already has one. Pure.

A source's first entity type is its *primary* type (one node per record, ``Contract.entity_for_source``). A later
version may add another type over the same source -- the LLM pass proposes one (a category in a field: ``Team``
keyed on ``people.team``), or a person does. Its nodes are written from the same records (``agents.type_nodes``);
this module adds the relationship that says how a record's primary node reaches them: a foreign key from the
primary type to the new one over the new type's key fields (``Person -[TEAM]-> TeamGroup``), named like any
foreign key (``contract.entities.fk_relationship_name``). It is written as edges by the extractor and checked by
the version's example queries like every other foreign key. Nothing is added when the new type has no key (its
nodes are one per record, linked by provenance only), when a key field is not a field of the source, or when a
relationship between the two types already exists.
"""

from __future__ import annotations

from esc.contract.entities import fk_relationship_name, merge_relationships
from esc.contract.model import Contract, EntityType, Relationship


def secondary_types(contract: Contract, source: str) -> list[EntityType]:
    """Entity types over ``source`` other than its primary one, in contract order."""
    primary = contract.entity_for_source(source)
    return [e for e in contract.entities if e.source == source and e is not primary]


def link_added_types(old: Contract, new: Contract) -> Contract:
    """``new`` with a foreign key from the primary type to every type it adds over an existing source (above)."""
    known = {e.name for e in old.entities}
    rels: list[Relationship] = []
    for entity in new.entities:
        primary = new.entity_for_source(entity.source)
        if entity.name in known or primary is None or primary.name == entity.name or not entity.key:
            continue
        fields = {f.id: f.name for f in new.sources[entity.source].fields} if entity.source in new.sources else {}
        if not all(fid in fields for fid in entity.key):
            continue
        if any({r.from_entity, r.to_entity} == {primary.name, entity.name} for r in new.relationships):
            continue
        rels.append(Relationship(
            name=fk_relationship_name([fields[fid] for fid in entity.key], entity.name), kind="foreign_key",
            from_entity=primary.name, to_entity=entity.name, from_fields=list(entity.key), to_fields=list(entity.key),
        ))  # fmt: skip
    if not rels:
        return new
    out = new.model_copy(deep=True)
    out.relationships = merge_relationships(new.relationships, rels)
    return out
