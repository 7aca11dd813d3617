"""Query-scoped schema extension (LLM mode): a type the contract lacks, proposed for one question only.

The LLM planner may reply ``{"extend": <schema proposal>}`` when a question needs a type the contract does not
name. The proposal goes through ``contract.proposals`` (closed world: every field reference must be a catalog id,
FieldValidity as received must be 1.0; anything less is rejected with the report). A proposed entity type is a
*view* over the nodes already in the graph: it must come from a source that already has an entity type, and name
only attributes that type already writes (the graph holds nothing else). Its label is an alias of that type's
label; it inherits that type's relationships, so hops validate. Plans over the scoped contract are rewritten to
the real labels before they run.

Nothing is published or stored: the scoped contract is a copy with the same version and content hash, it lives
for one question, and the agent's contract is untouched (its hash is the same afterwards); the LLM planner logs
each extension it used.

Without an LLM, the deterministic extension is the one over prose (agents/query/prose.py): an attribute the data
lacks for an entity, derived for one question from the sentences that mention it (agents/prose_facts.py), answered
with an ``extension`` summary of the same ``{"scope": "query", ...}`` shape.
A computed expression over two fields of one entity (a difference, ratio, product, sum or duration) is the other
(agents/query/computed.py), deterministic or proposed by the LLM as field ids + operator.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from esc.agents.query.plan import QueryPlan
from esc.contract.model import Contract, Relationship
from esc.contract.proposals import ProposalFormatError, apply_proposal, parse_proposal


class ScopedExtension(BaseModel):
    contract: Contract
    aliases: dict[str, str] = Field(default_factory=dict)  # proposed label -> label of the nodes in the graph
    report: dict[str, Any] = Field(default_factory=dict)

    def rewrite(self, plan: QueryPlan) -> QueryPlan:
        """The plan with alias labels replaced by the labels the graph has."""
        out = plan.model_copy(deep=True)
        for node in out.vars():
            node.label = self.aliases.get(node.label, node.label)
        return out

    def summary(self) -> dict[str, Any]:
        return {"scope": "query", "aliases": dict(self.aliases), **self.report}


def scoped_extension(contract: Contract, data: Any) -> ScopedExtension | dict[str, Any]:
    """A query-scoped copy of ``contract`` with the proposed types, or a failure summary for the planner."""
    try:
        proposal, problems = parse_proposal(data)
    except (ProposalFormatError, ValueError) as exc:
        return {"error": "the proposal is not a schema proposal", "details": str(exc)[:300]}
    extended, report = apply_proposal(contract, proposal)
    summary = report.summary()
    if report.field_validity_received < 1.0:
        return {"error": "proposal rejected: FieldValidity must be 1.0 (use field ids from the catalog)",
                "field_validity": summary["field_validity_received"], "dropped": summary["dropped"][:10],
                "repaired": summary["repaired"][:10]}  # fmt: skip
    if not report.added_entities:
        return {"error": "the proposal adds no entity type", "rejected": summary["rejected"][:5],
                "ignored": summary["ignored"][:5], "parse_problems": problems[:5]}  # fmt: skip
    old = {e.name for e in contract.entities}
    aliases: dict[str, str] = {}
    new_entities = []
    for entity in extended.entities:
        if entity.name in old:
            continue
        base = contract.entity_for_source(entity.source)
        if base is None:
            return {"error": f"type {entity.name}: source {entity.source} has no entity type, so the graph has no "
                             "nodes for it"}  # fmt: skip
        have = {a.name for a in base.attributes}
        missing = sorted(a.name for a in entity.attributes if a.name not in have)
        if missing:
            return {"error": f"type {entity.name}: attributes {missing} are not in the graph ({base.name} holds "
                             f"{sorted(have)})"}  # fmt: skip
        aliases[entity.name] = base.name
        new_entities.append(entity.model_copy(update={"key": list(base.key)}))
    inherited = [
        Relationship(**{**r.model_dump(), "from_entity": alias if r.from_entity == base_label else r.from_entity,
                        "to_entity": alias if r.to_entity == base_label else r.to_entity})
        for alias, base_label in aliases.items()
        for r in contract.relationships
        if base_label in (r.from_entity, r.to_entity)
    ]  # fmt: skip
    scoped = contract.model_copy(
        update={
            "entities": [*contract.entities, *new_entities],
            "relationships": [*contract.relationships, *inherited],
        }
    )
    dropped_rels = len(extended.relationships) - len(contract.relationships)
    report_out = {
        "added_entities": list(aliases),
        "field_validity": summary["field_validity_received"],
        "references": summary["references"],
    }
    if dropped_rels > 0:
        report_out["ignored"] = [f"{dropped_rels} proposed relationship(s): a query-scoped type only inherits the "
                                 "relationships its nodes already have"]  # fmt: skip
    return ScopedExtension(contract=scoped, aliases=aliases, report=report_out)
