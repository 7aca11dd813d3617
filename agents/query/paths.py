"""Join paths over the contract's relationship graph: which relationships lead from one entity type to another,
and which of several paths a question means (shortest, through the relationships and types it names, with
self-relationships only in the direction the question gives them).
"""

from __future__ import annotations

from dataclasses import dataclass

from esc.agents.query.vocabulary import Vocabulary

MAX_PATH = 4
ORIGIN_WORDS = frozenset({"origin", "orig", "source", "src", "from", "departure", "dep", "start", "sender", "sent"})
DEST_WORDS = frozenset({"destination", "dest", "target", "to", "arrival", "arr", "recipient", "receiver", "end"})
"""Direction words of relationship names: "from X" leans to an origin-like relationship, "to X" to a
destination-like one (general English of movement, not of a domain)."""


@dataclass(frozen=True)
class Step:
    rel: str
    direction: str  # out: (prev)-[rel]->(target); in: (prev)<-[rel]-(target)
    target: str
    to_one: bool  # following it reaches at most one node (an FK read forwards, or a nesting child's parent)


def paths(vocab: Vocabulary, src: str, dst: str, fixed: dict[str, str], limit: int = MAX_PATH) -> list[list[Step]]:
    """Relationship paths from ``src`` to ``dst`` of at most ``limit`` hops. A relationship is used at most once
    per path; a self-relationship only when ``fixed`` gives its direction."""
    out: list[list[Step]] = []

    def walk(at: str, path: list[Step], used: set[tuple[str, str, str]], seen: set[str]) -> None:
        if at == dst and path:
            out.append(list(path))
            return
        if len(path) >= limit:
            return
        for r, direction, other in vocab.neighbours(at):
            edge = (r.name, r.from_entity, r.to_entity)
            if edge in used:
                continue
            self_ref = r.from_entity == r.to_entity
            if self_ref and fixed.get(r.name) != direction:
                continue
            if other in seen and other != dst and not self_ref:
                continue  # no detours through a type already visited
            to_one = direction == "out"
            path.append(Step(r.name, direction, other, to_one))
            used.add(edge)
            seen.add(other)
            walk(other, path, used, seen)
            seen.discard(other)
            used.discard(edge)
            path.pop()

    if src == dst and not fixed:
        return [[]]
    walk(src, [], set(), {src})
    if src == dst:
        out.append([])
    return out


def best_path(
    vocab: Vocabulary,
    src: str,
    dst: str,
    wanted_rels: set[str],
    named_types: set[str],
    fixed: dict[str, str],
    prefer_many: bool = False,
    leaning: dict[str, float] | None = None,
) -> tuple[list[Step], float] | None:
    """The path a question most likely means, and how clearly it wins (1.0: no close rival). Shorter paths win;
    a path through a relationship or type the question names scores higher; ``prefer_many`` favours paths that
    fan out (counting "tracks of an album" walks the FK backwards)."""
    found = paths(vocab, src, dst, fixed)
    if not found:
        return None

    def score(p: list[Step]) -> float:
        names = {s.rel for s in p}
        inner = {s.target for s in p[:-1]}
        s = -1.0 * len(p) + 2.5 * len(wanted_rels & names) + 0.8 * len(named_types & inner)
        s -= 4.0 * len(wanted_rels - names) if wanted_rels else 0.0
        if prefer_many and p and all(st.to_one for st in p):
            s -= 0.5
        for st in p:
            s += (leaning or {}).get(st.rel, 0.0)
        return s

    ranked = sorted(found, key=lambda p: (-score(p), len(p)))
    best = ranked[0]
    if wanted_rels and not (wanted_rels & {s.rel for s in best}) and src == dst:
        return None
    margin = 1.0
    if len(ranked) > 1:
        gap = score(best) - score(ranked[1])
        margin = 1.0 if gap >= 1.0 else 0.85 if gap > 0 else 0.7
    return best, margin


def distance(vocab: Vocabulary, a: str, b: str) -> int:
    """Hops on the shortest path between two types (99: none within ``MAX_PATH``); cached on the vocabulary."""
    if a == b:
        return 0
    cache = vocab.cache.setdefault("distance", {})
    key = (a, b)
    if key not in cache:
        found = paths(vocab, a, b, {}, limit=MAX_PATH)
        cache[key] = min((len(p) for p in found), default=99)
    return int(cache[key])
