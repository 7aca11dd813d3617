"""Name evidence that a column refers to a source's key, and an index that finds the keys a column may name
without asking every key in turn.

``name_evidence`` compares one column with one key. Foreign-key inference asks it for every column against every
single-column key: a folder of 500 small sources is 1,500 columns x 500 keys. ``NameIndex`` holds each key's
name parts once and answers a column with the few keys any rule of ``name_evidence`` could accept (a superset,
each then checked by ``name_evidence`` itself), so the cost per column no longer grows with the number of keys.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

from esc.contract.names import base_name, norm, source_stem, strip_prefix
from esc.contract.semantic import id_word, tokens

PERSON_ROLES = frozenset(
    {
        "rep",
        "representative",
        "manager",
        "supervisor",
        "reports",
        "boss",
        "agent",
        "assignee",
        "owner",
        "clerk",
        "salesperson",
        "salesman",
        "employee",
        "staff",
        "approver",
        "reviewer",
        "author",
        "creator",
    }
)
RELATION_WORDS = frozenset({"via", "by", "to", "of", "from", "for", "at", "in", "on", "with"})
PERSON_SOURCES = frozenset(
    {"employee", "staff", "user", "person", "people", "agent", "worker", "member", "personnel"}
)
ID_WORDS = ("id", "key", "fk", "ref", "code", "no")
MIN_ROLE_SUFFIX = 4  # a key's name (after its prefix) this long may end a column's name: manager_staff_id
MIN_NAMING_WORD = 4  # a column's word this long may start a source's name: ShipVia -> Shippers


@dataclass(frozen=True)
class _Column:
    c: str  # normalised name
    cs: str  # normalised name without the table prefix
    words: tuple[str, ...]  # words without the prefix and id words
    base: str
    roles: frozenset[str]
    idlike: bool


@lru_cache(maxsize=1 << 16)
def _column(col: str, prefix: str) -> _Column:
    words = tuple(t for t in tokens(strip_prefix(col, prefix)) if t not in ID_WORDS)
    return _Column(
        norm(col),
        norm(strip_prefix(col, prefix)),
        words,
        base_name(col, prefix),
        frozenset(w for w in words if w in PERSON_ROLES),
        id_word(col) is not None,
    )


def name_evidence(col: str, s_prefix: str, target: str, key: str, t_prefix: str) -> tuple[float, str] | None:
    """Strength and rule of the name evidence that ``col`` refers to ``target.key``; None when there is none."""
    p = _column(col, s_prefix)
    k = norm(key)
    if p.c == k:
        return 1.0, "same_name"
    cs, ks = p.cs, norm(strip_prefix(key, t_prefix))
    if (s_prefix or t_prefix) and cs == ks and len(cs) >= 3:
        return 0.95, "same_name_after_prefix"
    if len(ks) >= MIN_ROLE_SUFFIX and cs.endswith(ks) and cs != ks:
        return 0.9, "role_prefix"
    stem = source_stem(target)
    # without an id word, the other words may only be relation words: ShipVia, ReportsTo (not rental_duration)
    naming = {w for w in p.words if len(w) >= MIN_NAMING_WORD and stem.startswith(w)}
    words = set(p.words)
    if stem and (p.base == stem or naming) and (p.idlike or not words - naming - RELATION_WORDS):
        return 0.75, "names_target"
    if p.roles and stem in PERSON_SOURCES and (p.idlike or not words - p.roles - RELATION_WORDS):
        return 0.6, "person_role"
    return None


class NameIndex:
    """The keys (``target``, ``key``, ``t_prefix``) by the name parts ``name_evidence`` compares, so that a column
    is checked only against keys one of its rules could accept."""

    def __init__(self, keys: Iterable[tuple[str, str, str]]) -> None:
        self._by_key: dict[str, list[int]] = {}
        self._by_stripped: dict[str, list[int]] = {}
        self._by_stem: dict[str, list[int]] = {}
        self._by_stem_head: dict[str, list[int]] = {}
        self._people: list[int] = []
        for i, (target, key, t_prefix) in enumerate(keys):
            self._by_key.setdefault(norm(key), []).append(i)
            self._by_stripped.setdefault(norm(strip_prefix(key, t_prefix)), []).append(i)
            stem = source_stem(target)
            if stem:
                self._by_stem.setdefault(stem, []).append(i)
                for n in range(MIN_NAMING_WORD, len(stem) + 1):
                    self._by_stem_head.setdefault(stem[:n], []).append(i)
            if stem in PERSON_SOURCES:
                self._people.append(i)

    def candidates(self, col: str, prefix: str) -> set[int]:
        """Positions of the keys ``col`` may name (every key ``name_evidence`` accepts is among them)."""
        p = _column(col, prefix)
        out: set[int] = set()
        out.update(self._by_key.get(p.c, ()))
        out.update(self._by_stripped.get(p.cs, ()))
        for n in range(MIN_ROLE_SUFFIX, len(p.cs)):
            out.update(self._by_stripped.get(p.cs[-n:], ()))
        out.update(self._by_stem.get(p.base, ()))
        for w in p.words:
            if len(w) >= MIN_NAMING_WORD:
                out.update(self._by_stem_head.get(w, ()))
        if p.roles:
            out.update(self._people)
        return out


__all__ = ["PERSON_ROLES", "PERSON_SOURCES", "RELATION_WORDS", "NameIndex", "name_evidence"]
