"""Composite foreign keys, nesting links and the merge of duplicate foreign keys.

A composite reference needs a child column for every column of a composite target key, each with strong name
evidence (same name, same name after the table prefix, role prefix), and the child's tuples contained in the
target's (from the column-combination sketches, whose columns are sorted by name: the child's columns must
sort in the order of the key columns they match). Under such names a reference may dangle like a single one
(``DANGLING_MIN``). A nested child references its parent through the columns that equal the parent's key in
(nearly) every child record.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from esc.contract.foreign_keys import DANGLING_MIN, MIN_CHECKED, NESTING_MIN, name_evidence
from esc.contract.keys import KeyResult
from esc.contract.model import ForeignKey
from esc.contract.names import norm
from esc.contract.profile import SourceProfile
from esc.contract.sketches import containment

COMPOSITE_ESTIMATE_MIN = 0.85


def infer_composite(
    profiles: Mapping[str, SourceProfile], keys: Mapping[str, KeyResult | None]
) -> list[ForeignKey]:
    """Composite references: every column of a composite target key matched by name, tuples contained."""
    out: list[ForeignKey] = []
    for t, key in sorted(keys.items()):
        if key is None or len(key.fields) < 2:
            continue
        tp = profiles[t]
        target_combo = tp.combo(key.fields)
        if target_combo is None:
            continue
        t_prefix = tp.column_prefix()
        for source, p in sorted(profiles.items()):
            if source == t:
                continue
            s_prefix = p.column_prefix()
            match: list[str] = []
            rules: list[str] = []
            for k in key.fields:
                best = None
                for c in p.columns():
                    ev = name_evidence(c, s_prefix, t, k, t_prefix)
                    if (
                        ev is not None
                        and ev[0] >= 0.9
                        and c not in match
                        and (best is None or ev[0] > best[0])
                    ):
                        best = (ev[0], c, ev[1])
                if best is None:
                    break
                match.append(best[1])
                rules.append(best[2])
            if len(match) != len(key.fields):
                continue
            own = keys.get(source)
            if own is not None and set(own.fields) == set(match):
                continue  # keyed alike (a sibling sharing the key): inclusion, not a reference
            pairing = dict(zip(match, key.fields, strict=True))
            if [pairing[c] for c in sorted(match)] != sorted(key.fields):
                continue  # the tuples were hashed in another column order: they cannot be compared
            combo = p.combo(match)
            if combo is None or combo.rows == 0:
                continue
            cont = containment(combo.exact, combo.sample, target_combo.exact, target_combo.sample)
            if (cont.exact and cont.ratio < DANGLING_MIN) or (
                not cont.exact and (cont.ratio < COMPOSITE_ESTIMATE_MIN or cont.checked < MIN_CHECKED)
            ):
                continue
            ev_all: dict[str, Any] = {
                "name": rules,
                "containment": round(cont.ratio, 4),
                "containment_exact": cont.exact,
                "checked_values": cont.checked,
                "target_is_identity_key": True,
                "child_rows": combo.rows,
            }
            out.append(
                ForeignKey.model_validate(
                    {
                        "from": {"source": source, "fields": match},
                        "to": {"source": t, "fields": list(key.fields)},
                        "confidence": round(min(0.99, 0.9 * (0.55 + 0.45 * cont.ratio)), 3),
                        "evidence": ev_all,
                    }
                )
            )
    return out


def infer_nesting(
    profiles: Mapping[str, SourceProfile], keys: Mapping[str, KeyResult | None]
) -> list[tuple[str, str, list[str], list[str], float]]:
    """(child, parent, child_fields, parent_fields, share) for nested children whose rows carry the parent key."""
    out = []
    for child, p in sorted(profiles.items()):
        if p.parent is None or p.parent.rows == 0:
            continue
        parent = p.parent.parent
        key = keys.get(parent)
        pairs = p.parent.pairs()
        if key is None:
            continue
        child_fields: list[str] = []
        shares: list[float] = []
        for k in key.fields:
            hits = [
                (n / p.parent.rows, c) for c, pk, n in pairs if pk == k and n / p.parent.rows >= NESTING_MIN
            ]
            if not hits:
                break
            hits.sort(key=lambda h: (-h[0], norm(h[1]) != norm(k), h[1]))
            child_fields.append(hits[0][1])
            shares.append(hits[0][0])
        if len(child_fields) == len(key.fields):
            out.append((child, parent, child_fields, list(key.fields), min(shares)))
    return out


def nesting_fks(nest: list[tuple[str, str, list[str], list[str], float]]) -> list[ForeignKey]:
    return [
        ForeignKey.model_validate(
            {
                "from": {"source": child, "fields": cf},
                "to": {"source": parent, "fields": pf},
                "confidence": round(min(0.99, 0.9 + 0.09 * share), 3),
                "evidence": {"nesting": True, "equal_to_parent_key": round(share, 4)},
            }
        )
        for child, parent, cf, pf, share in nest
    ]


def dedupe(fks: list[ForeignKey]) -> list[ForeignKey]:
    """One foreign key per signature (the most confident), evidence of the others merged in."""
    best: dict[tuple[str, tuple[str, ...], str, tuple[str, ...]], ForeignKey] = {}
    for fk in fks:
        sig = fk.signature()
        old = best.get(sig)
        if old is None:
            best[sig] = fk
            continue
        hi, lo = (fk, old) if fk.confidence > old.confidence else (old, fk)
        merged = {**lo.evidence, **hi.evidence}
        best[sig] = hi.model_copy(
            update={"evidence": merged, "confidence": max(hi.confidence, lo.confidence)}
        )
    return [best[s] for s in sorted(best)]
