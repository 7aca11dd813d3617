"""How the values of a foreign key join their target's identity key, as discovery found them to: exactly, or
after case folding (``match: casefold`` in the foreign key's evidence: the codes were re-cased in one source, and
containment was measured on ``fold_text`` of both sides).

Writers join on the same normalization: for a target entity that a case-folded foreign key references, the
entity's own key values and every foreign-key value pointing at it are folded alike, so ``alfki`` in a child
meets ``ALFKI`` in the parent whichever of the two arrives first (when the parent's codes are already folded, as
upper-cased codes are, its keys do not change at all).
"""

from __future__ import annotations

from typing import Any

from esc.contract.hashing import fold_text
from esc.contract.model import Contract, ForeignKey, Relationship

CASEFOLD = "casefold"
"""The ``match`` of a foreign key found on case-folded values."""


def fk_match(fk: ForeignKey) -> str:
    """``casefold`` or ``exact`` (older contracts only say ``case_insensitive``)."""
    ev = fk.evidence
    if ev.get("match") == CASEFOLD or ev.get("case_insensitive") is True:
        return CASEFOLD
    return "exact"


def _names(contract: Contract, fids: list[str]) -> tuple[str | None, tuple[str, ...]]:
    source: str | None = None
    names: list[str] = []
    for fid in fids:
        hit = contract.field_by_id(fid)
        if hit is None:
            return None, ()
        source = hit[0]
        names.append(hit[1].name)
    return source, tuple(names)


def relationship_match(contract: Contract, rel: Relationship) -> str:
    """The ``match`` of the foreign key a ``foreign_key`` relationship was made from (``exact`` if none)."""
    fsrc, fnames = _names(contract, rel.from_fields)
    tsrc, tnames = _names(contract, rel.to_fields)
    for fk in contract.foreign_keys:
        if fk.signature() == (fsrc, fnames, tsrc, tnames):
            return fk_match(fk)
    return "exact"


def folded_entities(contract: Contract) -> frozenset[str]:
    """Entity types whose identity keys are joined case-folded: a case-folded foreign key references them."""
    return frozenset(
        r.to_entity
        for r in contract.relationships
        if r.kind == "foreign_key" and relationship_match(contract, r) == CASEFOLD
    )


def fold_key(values: dict[str, Any]) -> dict[str, Any]:
    """Key values joined case-folded: strings under ``fold_text``, other values as they are."""
    return {k: fold_text(v) if isinstance(v, str) else v for k, v in values.items()}
