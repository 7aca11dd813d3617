"""Discovery on dirty variants of the public packs (``tests/data/degrade.py``): keys and foreign keys stay above
the release floors when FK columns are renamed, parents are missing, rows are duplicated, codes change case, a
key is a pair of non-id columns, or the columns are shuffled. The clean packs stay at 1.0."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from esc.streams.discover import discover
from tests.paths import RELATIONAL, degrade_module

PACKS = ("chinook", "northwind")  # sakila (2x the rows) runs in bench/discovery.py --variants all
KEY_F1, FK_F1, PRECISION = 0.95, 0.9, 0.95




def _prf(pred: set[Any], truth: set[Any], optional: set[Any]) -> tuple[float, float, float]:
    tp = len(pred & (truth | optional))
    p = tp / len(pred) if pred else 1.0
    need = truth - optional
    r = len(pred & need) / len(need) if need else 1.0
    return p, r, (2 * p * r / (p + r) if p + r else 0.0)


def score(root: Path, truth: dict[str, Any]) -> dict[str, tuple[float, float, float]]:
    c = discover(root).contract
    pk = {(s, frozenset(v.identity_key)) for s, v in c.sources.items() if v.identity_key}
    tk = {(s, frozenset(v["identity_key"])) for s, v in truth["sources"].items()}

    def sig(f: dict[str, Any]) -> tuple[Any, ...]:
        return (f["from"]["source"], tuple(f["from"]["fields"]), f["to"]["source"], tuple(f["to"]["fields"]))

    pf = {fk.signature() for fk in c.foreign_keys}
    tf = {sig(f) for f in truth["foreign_keys"]}
    unseen = {sig(f) for f in truth["foreign_keys"] if f.get("child_nonnull_rows", 1) == 0}
    return {"keys": _prf(pk, tk, set()), "fks": _prf(pf, tf - unseen, unseen)}


@pytest.mark.parametrize("variant", ["clean", *degrade_module().VARIANTS])
def test_dirty_variants_stay_above_the_floors(variant: str, tmp_path: Path) -> None:
    degrade = degrade_module()
    for pack in PACKS:
        src = RELATIONAL / pack
        if variant == "clean":
            root, truth = src / "drop", degrade.load(src).truth
        else:
            truth = degrade.degrade(src, variant, tmp_path / pack)
            root = tmp_path / pack / "drop"
        got = score(root, truth)
        kp, _, kf = got["keys"]
        fp, _, ff = got["fks"]
        if variant == "clean":
            assert (kf, ff) == (1.0, 1.0), (pack, got)
            continue
        assert kf >= KEY_F1 and kp >= PRECISION, (pack, variant, got)
        assert ff >= FK_F1 and fp >= PRECISION, (pack, variant, got)


def test_degrade_is_deterministic(tmp_path: Path) -> None:
    degrade = degrade_module()
    for run in ("a", "b"):
        degrade.degrade(RELATIONAL / "northwind", "rename+dangling+duplicates+case+shuffle", tmp_path / run)
    for f in sorted((tmp_path / "a").rglob("*")):
        if f.is_file():
            assert f.read_bytes() == (tmp_path / "b" / f.relative_to(tmp_path / "a")).read_bytes(), f
