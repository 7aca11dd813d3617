"""Identity keys: single id-like columns, composites, association tables, estimated uniqueness."""

from __future__ import annotations

from typing import Any

from esc.contract.field_profile import Caps
from esc.contract.keys import infer_key, junction_key
from esc.contract.profile import SourceProfile


def prof(name: str, rows: list[dict[str, Any]], caps: Caps | None = None) -> SourceProfile:
    return SourceProfile.of_rows(name, rows, caps=caps or Caps())


def test_single_id_column_beats_other_unique_columns() -> None:
    rows = [{"Email": f"u{i}@x.org", "CustomerId": i + 1, "Name": f"n{i}"} for i in range(50)]
    k = infer_key(prof("Customer", rows))
    assert k is not None and k.fields == ["CustomerId"]
    assert k.evidence["unique"] == "proven" and k.evidence["names_source"] is True
    assert k.confidence > 0.9


def test_nullable_or_repeated_columns_are_not_keys() -> None:
    rows = [{"id": i if i != 3 else None, "code": i % 5, "v": float(i)} for i in range(20)]
    k = infer_key(prof("t", rows))
    assert k is None or k.fields != ["id"]


def test_composite_key_when_no_single_column_is_unique() -> None:
    rows = [{"PlaylistId": p, "TrackId": t} for p in range(1, 6) for t in range(1, 40, p)]
    k = infer_key(prof("PlaylistTrack", rows))
    assert k is not None and k.fields == ["PlaylistId", "TrackId"]


def test_composite_prefers_id_like_pair_and_minimality() -> None:
    rows = [
        {"l_orderkey": o, "l_partkey": (o * 7 + n) % 3, "l_linenumber": n, "l_quantity": (o + n) % 4}
        for o in range(1, 60)
        for n in range(1, 1 + o % 5 + 1)
    ]
    k = infer_key(prof("lineitem", rows))
    assert k is not None and k.fields == ["l_orderkey", "l_linenumber"]


def test_key_uniqueness_estimated_past_the_exact_cap() -> None:
    caps = Caps(exact=64, combo=64)
    rows = [{"order_id": i, "amount": i % 7} for i in range(5000)]
    k = infer_key(prof("orders", rows, caps))
    assert k is not None and k.fields == ["order_id"]
    assert k.evidence["unique"].startswith("estimated") and k.confidence < 0.95


def test_association_table_key_is_its_foreign_key_columns() -> None:
    rows = [
        {"film_id": f, "category_id": f % 4 + 1, "last_update": "2006-02-15 05:07:09"} for f in range(1, 100)
    ]
    p = prof("film_category", rows)
    single = infer_key(p)
    assert single is not None and single.fields == ["film_id"]  # unique on its own in this data
    j = junction_key(p, ["film_id", "category_id"], single)
    assert j is not None and j.fields == ["film_id", "category_id"]
    assert j.evidence["replaces"] == ["film_id"]
    # a table with a descriptive column is not an association table
    rows2 = [{**r, "note": f"x{r['film_id']}"} for r in rows]
    assert junction_key(prof("fc2", rows2), ["film_id", "category_id"], single) is None
