"""The value dictionary mentions are found with: which stored values name an entity, and how text writes them.

Per entity type of the contract (``agents.query.vocabulary``):

* its naming attributes (``TypeInfo.display``: a name or title attribute, or first + last name) and other
  attributes whose semantic type is ``name``: every stored value is a surface of its entity (weight 1.0);
* a person named by first and last name also as "Last, First" (1.0), "F. Last" (0.8) and "Last" alone (0.5);
* a multi-word name that ends in a legal form ("Ltd", "GmbH", "Inc." ..., a closed class of business English like
  the articles, not a word list of one data set) also without it (0.8);
* string identity keys that look like codes (letters and digits, or at least three capitals) as themselves,
  matched in their stored case; numbers never (a 17 in prose is rarely customer 17).

Each surface points at its entity by label and identity key (``_record_id`` for keyless types). Fields with more
than ``MAX_VALUES`` distinct values are skipped. ``fingerprint`` identifies a dictionary: chunks linked with another
one are linked again (``agents.mention_linker``).
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from esc.agents.mentions import EntityRef, Surface
from esc.agents.query.vocabulary import TypeInfo, Vocabulary
from esc.agents.stores.base import GraphStore
from esc.contract.model import Contract

log = logging.getLogger(__name__)

MAX_VALUES = 200_000
RECORD_KEY = "_record_id"
LEGAL_FORMS = frozenset(
    ["inc", "inc.", "corp", "corp.", "corporation", "co", "co.", "ltd", "ltd.", "llc", "llp", "plc", "gmbh", "ag", "sa", "s.a.", "sas", "sarl", "bv", "b.v.", "nv", "n.v.", "oy", "ab", "as", "a/s", "spa", "s.p.a.", "srl", "kg", "ohg", "pty", "limited", "company"]
)  # fmt: skip
_CODE = re.compile(r"(?=.*[A-Za-z])(?=.*\d)[A-Za-z0-9][A-Za-z0-9._/-]{2,}|[A-Z]{3,}")


def entity_key(key: dict[str, Any]) -> str:
    """The identity key as the extractor writes it beside a text (sorted JSON)."""
    return json.dumps(key, sort_keys=True, default=str)


def _names(info: TypeInfo) -> list[list[str]]:
    """Attribute groups that name an entity: the display ([first, last] or [name]), then other name attributes."""
    groups: list[list[str]] = []
    if info.display and not all(info.attrs[a].identifier for a in info.display if a in info.attrs):
        groups.append(list(info.display))
    for a in info.attrs.values():
        if a.semantic == "name" and a.type in ("string", "text") and [a.name] not in groups and a.name not in info.display:
            groups.append([a.name])
    return groups


def _person(first: str, last: str, ref: EntityRef, fields: str) -> list[Surface]:
    full = f"{first} {last}"
    out = [Surface(full, ref, fields, full), Surface(f"{last}, {first}", ref, fields, full)]
    initial = first.strip()[:1]
    if initial.isalpha():
        out.append(Surface(f"{initial}. {last}", ref, fields, full, 0.8, variant=True))
    out.append(Surface(last, ref, fields, full, 0.5, variant=True))
    return out


def _single(value: str, ref: EntityRef, field: str) -> list[Surface]:
    out = [Surface(value, ref, field, value)]
    words = value.split()
    if len(words) > 1 and words[-1].casefold().rstrip(",") in LEGAL_FORMS:
        short = " ".join(words[:-1]).rstrip(",&")
        if len(short) >= 3:
            out.append(Surface(short, ref, field, value, 0.8, variant=True))
    return out


def _rows(graph: GraphStore, label: str, props: Sequence[str]) -> Iterable[tuple[Any, ...]]:
    rows = graph.distinct_values(label, list(props), MAX_VALUES + 1)
    if len(rows) > MAX_VALUES:
        log.info("mentions: %s.%s has over %d values; not in the dictionary", label, "+".join(props), MAX_VALUES)
        return []
    return rows


class Stopped(RuntimeError):
    """``build_surfaces`` was asked to stop between two reads (graph work came in); nothing is kept."""


def build_surfaces(contract: Contract, graph: GraphStore, stop: Callable[[], bool] | None = None) -> list[Surface]:
    """Every surface of the contract's naming values in ``graph``: one read per entity type and naming group, and
    ``stop`` is asked before each (a read of every name takes seconds on a large graph and competes with the
    writes; a background sync gives way between them and raises :class:`Stopped`)."""
    def rows(label: str, props: Sequence[str]) -> Iterable[tuple[Any, ...]]:
        if stop is not None and stop():
            raise Stopped(f"graph work came in before {label}.{'+'.join(props)} was read")
        return _rows(graph, label, props)

    vocab = Vocabulary(contract)
    out: list[Surface] = []
    for info in sorted(vocab.types.values(), key=lambda t: t.name):
        key = list(info.key) or [RECORD_KEY]
        n = len(key)
        for group in _names(info):
            for row in rows(info.name, [*key, *group]):
                ref = EntityRef(info.name, entity_key(dict(zip(key, row[:n], strict=True))))
                values = row[n:]
                if not all(isinstance(v, str) and v.strip() for v in values):
                    continue
                if len(values) == 2:
                    out.extend(_person(values[0].strip(), values[1].strip(), ref, "+".join(group)))
                else:
                    out.extend(_single(values[0].strip(), ref, group[0]))
        if len(info.key) == 1 and info.key[0] in info.attrs and info.attrs[info.key[0]].type == "string":
            for (v,) in rows(info.name, info.key):
                if isinstance(v, str) and _CODE.fullmatch(v.strip()):
                    ref = EntityRef(info.name, entity_key({info.key[0]: v}))
                    out.append(Surface(v.strip(), ref, info.key[0], v, 1.0, exact_case=True))
    return out


def fingerprint(surfaces: Sequence[Surface]) -> str:
    h = hashlib.sha256()
    for s in sorted(surfaces, key=lambda s: (s.text, s.entity.label, s.entity.key, s.field, s.weight)):
        h.update(f"{s.text}\x1f{s.entity.label}\x1f{s.entity.key}\x1f{s.field}\x1f{s.weight}\x1e".encode())
    return h.hexdigest()[:24]
