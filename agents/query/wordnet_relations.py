"""WordNet relations between words beyond ``related``: Wu-Palmer similarity of nouns, "is a kind of" along
hypernyms, and the nouns that name the doer of a verb."""

from __future__ import annotations

from functools import lru_cache

from esc.agents.query.wordnet import WordNet, wordnet


@lru_cache(maxsize=100_000)
def _paths_cached(wn: WordNet, pos: str, offset: int) -> tuple[tuple[int, ...], ...]:
    ss = wn.synset(pos, offset)
    if ss is None:
        return ((offset,),)
    ups = [off for sym, off, ppos, _s, _d in ss.pointers if sym in ("@", "@i") and ppos == pos]
    if not ups:
        return ((offset,),)
    out: list[tuple[int, ...]] = []
    for up in ups[:3]:
        for p in _paths_cached(wn, pos, up):
            if offset not in p and len(out) < 12:
                out.append((*p, offset))
    return tuple(out) or ((offset,),)


def wup(a: str, b: str, senses: int = 3) -> float:
    """Wu-Palmer similarity of two nouns over their first ``senses`` senses (0 when WordNet lacks either):
    2 x depth(lowest common hypernym) / (depth(a) + depth(b))."""
    wn = wordnet()
    if wn is None:
        return 0.0
    sa = wn.senses(a, "n")[:senses]
    sb = wn.senses(b, "n")[:senses]
    best = 0.0
    for x in sa:
        px = _paths_cached(wn, "n", x)
        for y in sb:
            if x == y:
                return 1.0
            py = _paths_cached(wn, "n", y)
            for p in px:
                for q in py:
                    common = 0
                    for u, v in zip(p, q, strict=False):
                        if u != v:
                            break
                        common += 1
                    if common:
                        score = 2.0 * common / (len(p) + len(q))
                        best = max(best, score)
    return best


def is_a(word: str, ancestor: str, depth: int = 3, senses: int = 2) -> bool:
    """Is some first sense of ``word`` a kind of ``ancestor`` within ``depth`` hypernym steps ("buyer" is a
    "customer", "singer" is a "musician")? One direction only: a kind of, not a sibling."""
    wn = wordnet()
    if wn is None:
        return False
    targets = set(wn.senses(ancestor, "n")[:senses])
    if not targets:
        return False
    frontier = set(wn.senses(word, "n")[:senses])
    for _ in range(depth):
        if frontier & targets:
            return True
        nxt: set[int] = set()
        for off in frontier:
            ss = wn.synset("n", off)
            if ss is not None:
                nxt.update(o for sym, o, p, _s, _d in ss.pointers if sym == "@" and p == "n")
        frontier = nxt
    return bool(frontier & targets)


AGENT_SUFFIXES = ("er", "or", "ar", "ist", "ant", "ent", "ee")


@lru_cache(maxsize=16384)
def agent_nouns(verb: str, senses: int = 8) -> tuple[str, ...]:
    """The nouns WordNet derives from a verb that name its doer ("make" -> maker, "buy" -> buyer, "sing" ->
    singer), over the verb's first ``senses`` senses, most frequent sense first."""
    wn = wordnet()
    if wn is None:
        return ()
    low = verb.strip().lower()
    out: list[str] = []
    for offset in wn.senses(low, "v")[:senses]:
        ss = wn.synset("v", offset)
        if ss is None:
            continue
        me = ss.words.index(low) + 1 if low in ss.words else 0
        for sym, off, ppos, src, dst in ss.pointers:
            if sym != "+" or ppos != "n" or (src not in (0, me)):
                continue
            other = wn.synset("n", off)
            if other is None:
                continue
            for w in other.words if dst == 0 else other.words[dst - 1 : dst]:
                if w.endswith(AGENT_SUFFIXES) and " " not in w and w not in out:
                    out.append(w)
    return tuple(out)
