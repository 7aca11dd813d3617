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


def test_exact_duplicate_rows_leave_the_key_with_their_count() -> None:
    rows = [{"id": i, "name": f"n{i}", "qty": i % 4} for i in range(1, 41)]
    dirty = [*rows[:10], dict(rows[3]), dict(rows[7]), *rows[10:]]  # two rows twice
    k = infer_key(prof("item", dirty))
    assert k is not None and k.fields == ["id"]
    assert k.evidence["unique"] == "proven modulo duplicate rows" and k.evidence["duplicate_rows"] == 2
    # a repeated id on rows that differ is not a duplicate row: a near-unique key, reported as such
    clash = [*rows, {"id": 5, "name": "other", "qty": 9}]
    n = infer_key(prof("item", clash))
    assert n is not None and n.fields == ["id"] and n.evidence["unique"] == "near-unique"
    assert n.evidence["near_unique"]["conflicts"] == 1 and n.confidence <= 0.6


def test_composite_key_over_non_id_columns_prefers_the_referenced_pair() -> None:
    # (batch, slot) and (shelf, slot) are both unique; only (batch, slot) is referenced by another source
    parent = [
        {"batch": "AB"[i // 10], "slot": i % 10, "shelf": i % 7, "title": f"t {i} x"} for i in range(20)
    ]
    child = [{"line": j, "batch": "AB"[(j * 7) % 20 // 10], "slot": (j * 7) % 10} for j in range(60)]
    profiles = {"box": prof("box", parent), "line": prof("line", child)}
    k = infer_key(profiles["box"], profiles)
    assert k is not None and sorted(k.fields) == ["batch", "slot"]
    assert k.evidence["referenced_by"] == "line"
    assert infer_key(profiles["box"]) is not None  # without the other sources it still finds a key


def test_key_survives_shuffled_columns() -> None:
    rows = [{"note": f"n {i} y", "qty": i % 3, "OrderId": 100 + i} for i in range(30)]
    k = infer_key(prof("Order", rows))
    assert k is not None and k.fields == ["OrderId"]
