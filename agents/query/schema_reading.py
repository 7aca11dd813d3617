"""Schema readings: the longest phrase of the contract's phrase index at each place (hyphenated words also
read joined), field names cut short, and "<type> <number or code>" as a key."""

from __future__ import annotations

import re
from typing import Any

from esc.agents.query.mentions import GENERIC_NOUNS, KeyMention, Reading, SchemaMention
from esc.agents.query.phrases import Element, Link, PhraseIndex
from esc.agents.query.values_reading import _content
from esc.agents.query.words import (
    base,
)


def _keys_at(r: Reading, i: int, size: int) -> list[tuple[str, ...]]:
    """Base-form keys for tokens[i:i+size], with hyphenated words also read joined ("e-mail" -> email)."""
    toks = r.tokens[i : i + size]
    words = [r.typos.get(t.index, t.base) for t in toks]
    keys = [tuple(words)]
    joined: list[str] = []
    k = 0
    while k < len(toks):
        w = words[k]
        while toks[k].hyphen_next and k + 1 < len(toks):
            k += 1
            w = base(w + toks[k].low)
        joined.append(w)
        k += 1
    if len(joined) != len(words):
        keys.append(tuple(joined))
    return keys


def read_schema(r: Reading, phrases: PhraseIndex) -> None:
    n = len(r.tokens)
    i = 0
    while i < n:
        if not r.free(i):
            i += 1
            continue
        best: tuple[int, dict[Element, Link]] | None = None
        for size in range(min(phrases.max_len, n - i), 0, -1):
            if not r.free(i, i + size):
                continue
            for key in _keys_at(r, i, size):
                links = phrases.lookup(key)
                if links:
                    best = (size, links)
                    break
            if best is not None:
                break
        if best is None:
            i += 1
            continue
        size, links = best
        top = max(lk.score for lk in links.values())
        links = {e: lk for e, lk in links.items() if lk.score >= 0.6 * top}  # a weak reading beside a strong one
        m = SchemaMention(i, i + size, dict(links))
        r.schema.append(m)
        r.take(m)
        i += size


def read_truncations(r: Reading, phrases: PhraseIndex) -> None:
    """Words nothing else matched that a field's short name cuts short ("temperature" for ``temp``, "dew
    point" for ``dewp``): two words first, then one."""
    n = len(r.tokens)
    for size in (2, 1):
        for i in range(n - size + 1):
            if not r.free(i, i + size) or not all(_content(t) and t.low not in GENERIC_NOUNS for t in r.tokens[i : i + size]):
                continue
            links = phrases.truncations([t.low for t in r.tokens[i : i + size]])
            if links:
                m = SchemaMention(i, i + size, links)
                r.schema.append(m)
                r.take(m)
    r.schema.sort(key=lambda m: m.start)


def read_keys(r: Reading, key_of: Any) -> None:
    """"<type> <number|code>": a type mention followed by a literal its single-column key can hold."""
    for m in list(r.schema):
        if m.end >= len(r.tokens):
            continue
        if any(lk.score >= 0.95 for e, lk in m.of("attr").items()):
            continue  # "flight 1545": the field named "flight", not the record with key 1545
        for el in m.of("type"):
            key = key_of(el.entity)
            if key is None:
                continue
            attr, kind = key
            num = next((x for x in r.numbers if x.start == m.end), None)
            tok = r.tokens[m.end]
            if kind == "int" and num is not None and num.value.is_integer():
                r.keys.append(KeyMention(m.start, num.end, el.entity, attr, int(num.value), m.links[el].score))
                r.numbers.remove(num)
                break
            if kind == "string" and r.free(m.end) and re.fullmatch(r"[A-Z0-9][A-Z0-9-]{1,15}", tok.text):
                r.keys.append(KeyMention(m.start, m.end + 1, el.entity, attr, tok.text, m.links[el].score))
                r.used.add(m.end)
                break
