"""Example queries of a contract version: per entity type, a count, a lookup by its identity key, and one hop along
each relationship it starts. Pure and deterministic; a backend-neutral description that agents/examples_runner.py
turns into query plans (agents/query/plan.py) and runs against a graph store.

They are the executable check that a version means what it says: every entity type has nodes, a node is found by
its key, every foreign key and nesting edge the graph can hold is there. A hop is generated only for relationships
the extractor writes as edges (agents/extractors.py): a nesting edge, or a foreign key whose target fields are the
target type's identity key. A lookup needs an identity key; its key values are read from the store when it runs
(the smallest key), so a composite key is looked up by a tuple that exists.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from esc.contract.model import Contract, EntityType, Relationship
from esc.contract.reports import ExampleKind


@dataclass(frozen=True)
class ExampleQuery:
    name: str
    kind: ExampleKind
    entity: str  # the entity type (label) it starts from
    key: tuple[str, ...] = field(default=())  # lookup: the identity key's attribute names
    relationship: str | None = None  # hop: the relationship type
    target: str | None = None  # hop: the entity type at the other end


def key_attributes(entity: EntityType) -> tuple[str, ...] | None:
    """Attribute names of the entity's identity key (None when it has none, or a key field is not an attribute)."""
    names = {a.field_id: a.name for a in entity.attributes}
    out = tuple(names.get(fid, "") for fid in entity.key)
    return out if out and all(out) else None


def written_as_edge(contract: Contract, rel: Relationship) -> bool:
    """Whether the extractor writes this relationship as edges (see the module doc)."""
    if rel.kind == "nesting":
        return contract.entity(rel.from_entity) is not None and contract.entity(rel.to_entity) is not None
    target = contract.entity(rel.to_entity)
    return target is not None and bool(target.key) and set(rel.to_fields) == set(target.key)


def example_queries(contract: Contract) -> list[ExampleQuery]:
    """The version's examples, entity by entity in contract order."""
    out: list[ExampleQuery] = []
    for entity in contract.entities:
        out.append(ExampleQuery(f"{entity.name}: count", "count", entity.name))
        key = key_attributes(entity)
        if key is not None:
            out.append(ExampleQuery(f"{entity.name}: lookup by {', '.join(key)}", "lookup", entity.name, key))
        for rel in contract.relationships:
            if rel.from_entity == entity.name and written_as_edge(contract, rel):
                out.append(ExampleQuery(f"{entity.name} -{rel.name}-> {rel.to_entity}", "hop", entity.name,
                                        relationship=rel.name, target=rel.to_entity))  # fmt: skip
    return out
