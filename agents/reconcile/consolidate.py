"""A cluster's canonical entity: every member's values under the canonical attribute names (units scaled), the
current value of each, and the conflicts, each value with the records that hold it and their time.

Current-value rule (documented in the README): values are grouped by what they mean (e-mails case-folded, phone
numbers by their national number, numbers after the unit scale, text case- and space-folded); the group holding
the most recent record by its type's time field wins (a record without a time field is older than any dated one;
file records carry no event time that could say more, since it is the time they were read); then the group more
records hold; then the one whose first record sorts first by source and record id. The value shown is the one the
most recent record of that group writes. Names are spellings, not conflicts: the fullest spelling (most letters)
is shown, the most recent on a tie. Partial records fill each other's gaps: a value only one record has is the
cluster's value.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from datetime import date, datetime
from typing import Any

from esc.agents.reconcile.model import (
    CID,
    CONFLICTS,
    MEMBER_COUNT,
    SOURCES,
    CanonicalWrite,
    Member,
    MemberRef,
    member_marker,
)
from esc.contract.er_fields import NAME_ROLES, ResolutionSpec, TypeSpec
from esc.contract.er_match import Match, name_words, norm_email, norm_phone

Entry = tuple[Any, str | None, Member]  # (value in the canonical unit, as_of, record)


def as_of(member: Member, spec: ResolutionSpec) -> str | None:
    t = spec.get(member.label)
    if t is None or t.time_field is None:
        return None
    v = member.value(t.time_field)
    if isinstance(v, datetime):
        return v.replace(tzinfo=None).isoformat(timespec="seconds")
    if isinstance(v, date):
        return v.isoformat()
    if isinstance(v, str) and v.strip():
        return v.strip().replace(" ", "T")
    return None


def _scaled(v: Any, factor: float | None) -> Any:
    if factor is None or isinstance(v, bool):
        return v
    try:
        x = float(v)
    except (TypeError, ValueError):
        return v
    if not math.isfinite(x):
        return v
    out = round(x * factor, 9)
    return int(out) if out.is_integer() and factor >= 1 else out


def unit_factor(t: TypeSpec, name: str, m: Member) -> float | None:
    """The factor from a record's value of ``name`` to the canonical unit: the contract's scale, or the one its unit
    column gives this record (a unit it does not know: no factor, the value as written)."""
    col = t.columns.get(name)
    if col is None:
        return t.scale.get(name)
    unit = m.value(col[0])
    return col[1].get(str(unit).strip().casefold()) if unit is not None else None


def meaning(role: str | None, v: Any) -> Any:
    """What a value means, for telling agreeing values from conflicting ones."""
    if role == "email":
        return norm_email(v) or str(v).strip().casefold()
    if role in ("phone", "fax"):
        return norm_phone(v) or str(v)
    if role in NAME_ROLES:
        return " ".join(sorted(name_words(v)))
    if isinstance(v, bool):
        return v
    if isinstance(v, int | float):
        return round(float(v), 6)
    if isinstance(v, datetime | date):
        return v.isoformat()
    return " ".join(str(v).split()).casefold()


def _citation(m: Member) -> dict[str, str]:
    return {"source": m.source, "record_id": m.record_id, "location": m.location}


def _newest(entries: Sequence[Entry]) -> Entry:
    """The entry of the most recent record (undated last), then the first by source and record id."""
    ordered = sorted(entries, key=lambda e: (e[2].source, e[2].record_id))
    return max(ordered, key=lambda e: e[1] or "")  # max keeps the first of equal keys


def _current(groups: list[list[Entry]]) -> list[Entry]:
    ordered = sorted(groups, key=lambda g: min((e[2].source, e[2].record_id) for e in g))
    ordered.sort(key=lambda g: len(g), reverse=True)
    ordered.sort(key=lambda g: max((e[1] or "") for e in g), reverse=True)
    return ordered[0]


def _value(v: Any) -> Any:
    if isinstance(v, datetime | date):
        return v.isoformat()
    return v


def consolidate(
    cid: str, members: Iterable[Member], spec: ResolutionSpec, links: dict[tuple[str, str], Match] | None = None
) -> CanonicalWrite:
    """The canonical entity of one cluster (``links``: the matched pairs inside it, by sorted sid pair)."""
    ms = sorted(members, key=lambda m: m.sid)
    values: dict[str, list[Entry]] = defaultdict(list)
    roles: dict[str, str] = {}
    quiet: set[str] = set()
    for m in ms:
        t = spec.get(m.label)
        if t is None:
            continue
        when = as_of(m, spec)
        by_field = {f: r for r, f in t.roles.items()}
        keys = {k for k, _ in m.key}
        for name, v in m.values:
            if v is None or (isinstance(v, str) and not v.strip()):
                continue
            canon = t.canon.get(name, name)
            values[canon].append((_scaled(v, unit_factor(t, name, m)), when, m))
            if name in by_field:
                roles[canon] = by_field[name]
            if name in keys or name == t.time_field or name in t.quiet:
                quiet.add(canon)
    props: dict[str, Any] = {}
    conflicts: list[dict[str, Any]] = []
    for canon in sorted(values):
        entries = values[canon]
        role = roles.get(canon)
        if role in NAME_ROLES:
            ordered = sorted(entries, key=lambda e: (e[2].source, e[2].record_id))
            fullest = max(ordered, key=lambda e: (len("".join(name_words(e[0]))), e[1] or ""))
            props[canon] = _value(fullest[0])
            continue
        grouped: dict[Any, list[Entry]] = defaultdict(list)
        for e in entries:
            grouped[repr(meaning(role, e[0]))].append(e)
        groups = list(grouped.values())
        props[canon] = _value(_newest(_current(groups))[0])
        if len(groups) > 1 and canon not in quiet:
            shown = []
            for g in sorted(groups, key=lambda g: max((e[1] or "") for e in g), reverse=True):
                top = _newest(g)
                shown.append({
                    "value": _value(top[0]),
                    "as_of": top[1],
                    "citations": [_citation(e[2]) for e in sorted(g, key=lambda e: (e[2].source, e[2].record_id))],
                })  # fmt: skip
            conflicts.append({"field": canon, "values": shown})
    nodes: dict[tuple[str, Any], list[Member]] = defaultdict(list)
    for m in ms:
        nodes[(m.label, m.key)].append(m)
    refs = []
    for (label, key), group in sorted(nodes.items(), key=lambda kv: (kv[0][0], repr(kv[0][1]))):
        mine = {m.sid for m in group}
        best: tuple[float, dict[str, Any]] = (1.0, {"rule": "single"}) if len(nodes) == 1 else (0.0, {})
        for (a, b), match in sorted((links or {}).items()):
            if (a in mine) != (b in mine) and match.score >= best[0]:
                best = (round(match.score, 6), {"rule": match.rule, **match.evidence})
        refs.append(MemberRef(label, dict(key), best[0], json.dumps(best[1], sort_keys=True)))
    props[CID] = cid
    props[MEMBER_COUNT] = len(nodes)
    props[SOURCES] = sorted({m.source for m in ms})
    for label in sorted({m.label for m in ms}):
        props[member_marker(label)] = sum(1 for lab, _ in nodes if lab == label)
    if conflicts:
        props[CONFLICTS] = json.dumps(conflicts, sort_keys=True, ensure_ascii=False, default=str)
    return CanonicalWrite(cid=cid, props=props, members=refs, sids=[m.sid for m in ms])
