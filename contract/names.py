"""Name evidence shared by key and foreign-key inference: normalised names, table prefixes, singular forms."""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

from esc.contract.semantic import id_word, tokens


@lru_cache(maxsize=1 << 16)
def norm(name: str) -> str:
    """Lower case, letters and digits only: ``Customer_ID`` -> ``customerid``."""
    return re.sub(r"[^a-z0-9]", "", name.lower())


def singular(word: str) -> str:
    w = word.lower()
    if len(w) <= 3:
        return w
    if w.endswith("ies"):
        return w[:-3] + "y"
    if w.endswith(("sses", "xes", "ches", "shes")):
        return w[:-2]
    if w.endswith("s") and not w.endswith(("ss", "us", "is")):
        return w[:-1]
    return w


@lru_cache(maxsize=1 << 16)
def source_stem(source: str) -> str:
    """Singular, normalised last segment of a source name: ``Orders.Order Details`` -> ``orderdetail``."""
    last = source.rsplit(".", 1)[-1]
    toks = tokens(last)
    if not toks:
        return norm(last)
    return "".join(toks[:-1]) + singular(toks[-1])


def column_prefix(columns: Sequence[str]) -> str:
    """A table prefix shared by (nearly) all columns, like TPC-H's ``l_`` / ``ps_``; '' if none. Cached: key and
    foreign-key inference ask it once per column pair of sources, which is quadratic on a wide file."""
    return _column_prefix(tuple(columns))


_HEAD = re.compile(r"([A-Za-z]{1,4}_)[A-Za-z]")


@lru_cache(maxsize=1024)
def _column_prefix(columns: tuple[str, ...]) -> str:
    if len(columns) < 2:
        return ""
    heads: dict[str, int] = {}
    for c in columns:
        m = _HEAD.match(c)
        if m:
            heads[m.group(1).lower()] = heads.get(m.group(1).lower(), 0) + 1
    if not heads:
        return ""
    best, n = max(heads.items(), key=lambda kv: (kv[1], kv[0]))
    return best if n >= 0.8 * len(columns) else ""


def strip_prefix(name: str, prefix: str) -> str:
    return name[len(prefix) :] if prefix and name.lower().startswith(prefix) else name


@lru_cache(maxsize=1 << 16)
def base_name(name: str, prefix: str = "") -> str:
    """The name without table prefix and id word: ``c_custkey`` -> ``cust``, ``AlbumId`` -> ``album``."""
    n = norm(strip_prefix(name, prefix))
    w = id_word(name)
    if w and n.endswith(w) and len(n) > len(w):
        n = n[: -len(w)]
    return n


def names_source(name: str, source: str, prefix: str = "") -> bool:
    """Does a column name name its source (``AlbumId`` in Album, ``c_custkey`` in customer)?"""
    b = base_name(name, prefix)
    stem = source_stem(source)
    if not b or not stem:
        return False
    if b == stem:
        return True
    words = tokens(source.rsplit(".", 1)[-1])
    if len(words) > 1 and b in {w.lower() for w in words} | {singular(w) for w in words}:
        return False  # names one part of a compound name: film_id in film_category
    return (len(b) >= 3 and stem.startswith(b)) or (len(stem) >= 3 and b.endswith(stem))
