"""The field cap: a source's catalog holds at most ``MAX_FIELDS_PER_SOURCE`` fields from the data, plus one overflow.

A CSV with 10,000 columns or JSON lines with 20,000 distinct keys would otherwise become a catalog (and a profile,
an entity type, a graph node) of that many fields, and profiling, inference and every state write grow with it.
:class:`FieldCap` admits field names per source in the order they are first read: the first ``limit`` distinct
names are fields; a value under any later name goes, under its own name, into the record's one overflow field
``_overflow``: a JSON object ``{name: value}`` (physical type ``json``; a graph store keeps it as JSON text).
Nothing is dropped: every non-null value is still in its record, only not a field of its own. Null values of
overflowed names are left out of the map (a null says nothing), and a record with no such value has no
``_overflow``. A data field that is itself named ``_overflow`` is renamed ``_overflow__data`` (or overflows).

Read order decides which names are admitted, and a file is always read in the same order, so the same file gives
the same fields in every run and on every runtime. The readers (``esc.streams.readers.scan.read``) apply the cap to
every file they read, for every source a file yields (nested children and sheets are sources of their own); a
nested child's copy of its parent's values keeps only the parent's admitted names. The limit is an argument:
this package reads no configuration (the runtimes read ``ESC_MAX_FIELDS``).
"""

from __future__ import annotations

from typing import Any

from esc.contract.records import ParentLink, Record

MAX_FIELDS_PER_SOURCE = 512
"""Fields from the data per source; the overflow field comes on top."""
OVERFLOW_FIELD = "_overflow"
RENAMED_DATA_FIELD = "_overflow__data"


class FieldCap:
    """Admits at most ``limit`` field names per source, in first-read order (one instance per read of a file)."""

    def __init__(self, limit: int = MAX_FIELDS_PER_SOURCE) -> None:
        if limit < 1:
            raise ValueError(f"the field cap must be at least 1, not {limit}")
        self.limit = limit
        self.admitted: dict[str, set[str]] = {}  # source -> names that are fields
        self.overflowed: dict[str, int] = {}  # source -> records that got an overflow map

    def apply(self, record: Record) -> Record:
        """The record with at most ``limit`` admitted names of its source; the rest in ``_overflow``."""
        names = self.admitted.setdefault(record.source, set())
        values = record.values
        parent = self._parent(record.parent)
        if OVERFLOW_FIELD not in values and all(k in names or self._admit(names, k) for k in values):
            return record if parent is record.parent else record.model_copy(update={"parent": parent})
        kept: dict[str, Any] = {}
        overflow: dict[str, Any] = {}
        for key, value in values.items():
            name = RENAMED_DATA_FIELD if key == OVERFLOW_FIELD else key
            if name not in kept and (name in names or self._admit(names, name)):
                kept[name] = value
            elif value is not None:
                overflow[key] = value
        if overflow:
            kept[OVERFLOW_FIELD] = overflow
            self.overflowed[record.source] = self.overflowed.get(record.source, 0) + 1
        return record.model_copy(update={"values": kept, "parent": parent})

    def _admit(self, names: set[str], name: str) -> bool:
        if len(names) >= self.limit:
            return False
        names.add(name)
        return True

    def _parent(self, link: ParentLink | None) -> ParentLink | None:
        """The parent's values a child carries (for key lookup), cut to the parent's admitted names."""
        if link is None:
            return None
        names = self.admitted.get(link.source)
        if names is None:
            if len(link.values) <= self.limit:
                return link
            keep = dict(list(link.values.items())[: self.limit])
        else:
            if all(k in names for k in link.values):
                return link
            keep = {k: v for k, v in link.values.items() if k in names}
        return link.model_copy(update={"values": keep})
