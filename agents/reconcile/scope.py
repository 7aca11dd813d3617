"""Questions that name one resolved type and measure a field another holds: "the total balance of all subscribers"
(the subscribers hold no balance; the billing accounts of the same people do), "the average balance of the vendor
portal accounts". The named type becomes the start of the plan, joined to the measured type by ``SAME_AS``, so the
rewrite over canonical entities (agents/reconcile/rewrite.py) aggregates over the entities that have a record of
the named type, each once. Only types that share clusters are joined this way; elsewhere a type word the plan
leaves out costs confidence as before.
"""

from __future__ import annotations

from typing import Any

from esc.agents.query.anchors import Anchor
from esc.agents.reconcile.model import SAME_AS


def scope_anchors(job: Any, target: str, anchors: list[Anchor], agg: str | None) -> list[Anchor]:
    """``anchors`` plus a filterless anchor on a named type that shares entities with ``target``."""
    if agg not in ("sum", "avg", "min", "max", "count_distinct"):
        return anchors
    linked = {r.to_entity if r.from_entity == target else r.from_entity
              for r in job.vocab.rels if r.name == SAME_AS and target in (r.from_entity, r.to_entity)}  # fmt: skip
    if not linked:
        return anchors
    taken = {a.entity for a in anchors} | {target}
    for m in job.free():
        types = {e.entity: lk.score for e, lk in m.of("type").items()}
        named = sorted((t for t in types if t in linked and t not in taken), key=lambda t: (-types[t], t))
        if named and not m.of("attr"):
            job.used_schema.add(m.start)
            text = job.r.text(m.start, m.end)
            return [*anchors, Anchor(named[0], [], m.start, m.end, types[named[0]], "scope", True, text)]
    return anchors
