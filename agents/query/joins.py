"""Join paths as a plan takes them: the hops of a route, and the route itself, chosen with the relationships
and types the question names, the self-relationship directions it gives, and the direction its prepositions and
verbs lean to ("flights out of Newark", "left La Guardia", "flights to Honolulu")."""

from __future__ import annotations

from typing import TYPE_CHECKING

from esc.agents.query.interpret import Decline
from esc.agents.query.paths import Step, best_path
from esc.agents.query.plan import Hop, NodePattern

if TYPE_CHECKING:
    from esc.agents.query.assemble import Job


def hops_of(steps: list[Step], nodes: list[NodePattern]) -> list[Hop]:
    return [Hop(rel_type=s.rel, direction=s.direction, target=v) for s, v in zip(steps, nodes[1:], strict=True)]  # type: ignore[arg-type]


ORIGIN_VERBS = frozenset({"leave", "depart", "originate", "start", "quit", "exit"})
DEST_VERBS = frozenset({"reach", "enter", "visit", "serve"})


def _direction_leaning(job: Job) -> dict[str, float]:
    """Relationship bonuses from the prepositions before the anchors: "flights out of Newark", "departed from
    JFK" lean to origin-like relationships, "flights to Honolulu" to destination-like ones."""
    from esc.agents.query.paths import DEST_WORDS, ORIGIN_WORDS

    r = job.r
    leans: set[str] = set()
    for a in job.anchors:
        k = a.start - 1
        while k >= 0 and r.low(k) in ("the", "a", "an"):
            k -= 1
        prev, prev2 = r.low(k), r.low(k - 1)
        verb = r.tokens[k].base if k >= 0 else ""
        if prev == "from" or (prev == "of" and prev2 == "out") or verb in ORIGIN_VERBS:
            leans.add("origin")
        elif prev in ("to", "into", "towards", "toward") or (prev == "for" and prev2 in ("bound", "headed")) or (
            verb in DEST_VERBS
        ):
            leans.add("dest")
    if len(leans) != 1:
        return {}
    want = ORIGIN_WORDS if "origin" in leans else DEST_WORDS
    other = DEST_WORDS if "origin" in leans else ORIGIN_WORDS
    out: dict[str, float] = {}
    for rel in job.vocab.rels:
        words = {w for part in rel.name.lower().split("_") for w in (part, *split_words(part))}
        if words & want:
            out[rel.name] = 1.5
        elif words & other:
            out[rel.name] = -1.5
    return out


def split_words(name: str) -> list[str]:
    from esc.contract.lexicon import split_identifier

    return split_identifier(name)


def route(job: Job, src: str, dst: str, prefer_many: bool = False, skip: frozenset[str] = frozenset()) -> list[Step]:
    named = {e.entity for m in job.r.schema for e in m.of("type")} - {src, dst}
    wanted = {e.name for m in job.r.schema for e in m.of("rel") if m.best >= 0.8} - skip
    fixed = {k: v for k, v in job.self_directions().items() if k not in skip}
    leaning = _direction_leaning(job)
    got = best_path(job.vocab, src, dst, wanted, named, fixed, prefer_many, leaning)
    if got is None and wanted:
        got = best_path(job.vocab, src, dst, set(), named, fixed, prefer_many, leaning)
    if got is None:
        raise Decline(f"no relationship path from {src} to {dst} in the contract")
    steps, margin = got
    if margin < 1.0:
        job.penalize(margin, "several join paths fit")
    return steps
