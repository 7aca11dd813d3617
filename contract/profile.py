"""Mergeable profiles of sources: per-field profiles, key-candidate column combinations, and parent links.

``SourceProfile.of_records`` profiles a batch of records; ``merge`` returns a new profile and is commutative and
associative (exactly while the exact sets stay under their caps, within sketch error after); ``to_dict`` /
``from_dict`` give a JSON-able form for a compacted Kafka table; ``to_field_spec`` gives the catalog entry.

Column combinations (``esc.contract.combos``): pairs and triples of key-candidate columns and the whole row get
a :class:`ComboProfile` (exact set of hashed tuples up to ``caps.combo`` for the row and pairs of id-named
columns and ``caps.exact`` for the others, then HLL), so composite uniqueness and duplicate rows can be proven or estimated later.
Nested children also keep :class:`ParentStats`: how often each child column equals each parent column.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from esc.contract.combos import (
    ROW,
    ComboProfile,
    add_cells,
    combo_key,
    combos_of,
    key_candidates,
    row_combo,
)
from esc.contract.field_profile import DEFAULT_CAPS, Caps, FieldProfile
from esc.contract.model import FieldSpec
from esc.contract.records import Record, field_id
from esc.contract.semantic import FieldStats, semantic_of
from esc.contract.sketches import combine_hashes, hash_value

MAX_PARENT_COLUMNS = 32


@dataclass(frozen=True)
class ParentStats:
    """For a nested child source: its parent, the array path, and value agreement with the parent record."""

    parent: str
    array_path: str
    rows: int  # child records with a parent link
    matches: Mapping[str, int]  # "child_field\x1fparent_field" -> rows where the two are equal (canonically)

    def merge(self, other: ParentStats) -> ParentStats:
        m = dict(self.matches)
        for k, v in other.matches.items():
            m[k] = m.get(k, 0) + v
        return ParentStats(
            min(self.parent, other.parent),
            min(self.array_path, other.array_path),
            self.rows + other.rows,
            dict(sorted(m.items())),
        )

    def pairs(self) -> list[tuple[str, str, int]]:
        return [(*k.split("\x1f", 1), v) for k, v in self.matches.items()]  # type: ignore[misc]


@dataclass(frozen=True, eq=False)
class SourceProfile:
    name: str
    records: int
    fields: Mapping[str, FieldProfile]
    combos: Mapping[tuple[str, ...], ComboProfile] = field(default_factory=dict)
    parent: ParentStats | None = None
    formats: tuple[str, ...] = ()
    # key candidates (columns sorted by name) proven to repeat on rows that differ, by a reader that saw whole files
    # (contract/key_witness.py): the repeats found, a lower bound; evidence where the sketches only estimate
    witnessed: Mapping[tuple[str, ...], int] = field(default_factory=dict)

    @classmethod
    def empty(cls, name: str) -> SourceProfile:
        return cls(name, 0, {})

    @classmethod
    def of_records(cls, name: str, records: Sequence[Record], caps: Caps = DEFAULT_CAPS) -> SourceProfile:
        """Profile of one batch of records of source ``name``."""
        rows = [r.values for r in records]
        prof = cls.of_rows(name, rows, caps=caps, formats=tuple(sorted({r.format for r in records})))
        linked = [r for r in records if r.parent is not None]
        if linked:
            prof = prof.with_parent(_parent_stats(linked))
        return prof

    @classmethod
    def of_rows(
        cls,
        name: str,
        rows: Sequence[Mapping[str, Any]],
        caps: Caps = DEFAULT_CAPS,
        formats: tuple[str, ...] = (),
    ) -> SourceProfile:
        position: dict[str, int] = {}
        for row in rows:
            for i, k in enumerate(row):
                if k not in position or i < position[k]:
                    position[k] = i
        names = sorted(position, key=lambda c: (position[c], c))
        fields = {
            c: FieldProfile.of(c, (row.get(c) for row in rows), position=position[c], caps=caps)
            for c in names
        }
        combos: dict[tuple[str, ...], ComboProfile] = {}
        cands = key_candidates(names, {c: f.physical for c, f in fields.items()})
        n = len(rows)
        acc = np.zeros(n, dtype=np.uint64)
        col_hashes: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        for c in names:
            memo: dict[tuple[type, Any], int | None] = {}
            hs = np.zeros(n, dtype=np.uint64)
            valid = np.zeros(n, dtype=bool)
            for i, row in enumerate(rows):
                v = row.get(c)
                if v is None:
                    continue
                try:
                    h = (
                        memo[(type(v), v)]
                        if (type(v), v) in memo
                        else memo.setdefault((type(v), v), hash_value(v))
                    )
                except TypeError:  # lists and dicts
                    h = hash_value(v)
                if h is not None:
                    hs[i], valid[i] = h, True
            add_cells(acc, c, hs, valid)
            if c in cands:
                col_hashes[c] = (hs, valid)
        for combo in combos_of(cands):
            mask = np.logical_and.reduce([col_hashes[c][1] for c in combo])
            hashes = combine_hashes([col_hashes[c][0][mask] for c in combo]) if n else np.empty(0, np.uint64)
            combos[combo] = ComboProfile.of(combo, hashes, caps)
        if n:
            combos[ROW] = row_combo(acc, caps)
        return cls(name, len(rows), fields, combos, None, formats)

    def with_parent(self, stats: ParentStats) -> SourceProfile:
        return SourceProfile(self.name, self.records, self.fields, self.combos, stats, self.formats, self.witnessed)

    def observe(self, records: Sequence[Record], caps: Caps = DEFAULT_CAPS) -> SourceProfile:
        return self.merge(SourceProfile.of_records(self.name, records, caps))

    # ---------------------------------------------------------------------------------------------- merging
    def merge(self, other: SourceProfile) -> SourceProfile:
        if other.name != self.name:
            raise ValueError(f"cannot merge profiles of different sources: {self.name!r} and {other.name!r}")
        fields: dict[str, FieldProfile] = {}
        for n in sorted(set(self.fields) | set(other.fields)):
            a, b = self.fields.get(n), other.fields.get(n)
            fields[n] = a.merge(b) if a is not None and b is not None else a or b  # type: ignore[assignment]
        combos: dict[tuple[str, ...], ComboProfile] = {}
        for key in sorted(set(self.combos) | set(other.combos)):
            ca, cb = self.combos.get(key), other.combos.get(key)
            if ca is not None and cb is not None:
                combos[key] = ca.merge(cb)
                continue
            have, side = (ca, other) if ca is not None else (cb, self)
            assert have is not None
            if all(c in side.fields and side.fields[c].nonnull for c in key):
                continue  # the other side saw all these columns but chose other candidates: incomplete
            combos[key] = have  # the other side has no row with all of them non-null
        if self.parent is not None and other.parent is not None:
            parent: ParentStats | None = self.parent.merge(other.parent)
        else:
            parent = self.parent or other.parent
        return SourceProfile(
            self.name,
            self.records + other.records,
            fields,
            combos,
            parent,
            tuple(sorted(set(self.formats) | set(other.formats))),
            {k: self.witnessed.get(k, 0) + other.witnessed.get(k, 0)
             for k in sorted(set(self.witnessed) | set(other.witnessed))},
        )

    # ---------------------------------------------------------------------------------------------- reading
    def columns(self) -> list[str]:
        """Field names in position order (computed once: a frozen profile's fields do not change; inference asks
        for them per column pair, which on a wide file was most of its time)."""
        cached: tuple[int, list[str]] | None = self.__dict__.get("_columns")
        if cached is None or cached[0] != len(self.fields):
            cached = (len(self.fields), sorted(self.fields, key=lambda c: (self.fields[c].position, c)))
            object.__setattr__(self, "_columns", cached)
        return list(cached[1])

    def column_prefix(self) -> str:
        """The table prefix its columns share (``contract.names.column_prefix``), computed once."""
        cached: tuple[int, str] | None = self.__dict__.get("_prefix")
        if cached is None or cached[0] != len(self.fields):
            from esc.contract.names import column_prefix

            cached = (len(self.fields), column_prefix(self.columns()))
            object.__setattr__(self, "_prefix", cached)
        return cached[1]

    def combo(self, columns: Sequence[str]) -> ComboProfile | None:
        """The tuple sketch of these columns (in any order), when they were tracked."""
        return self.combos.get(combo_key(columns))

    def row_sketch(self) -> ComboProfile | None:
        """The whole-row sketch, when it covers every record (``rows - distinct`` = exact duplicate rows)."""
        r = self.combos.get(ROW)
        return r if r is not None and r.rows == self.records else None

    def null_rate(self, name: str) -> float:
        f = self.fields.get(name)
        if f is None or self.records == 0:
            return 1.0
        return 1.0 - f.nonnull / self.records

    def to_field_spec(self, name: str) -> FieldSpec:
        f = self.fields[name]
        phys = f.physical
        stats = FieldStats(
            physical=phys,
            nonnull=f.nonnull,
            distinct=f.distinct,
            hints=f.hints,
            max_length=f.len_max,
            mean_length=f.mean_length,
            mean_words=f.mean_words,
            num_min=f.num_min,
            num_max=f.num_max,
        )
        lo: Any
        hi: Any
        if phys in ("int", "float", "decimal", "bool"):
            lo, hi = f.num_min, f.num_max
        else:
            lo, hi = f.str_min, f.str_max
        path = name
        if self.parent is not None:
            key = self.parent.array_path.rsplit(".", 1)[-1]
            path = f"{key}[*].{name}"
        return FieldSpec(
            id=field_id(self.name, path),
            name=name,
            path=path,
            type=phys,
            semantic=semantic_of(name, stats),
            count=self.records,
            null_rate=round(self.null_rate(name), 6),
            distinct=round(f.distinct),
            uniqueness=round(f.uniqueness, 6),
            min=lo,
            max=hi,
            min_length=f.len_min,
            max_length=f.len_max,
            top_values=f.top.top(10),
            examples=f.examples.values(),
        )

    def field_specs(self) -> list[FieldSpec]:
        return [self.to_field_spec(c) for c in self.columns()]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SourceProfile) and self.to_dict() == other.to_dict()

    # ---------------------------------------------------------------------------------------------- storage
    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "records": self.records,
            "formats": list(self.formats),
            "fields": {n: f.to_dict() for n, f in sorted(self.fields.items())},
            "combos": [c.to_dict() for _, c in sorted(self.combos.items())],
            "parent": None
            if self.parent is None
            else {
                "parent": self.parent.parent,
                "array_path": self.parent.array_path,
                "rows": self.parent.rows,
                "matches": dict(self.parent.matches),
            },
            **({"witnessed": {"\x1f".join(k): n for k, n in sorted(self.witnessed.items())}} if self.witnessed else {}),
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], caps: Caps = DEFAULT_CAPS) -> SourceProfile:
        p = d.get("parent")
        return cls(
            d["name"],
            int(d["records"]),
            {n: FieldProfile.from_dict(f, caps) for n, f in d["fields"].items()},
            {tuple(c["columns"]): ComboProfile.from_dict(c) for c in d["combos"]},
            None
            if p is None
            else ParentStats(p["parent"], p["array_path"], int(p["rows"]), dict(p["matches"])),
            tuple(d.get("formats", ())),
            {tuple(k.split("\x1f")): int(n) for k, n in dict(d.get("witnessed") or {}).items()},
        )


def _parent_stats(records: Iterable[Record]) -> ParentStats:
    parent = array_path = None
    matches: dict[str, int] = {}
    rows = 0
    for r in records:
        assert r.parent is not None
        rows += 1
        parent = r.parent.source if parent is None else min(parent, r.parent.source)
        ap = r.array_path or ""
        array_path = ap if array_path is None else min(array_path, ap)
        pv = [(k, hash_value(v)) for k, v in list(r.parent.values.items())[:MAX_PARENT_COLUMNS]]
        for ck, cv in list(r.values.items())[:MAX_PARENT_COLUMNS]:
            ch = hash_value(cv)
            if ch is None:
                continue
            for pk, ph in pv:
                if ph == ch:
                    key = f"{ck}\x1f{pk}"
                    matches[key] = matches.get(key, 0) + 1
    return ParentStats(parent or "", array_path or "", rows, dict(sorted(matches.items())))
