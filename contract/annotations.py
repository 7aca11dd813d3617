"""Annotations of a contract's fields, derived from its profiles: which fields are times and at what granularity
(contract/time_marks.py), and the unit or scale of measures (contract/units.py). They are computed in the pure core
wherever entity types are derived (contract/entities.py), so every contract version carries them on its attributes
(``entities[].attributes[].time`` / ``.unit``, shown by ``esc schema --json`` / ``--yaml``), refreshed like other
statistics and never part of the version identity; the resolver and the questions read them from there.

Pure and deterministic: the same contract gives the same marks.
"""

from __future__ import annotations

from collections import defaultdict

from esc.contract.er_fields import canonical_sources
from esc.contract.model import Contract, FieldSpec, TimeMark, UnitMark
from esc.contract.semantic import tokens
from esc.contract.time_marks import time_mark
from esc.contract.units import UNIT_WORDS, column_marks, header_mark, is_measure, range_marks

Marks = tuple[TimeMark | None, UnitMark | None]


def _plain(name: str) -> str:
    words = [w for w in tokens(name) if w not in UNIT_WORDS] or tokens(name)
    return "_".join(words)


def annotate(contract: Contract) -> dict[str, Marks]:
    """Field id -> (time mark, unit mark) for every field that has one."""
    canons = canonical_sources(contract)
    out: dict[str, Marks] = {}
    units: dict[tuple[str, str], UnitMark] = {}
    ranged: dict[str, list[tuple[str, FieldSpec]]] = defaultdict(list)
    for name in sorted(contract.sources):
        src = contract.sources[name]
        c = canons.get(name)
        canon = c.canon if c is not None else {f.name: _plain(f.name) for f in src.fields}
        columns = column_marks(src, canon)
        for f in src.fields:
            mark = columns.get(f.name) or header_mark(f, canon.get(f.name, f.name))
            if mark is not None:
                units[(name, f.name)] = mark
            if c is not None and is_measure(f) and f.name not in columns:
                ranged[canon.get(f.name, f.name)].append((name, f))
    for at, mark in range_marks(ranged).items():
        said = units.get(at)
        if said is None:
            units[at] = mark
            continue
        agree = "agree" if said.scale == mark.scale else "say otherwise"
        units[at] = said.model_copy(update={"rule": f"{said.rule}; value ranges {agree}: {mark.rule}"})
    for name in sorted(contract.sources):
        for f in contract.sources[name].fields:
            time, unit = time_mark(f), units.get((name, f.name))
            if time is not None or unit is not None:
                out[f.id] = (time, unit)
    return out
