"""The name index of foreign-key inference: for every column and every key, a key the column's name points at
(``name_evidence``) is among the index's candidates, so indexing changes no inferred foreign key."""

from __future__ import annotations

import csv
import json
from itertools import product
from pathlib import Path

from esc.contract.fk_names import NameIndex, name_evidence
from esc.contract.names import column_prefix

PACKS = Path(__file__).resolve().parents[2] / "data" / "eval" / "relational"

# odd shapes: table prefixes, role prefixes, relation words, person roles, compound and plural source names
ODD = {
    "customer": ["c_custkey", "c_name", "c_nationkey"],
    "orders": ["o_orderkey", "o_custkey", "o_clerk"],
    "lineitem": ["l_orderkey", "l_partkey", "l_suppkey", "l_linenumber"],
    "Employees": ["EmployeeID", "ReportsTo", "manager_staff_id", "SupportRepId"],
    "Shippers": ["ShipperID", "ShipVia"],
    "staff": ["staff_id", "approver_id"],
    "Order Details": ["OrderID", "ProductID"],
    "categories": ["category_code", "parent_category_code"],
    "people": ["person_no", "owner_ref"],
}


def _headers() -> dict[str, list[str]]:
    out = dict(ODD)
    for f in sorted(PACKS.glob("*/drop/*.*")):
        with f.open(newline="", encoding="utf-8") as fh:
            if f.suffix == ".csv":
                out[f.stem] = next(csv.reader(fh))
            elif f.suffix == ".jsonl":
                out[f.stem] = list(json.loads(fh.readline()))
            elif f.suffix == ".json":
                doc = json.load(fh)
                out[f.stem] = list((doc[0] if isinstance(doc, list) else doc).keys())
    return out


def test_index_finds_every_key_a_name_points_at() -> None:
    sources = _headers()
    assert len(sources) > 30  # the packs were read
    keys = [(s, c, column_prefix(cols)) for s, cols in sources.items() for c in cols]
    index = NameIndex(keys)
    pairs = found = 0
    for cols, (i, (target, key, t_prefix)) in product(sources.values(), enumerate(keys)):
        prefix = column_prefix(cols)
        for col in cols:
            if name_evidence(col, prefix, target, key, t_prefix) is not None:
                pairs += 1
                found += i in index.candidates(col, prefix)
    assert pairs > 500  # every rule had work to do
    assert found == pairs


def test_index_leaves_out_unrelated_keys() -> None:
    index = NameIndex([("Album", "AlbumId", ""), ("Genre", "GenreId", ""), ("Employee", "EmployeeId", "")])
    assert index.candidates("AlbumId", "") == {0}
    assert index.candidates("SupportRepId", "") == {2}  # a person role points at the person-like source
    assert index.candidates("Quantity", "") == set()
