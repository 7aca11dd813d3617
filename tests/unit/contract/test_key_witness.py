"""Exact repeats of key candidates over whole files (contract/key_witness.py), where the stream's sketches only
estimate: past their caps, a column that repeats on 3 of 70,000 rows looks unique to HyperLogLog."""

from __future__ import annotations

import random
from dataclasses import replace
from typing import Any

import pyarrow as pa
import pytest

from esc.agents.profiler import STREAM_CAPS
from esc.agents.source_state import SourceState
from esc.contract.key_witness import SEP, KeyWitness, table_conflicts, witnessed
from esc.contract.keys import column_uniqueness, combo_uniqueness, infer_key
from esc.contract.profile import SourceProfile
from esc.contract.profile_table import profile_table


def order_lines(orders: int = 18_000, repeats: int = 3, seed: int = 5) -> list[dict[str, Any]]:
    """Lines of orders (``line_no`` numbers an order's lines): ``item_id`` is unique but for ``repeats`` orders whose
    second line repeats the first one's item (two lines that differ in ``line_no`` and ``qty``)."""
    rnd = random.Random(seed)
    sizes = [rnd.randint(1, 7) for _ in range(orders)]
    items = list(range(1, sum(sizes) + 1))
    rnd.shuffle(items)
    rows: list[dict[str, Any]] = []
    for o, size in enumerate(sizes, start=1):
        for seq in range(1, size + 1):
            rows.append({"order_id": str(o), "item_id": str(items.pop()), "line_no": str(seq),
                         "qty": str(rnd.randint(1, 50))})  # fmt: skip
    multi = [i for i in range(1, len(rows)) if rows[i]["line_no"] == "2"]
    for i in rnd.sample(multi, repeats):
        rows[i]["item_id"] = rows[i - 1]["item_id"]
        rows[i]["qty"] = str(int(rows[i - 1]["qty"]) % 50 + 1)
    return rows


def _table(rows: list[dict[str, Any]]) -> pa.Table:
    return pa.table({c: [r[c] for r in rows] for c in rows[0]})


@pytest.fixture(scope="module")
def lines() -> list[dict[str, Any]]:
    return order_lines()


def test_witness_names_the_repeating_candidates(lines: list[dict[str, Any]]) -> None:
    w = KeyWitness()
    for i in range(0, len(lines), 500):
        w.add_records(lines[i : i + 500])
    found = w.conflicts()
    assert found == {"order_id": 1, "item_id": 1, "line_no": 1, SEP.join(["item_id", "order_id"]): 1}
    # the table path (the embedded runtime's columnar lane) says the same of the same rows
    assert table_conflicts(_table(lines)) == found


def test_witness_does_not_depend_on_batching(lines: list[dict[str, Any]]) -> None:
    rnd = random.Random(1)
    for _ in range(3):
        w = KeyWitness()
        i = 0
        while i < len(lines):
            n = rnd.randint(1, 40_000)
            w.add_records(lines[i : i + n])
            i += n
        assert w.conflicts() == table_conflicts(_table(lines))


def test_exact_duplicate_rows_are_not_repeats() -> None:
    rows = [{"id": str(i), "name": f"n{i}"} for i in range(100)]
    rows += [dict(rows[7]), dict(rows[7]), dict(rows[42])]  # the same rows again
    w = KeyWitness()
    w.add_records(rows)
    assert w.conflicts() == {}
    assert table_conflicts(_table(rows)) == {}
    rows.append({"id": "7", "name": "someone else"})
    w = KeyWitness()
    w.add_records(rows)
    assert w.conflicts() == {"id": 1}
    assert table_conflicts(_table(rows)) == {"id": 1}


def test_a_witnessed_repeat_overrules_the_estimate(lines: list[dict[str, Any]]) -> None:
    prof = profile_table("order_lines", _table(lines), "csv", STREAM_CAPS, 500)
    # past the caps the sketches estimate: 3 repeats in ~72,000 rows look unique
    assert prof.fields["item_id"].exact.hashes is None
    u = column_uniqueness(prof, "item_id")
    assert u.unique and not u.proven
    pair = prof.combo(["order_id", "item_id"])
    assert pair is not None and pair.exact.hashes is None and combo_uniqueness(pair, prof).unique
    assert infer_key(prof).fields == ["item_id"]  # type: ignore[union-attr]

    seen = replace(prof, witnessed=witnessed([table_conflicts(_table(lines))]))
    u = column_uniqueness(seen, "item_id")
    assert not u.unique and u.proven and u.conflicts >= 1
    key = infer_key(seen)
    assert key is not None and key.fields == ["order_id", "line_no"]
    assert key.evidence["unique"].startswith("estimated")


def test_profile_keeps_what_was_witnessed() -> None:
    a = SourceProfile.of_rows("s", [{"id": 1}, {"id": 2}])
    a = replace(a, witnessed={("id",): 1})
    b = SourceProfile.of_rows("s", [{"id": 3}])
    assert a.merge(b).witnessed == {("id",): 1}
    assert replace(b, witnessed={("a", "id"): 2}).merge(a).witnessed == {("a", "id"): 2, ("id",): 1}
    back = SourceProfile.from_dict(replace(a, witnessed={("a", "id"): 2}).to_dict())
    assert back.witnessed == {("a", "id"): 2}
    assert "witnessed" not in b.to_dict()  # profiles without it serialize as before


def test_source_state_counts_the_version_in_use() -> None:
    prof = SourceProfile.of_rows("s", [{"id": 1}, {"id": 2}])
    st = SourceState("s", "csv")
    st.add(prof, 2, "s.csv", "v1")
    assert st.complete("s.csv", "v1", 2, {"id": 1})
    assert st.profile.witnessed == {("id",): 1}
    back = SourceState.from_dict("s", st.to_dict(), STREAM_CAPS)
    assert back.profile.witnessed == {("id",): 1}
    # a new version collects beside the old one; its (lack of) repeats counts once it is in use
    st.add(prof, 2, "s.csv", "v2")
    st.complete("s.csv", "v2", 2, {})
    assert st.profile.witnessed == {}
    st.complete("s.csv", None, 0)
    assert st.profile.witnessed == {}
