"""Mergeable profiles of sources: per-field profiles, key-candidate column combinations, and parent links.

``SourceProfile.of_records`` profiles a batch of records; ``merge`` returns a new profile and is commutative and
associative (exactly while the exact sets stay under their caps, within sketch error after); ``to_dict`` /
``from_dict`` give a JSON-able form for a compacted Kafka table; ``to_field_spec`` gives the catalog entry.

Key candidates: for the columns whose names look like ids (plus the first column), every ordered pair and
triple gets a :class:`ComboProfile` (exact set of hashed tuples up to ``caps.combo`` for pairs and
``caps.exact`` for triples, then HLL), so composite uniqueness can be proven or estimated later.
Nested children also keep :class:`ParentStats`: how often each child column equals each parent column.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from esc.contract.field_profile import DEFAULT_CAPS, Caps, FieldProfile
from esc.contract.model import FieldSpec
from esc.contract.records import Record, field_id
from esc.contract.semantic import FieldStats, id_word, semantic_of
from esc.contract.sketches import BottomK, ExactSet, HyperLogLog, combine_hashes, hash_value, sorted_unique

MAX_KEY_COLUMNS = 6
"""Id-like columns (by position) that take part in composite key candidates."""
MAX_PARENT_COLUMNS = 32


@dataclass(frozen=True, eq=False)
class ComboProfile:
    """Tuples of one ordered column combination, over rows where all of them are non-null."""

    columns: tuple[str, ...]
    rows: int
    dup: bool  # a repeated tuple was seen (sticky); the exact set is dropped then (uniqueness is decided)
    hll: HyperLogLog
    exact: ExactSet
    sample: BottomK

    @classmethod
    def of(cls, columns: tuple[str, ...], hashes: np.ndarray, caps: Caps) -> ComboProfile:
        u = sorted_unique(hashes)
        cap = caps.combo if len(columns) <= 2 else caps.exact
        dup = len(u) < len(hashes)
        return cls(
            columns,
            len(hashes),
            dup,
            HyperLogLog.empty(caps.hll_p).add(u),
            ExactSet(cap, u if len(u) <= cap and not dup else None),
            BottomK(caps.sample_k, u[: caps.sample_k]),
        )

    def merge(self, other: ComboProfile) -> ComboProfile:
        cap = min(self.exact.cap, other.exact.cap)
        dup = self.dup or other.dup
        exact: np.ndarray | None = None
        if not dup and self.exact.hashes is not None and other.exact.hashes is not None:
            u = sorted_unique(np.concatenate([self.exact.hashes, other.exact.hashes]))
            dup = len(u) < len(self.exact.hashes) + len(other.exact.hashes)
            exact = u if len(u) <= cap and not dup else None
        return ComboProfile(
            self.columns,
            self.rows + other.rows,
            dup,
            self.hll.merge(other.hll),
            ExactSet(cap, exact),
            self.sample.merge(other.sample),
        )

    @property
    def distinct(self) -> float:
        if self.exact.hashes is not None:
            return float(len(self.exact.hashes))
        return min(self.hll.estimate(), float(self.rows))

    def to_dict(self) -> dict[str, Any]:
        return {
            "columns": list(self.columns),
            "rows": self.rows,
            "dup": self.dup,
            "hll": self.hll.to_dict(),
            "exact": self.exact.to_dict(),
            "sample": self.sample.to_dict(),
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> ComboProfile:
        return cls(
            tuple(d["columns"]),
            int(d["rows"]),
            bool(d["dup"]),
            HyperLogLog.from_dict(d["hll"]),
            ExactSet.from_dict(d["exact"]),
            BottomK.from_dict(d["sample"]),
        )


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


def key_candidates(columns: Sequence[str]) -> list[str]:
    """Columns (in the given position order) that take part in composite key candidates."""
    out = [c for c in columns if id_word(c) is not None][:MAX_KEY_COLUMNS]
    if columns and columns[0] not in out:
        out = [columns[0], *out][:MAX_KEY_COLUMNS]
    return out


def combos_of(cands: Sequence[str]) -> list[tuple[str, ...]]:
    return [*itertools.combinations(cands, 2), *itertools.combinations(cands, 3)]


@dataclass(frozen=True, eq=False)
class SourceProfile:
    name: str
    records: int
    fields: Mapping[str, FieldProfile]
    combos: Mapping[tuple[str, ...], ComboProfile] = field(default_factory=dict)
    parent: ParentStats | None = None
    formats: tuple[str, ...] = ()

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
        cands = key_candidates(names)
        if len(cands) >= 2:
            col_hashes = {c: [hash_value(row.get(c)) for row in rows] for c in cands}
            for combo in combos_of(cands):
                cols = [col_hashes[c] for c in combo]
                ok = [i for i in range(len(rows)) if all(col[i] is not None for col in cols)]
                arrays = [np.array([col[i] for i in ok], dtype=np.uint64) for col in cols]
                hashes = combine_hashes(arrays) if ok else np.empty(0, np.uint64)
                combos[combo] = ComboProfile.of(combo, hashes, caps)
        return cls(name, len(rows), fields, combos, None, formats)

    def with_parent(self, stats: ParentStats) -> SourceProfile:
        return SourceProfile(self.name, self.records, self.fields, self.combos, stats, self.formats)

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
        )


def _empty_combo(like: ComboProfile) -> ComboProfile:
    return ComboProfile(
        like.columns,
        0,
        False,
        HyperLogLog.empty(like.hll.p),
        ExactSet(like.exact.cap, np.empty(0, np.uint64)),
        BottomK.empty(like.sample.k),
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
