"""Entity types and relationships derived deterministically from an observed contract.

Naming conventions (what a Neo4j user expects, and stable across runs):

* **Entity type** (node label): one per source, the PascalCase singular of the source name's last segment.
  ``Invoice.InvoiceLine`` -> ``InvoiceLine``, ``film_actor`` -> ``FilmActor``, ``Customers`` -> ``Customer``,
  ``Order Details`` -> ``OrderDetail``. When two sources would get the same label, sources with fewer name
  segments choose first (then by name) and the later one is qualified with its full dotted name (``items`` /
  ``a.items`` -> ``Item`` / ``AItem``); a numeric suffix is the last resort. Names already chosen by an
  earlier contract version are pinned and never change.
* **Foreign-key relationship**: from the referencing entity to the referenced one, named after the foreign-key
  field without its ``Id`` / ``_id`` / ``ID`` / ``Key`` suffix, in UPPER_SNAKE: ``Track.AlbumId -> Album`` is
  ``(:Track)-[:ALBUM]->(:Album)``, ``Customer.SupportRepId -> Employee`` is ``SUPPORT_REP``, ``Employee.ReportsTo
  -> Employee`` is ``REPORTS_TO``. A composite key, or a field that is only ``Id``, takes the target label
  (``PLAYLIST``). A second relationship with the same name between the same two labels gets ``_2``, ``_3``...
* **Nesting relationship**: ``(parent)-[:HAS_<CHILD>]->(child)`` with the child label in UPPER_SNAKE, e.g.
  ``(:Invoice)-[:HAS_INVOICE_LINE]->(:InvoiceLine)``. The child-to-parent foreign key that nesting implies is
  recorded under ``foreign_keys`` but not repeated as a second relationship.
* **Attributes**: one per field, named after the field, typed from the catalog, referencing the field id, with
  the field's time and unit marks where it has them (contract/annotations.py; refreshed as statistics are).
  ``key`` holds the field ids of the source's identity key. An entity is ``descriptive`` when it has long
  free text (type ``text``, semantic ``free_text``, or strings of 200+ characters), which marks it for vectors.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from esc.contract.annotations import annotate
from esc.contract.model import (
    Attribute,
    Contract,
    EntityType,
    FieldSpec,
    ForeignKey,
    Relationship,
    SourceSpec,
    TimeMark,
    UnitMark,
)
from esc.contract.typing import widen

LONG_TEXT_CHARS = 200
"""A string field whose longest observed value reaches this many characters counts as free text."""

_WORD = re.compile(r"[A-Za-z0-9]+")
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
_ID_WORDS = {"id", "key", "fk", "ref", "no", "num"}

_IRREGULAR = {
    "people": "person",
    "children": "child",
    "men": "man",
    "women": "woman",
    "mice": "mouse",
    "geese": "goose",
    "feet": "foot",
    "teeth": "tooth",
    "indices": "index",
    "matrices": "matrix",
    "criteria": "criterion",
    "phenomena": "phenomenon",
}
_INVARIANT = {"data", "series", "species", "news", "status", "analysis", "metadata", "media", "sheep", "info"}


def singular(word: str) -> str:
    """English singular of one word, keeping its case style (``Categories`` -> ``Category``)."""
    low = word.lower()
    if len(low) <= 2 or low in _INVARIANT:
        return word
    if low in _IRREGULAR:
        return _match_case(_IRREGULAR[low], word)
    for plural, single in (
        ("ies", "y"),
        ("sses", "ss"),
        ("xes", "x"),
        ("ches", "ch"),
        ("shes", "sh"),
        ("zzes", "zz"),
    ):
        if low.endswith(plural) and len(low) > len(plural):
            stem = word[: len(word) - len(plural)]
            return stem + _match_case(single, word[-len(plural) :])
    if low.endswith(("ss", "us", "is", "os")) or not low.endswith("s"):
        return word
    return word[:-1]


def _match_case(text: str, like: str) -> str:
    return text.upper() if like.isupper() else text


def _words(text: str) -> list[str]:
    """Split on non-alphanumerics, then on camel-case humps: ``SupportRepId`` -> Support, Rep, Id."""
    out: list[str] = []
    for chunk in _WORD.findall(text):
        out.extend(_CAMEL.findall(chunk))
    return out


def pascal(text: str) -> str:
    return "".join(
        w[:1].upper() + w[1:].lower() if w.isupper() and len(w) > 1 else w[:1].upper() + w[1:]
        for w in _words(text)
    )


def upper_snake(text: str) -> str:
    return "_".join(w.upper() for w in _words(text))


def _segments(source: str) -> list[str]:
    return [s for s in re.split(r"[./\\]", source) if _WORD.search(s)]


def entity_name(source: str) -> str:
    """PascalCase singular of the last segment of a source name (``Invoice.InvoiceLine`` -> ``InvoiceLine``)."""
    segments = _segments(source)
    if not segments:
        return "Entity"
    words = _words(segments[-1])
    if not words:
        return "Entity"
    words[-1] = singular(words[-1])
    return pascal(" ".join(words)) or "Entity"


def qualified_entity_name(source: str) -> str:
    """Every segment's label joined (``shop.orders.items`` -> ``ShopOrderItem``)."""
    segments = _segments(source)
    if len(segments) <= 1:
        return entity_name(source)
    return "".join(entity_name(s) for s in segments)


def fk_relationship_name(fields: list[str], target_entity: str) -> str:
    """UPPER_SNAKE of the FK field minus its id suffix; the target label for composite or bare-``Id`` keys."""
    if len(fields) == 1:
        words = _words(fields[0])
        if len(words) > 1 and words[-1].lower() in _ID_WORDS:
            words = words[:-1]
        if words and not (len(words) == 1 and words[0].lower() in _ID_WORDS):
            return "_".join(w.upper() for w in words)
    return upper_snake(target_entity) or "REFERS_TO"


def nesting_relationship_name(child_entity: str) -> str:
    return "HAS_" + (upper_snake(child_entity) or "CHILD")


def is_descriptive_field(f: FieldSpec) -> bool:
    if f.type == "text" or f.semantic == "free_text":
        return True
    return f.type == "string" and (f.max_length or 0) >= LONG_TEXT_CHARS


def assign_entity_names(sources: list[str], pinned: Mapping[str, str] | None = None) -> dict[str, str]:
    """One unique label per source. ``pinned`` names (from an earlier version) are kept as they are."""
    pinned = dict(pinned or {})
    names: dict[str, str] = {s: pinned[s] for s in sorted(sources) if s in pinned}
    taken = set(names.values()) | {n for s, n in pinned.items() if s not in names}
    # top-level sources claim short names first
    for source in sorted(sources, key=lambda s: (len(_segments(s)), s)):
        if source in names:
            continue
        candidate = entity_name(source)
        if candidate in taken:
            candidate = qualified_entity_name(source)
        base, n = candidate, 2
        while candidate in taken:
            candidate = f"{base}{n}"
            n += 1
        names[source] = candidate
        taken.add(candidate)
    return names


def _ids(src: SourceSpec, names: list[str]) -> list[str] | None:
    """Field ids of ``names`` in ``src``, or None when one of them is not in the catalog."""
    out = []
    for name in names:
        f = src.field(name)
        if f is None:
            return None
        out.append(f.id)
    return out


def derive_entity(
    source_name: str, src: SourceSpec, label: str, marks: Mapping[str, tuple[TimeMark | None, UnitMark | None]] | None = None
) -> EntityType:
    key = _ids(src, src.identity_key) or []
    marks = marks or {}
    attributes = [Attribute(name=f.name, field_id=f.id, type=f.type, semantic=f.semantic,
                            time=marks.get(f.id, (None, None))[0], unit=marks.get(f.id, (None, None))[1])
                  for f in src.fields]  # fmt: skip
    return EntityType(
        name=label,
        source=source_name,
        key=key,
        attributes=attributes,
        descriptive=any(is_descriptive_field(f) for f in src.fields),
    )


def _covered_by_nesting(fk: ForeignKey, contract: Contract) -> bool:
    for edge in contract.hierarchy:
        if (fk.from_.source, fk.to.source) == (edge.child, edge.parent) and (
            not edge.child_fields or list(edge.child_fields) == list(fk.from_.fields)
        ):
            return True
    return False


def derive(
    contract: Contract, pinned: Mapping[str, str] | None = None
) -> tuple[list[EntityType], list[Relationship]]:
    """Entity types and relationships for every source, FK and nesting edge of ``contract``.

    Pure and deterministic: the same contract (and pins) always gives the same lists in the same order
    (entities in sorted source order; nesting relationships first, then foreign keys, each sorted).
    """
    labels = assign_entity_names(list(contract.sources), pinned)
    marks = annotate(contract)  # time fields and units (contract/annotations.py)
    entities = [derive_entity(s, contract.sources[s], labels[s], marks) for s in sorted(contract.sources)]
    relationships: list[Relationship] = []
    used: set[tuple[str, str, str]] = set()

    def add(rel: Relationship) -> None:
        base, n = rel.name, 2
        while (rel.name, rel.from_entity, rel.to_entity) in used:
            rel.name = f"{base}_{n}"
            n += 1
        used.add((rel.name, rel.from_entity, rel.to_entity))
        relationships.append(rel)

    for edge in sorted(contract.hierarchy, key=lambda e: (e.parent, e.child, e.path)):
        parent, child = contract.sources.get(edge.parent), contract.sources.get(edge.child)
        if parent is None or child is None:
            continue
        from_ids, to_ids = _ids(parent, edge.parent_fields), _ids(child, edge.child_fields)
        if from_ids is None or to_ids is None:
            from_ids, to_ids = [], []
        add(
            Relationship(
                name=nesting_relationship_name(labels[edge.child]),
                kind="nesting",
                from_entity=labels[edge.parent],
                to_entity=labels[edge.child],
                from_fields=from_ids,
                to_fields=to_ids,
            )
        )
    for fk in sorted(contract.foreign_keys, key=lambda k: k.signature()):
        src, dst = contract.sources.get(fk.from_.source), contract.sources.get(fk.to.source)
        if src is None or dst is None or _covered_by_nesting(fk, contract):
            continue
        from_ids, to_ids = _ids(src, fk.from_.fields), _ids(dst, fk.to.fields)
        if not from_ids or not to_ids:
            continue
        add(
            Relationship(
                name=fk_relationship_name(fk.from_.fields, labels[fk.to.source]),
                kind="foreign_key",
                from_entity=labels[fk.from_.source],
                to_entity=labels[fk.to.source],
                from_fields=from_ids,
                to_fields=to_ids,
                confidence=fk.confidence,
            )
        )
    return entities, relationships


def rel_signature(r: Relationship) -> tuple[str, str, str, tuple[str, ...], tuple[str, ...]]:
    """What a relationship links (its identity across versions); the name is a label on top."""
    return (r.kind, r.from_entity, r.to_entity, tuple(r.from_fields), tuple(r.to_fields))


def merge_entities(existing: list[EntityType], new: list[EntityType]) -> list[EntityType]:
    """Add-only merge by entity name: new entities are appended, known ones only gain attributes.

    A known attribute's type widens (never narrows); a key is set only where none was known; ``descriptive``
    once true stays true. Inputs are not modified.
    """
    out = [e.model_copy(deep=True) for e in existing]
    by_name = {e.name: e for e in out}
    for cand in new:
        have = by_name.get(cand.name)
        if have is None:
            copy = cand.model_copy(deep=True)
            out.append(copy)
            by_name[copy.name] = copy
            continue
        attrs = {a.field_id: a for a in have.attributes}
        for a in cand.attributes:
            known = attrs.get(a.field_id)
            if known is None:
                copy_a = a.model_copy()
                have.attributes.append(copy_a)
                attrs[a.field_id] = copy_a
            else:
                known.type = widen(known.type, a.type)
                if known.semantic is None:
                    known.semantic = a.semantic
                known.time, known.unit = a.time, a.unit  # statistics: refreshed (the derived pass comes last)
        if not have.key and cand.key:
            have.key = list(cand.key)
        have.descriptive = have.descriptive or cand.descriptive
    return out


def merge_relationships(existing: list[Relationship], new: list[Relationship]) -> list[Relationship]:
    """Add-only merge by what a relationship links; a new one whose name is taken gets ``_2``, ``_3``..."""
    out = [r.model_copy(deep=True) for r in existing]
    by_sig = {rel_signature(r): r for r in out}
    names = {(r.name, r.from_entity, r.to_entity) for r in out}
    for cand in new:
        have = by_sig.get(rel_signature(cand))
        if have is not None:
            have.confidence = cand.confidence  # a statistic: refreshed, not part of the identity
            continue
        copy = cand.model_copy(deep=True)
        base, n = copy.name, 2
        while (copy.name, copy.from_entity, copy.to_entity) in names:
            copy.name = f"{base}_{n}"
            n += 1
        names.add((copy.name, copy.from_entity, copy.to_entity))
        by_sig[rel_signature(copy)] = copy
        out.append(copy)
    return out


def pinned_names(contract: Contract) -> dict[str, str]:
    """The label each source already has (its first entity), so derivation never renames it."""
    pinned: dict[str, str] = {}
    for e in contract.entities:
        pinned.setdefault(e.source, e.name)
    return pinned


def with_entities(contract: Contract) -> Contract:
    """A copy of ``contract`` holding its own entities/relationships plus every derived one (add-only)."""
    entities, relationships = derive(contract, pinned_names(contract))
    out = contract.model_copy(deep=True)
    out.entities = merge_entities(contract.entities, entities)
    out.relationships = merge_relationships(contract.relationships, relationships)
    return out
