"""Field and source profiles: merge is commutative, associative and equal to profiling the concatenation
(exactly while under the caps, within sketch error after); JSON round trip; catalog entries."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from esc.contract.field_profile import Caps, FieldProfile
from esc.contract.profile import SourceProfile
from esc.contract.records import Location, ParentLink, Record, field_id

scalars = st.one_of(
    st.none(),
    st.integers(-5, 40),
    st.sampled_from(
        ["a", "b", "17", "17.50", "0.99", "2009-01-01", "x@y.org", "true", "01581", "", " spaced "]
    ),
    st.floats(min_value=-3, max_value=3, allow_nan=False).map(lambda f: round(f, 2)),
    st.booleans(),
)
batches = st.lists(scalars, max_size=40)
SMALL = Caps(exact=64, combo=64, sample_k=16, top_k=64, examples=3, hll_p=8)


def _sig(p: FieldProfile) -> dict[str, Any]:
    return p.to_dict()


@settings(max_examples=150, deadline=None)
@given(batches, batches, batches)
def test_field_merge_commutative_associative_and_equal_to_concat(
    a: list[Any], b: list[Any], c: list[Any]
) -> None:
    pa_, pb, pc_ = (FieldProfile.of("f", x, caps=SMALL) for x in (a, b, c))
    assert _sig(pa_.merge(pb)) == _sig(pb.merge(pa_))
    assert _sig(pa_.merge(pb).merge(pc_)) == _sig(pa_.merge(pb.merge(pc_)))
    assert _sig(pa_.merge(pb).merge(pc_)) == _sig(FieldProfile.of("f", a + b + c, caps=SMALL))
    assert _sig(pa_.observe(b)) == _sig(pa_.merge(pb))


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 10_000), min_size=0, max_size=400), st.integers(1, 4))
def test_field_merge_over_caps_stays_within_error(xs: list[int], parts: int) -> None:
    caps = Caps(exact=32, sample_k=32, top_k=8, hll_p=10)
    chunks = [xs[i::parts] for i in range(parts)]
    merged = FieldProfile.of("n", chunks[0], caps=caps)
    for ch in chunks[1:]:
        merged = merged.merge(FieldProfile.of("n", ch, caps=caps))
    whole = FieldProfile.of("n", xs, caps=caps)
    assert merged.nonnull == whole.nonnull == len(xs)
    assert merged.hll == whole.hll and merged.sample == whole.sample
    assert merged.num_min == whole.num_min and merged.num_max == whole.num_max
    truth = len(set(xs))
    assert abs(merged.distinct - truth) <= max(3, 4 * merged.hll.relative_error * truth)


def test_field_profile_reads() -> None:
    p = FieldProfile.of("Price", ["0.99", "1.99", "0.99", None, "17"])
    assert p.physical == "decimal"
    assert p.nonnull == 4
    assert p.distinct == 3 and p.distinct_exact
    assert p.num_min == 0.99 and p.num_max == 17
    assert p.top.top(1) == [(0.99, 2)]
    t = FieldProfile.of(
        "Note", ["short", "A long sentence here. And another one follows it, making it text."]
    )
    assert t.physical == "text"
    assert t.len_min == 5
    d = json.loads(json.dumps(p.to_dict()))
    assert FieldProfile.from_dict(d) == p


def _rows(n: int, start: int = 0) -> list[dict[str, Any]]:
    return [
        {
            "OrderId": i // 3,
            "LineNo": i % 3,
            "Qty": (i * 7) % 5,
            "Email": f"u{i % 9}@example.com",
            "Note": None,
        }
        for i in range(start, start + n)
    ]


def test_source_profile_merge_equals_whole_and_round_trips() -> None:
    rows = _rows(90)
    a = SourceProfile.of_rows("Line", rows[:40], caps=SMALL)
    b = SourceProfile.of_rows("Line", rows[40:], caps=SMALL)
    whole = SourceProfile.of_rows("Line", rows, caps=SMALL)
    assert a.merge(b) == b.merge(a) == whole
    combo = whole.combo(["OrderId", "LineNo"])
    assert combo is not None and combo.columns == ("LineNo", "OrderId")  # columns sorted by name
    assert combo.rows == 90
    assert combo.exact.hashes is None  # 90 tuples > cap 64: distinct is estimated from HLL from here on
    exact = SourceProfile.of_rows("Line", rows).combo(["LineNo", "OrderId"])
    assert exact is not None and exact.exact.hashes is not None and exact.distinct == 90
    # ids first, then the other key-typed columns (Qty int, Email string); the all-null Note is no candidate
    assert set(whole.combos) == {
        ("LineNo", "OrderId"), ("OrderId", "Qty"), ("Email", "OrderId"), ("LineNo", "Qty"), ("Email", "LineNo"),
        ("Email", "Qty"), ("LineNo", "OrderId", "Qty"), ("Email", "LineNo", "OrderId"), ("Email", "OrderId", "Qty"),
        ("Email", "LineNo", "Qty"), ("\x00row",),
    }  # fmt: skip
    rows_sketch = whole.row_sketch()
    assert rows_sketch is not None and rows_sketch.rows == 90
    assert SourceProfile.from_dict(json.loads(json.dumps(whole.to_dict()))) == whole
    # a merge never changes its inputs
    before = a.to_dict()
    a.merge(b)
    assert a.to_dict() == before


def test_field_spec_is_a_catalog_entry() -> None:
    p = SourceProfile.of_rows("Line", _rows(30))
    spec = p.to_field_spec("Email")
    assert spec.id == field_id("Line", "Email") and spec.path == "Email"
    assert spec.type == "string" and spec.semantic == "email"
    assert spec.count == 30 and spec.null_rate == 0.0
    assert spec.distinct == 9 and 0 < spec.uniqueness < 1
    assert spec.examples and spec.top_values
    assert p.to_field_spec("Note").type == "null" and p.to_field_spec("Note").null_rate == 1.0
    assert p.to_field_spec("OrderId").semantic == "identifier"


def test_nested_child_paths_and_parent_stats() -> None:
    recs = []
    for inv in range(5):
        link = ParentLink(
            source="Invoice", location=Location(file="i.json"), values={"InvoiceId": inv, "Total": 9}
        )
        for line in range(3):
            recs.append(
                Record(
                    source="Invoice.InvoiceLine",
                    format="json",
                    values={"InvoiceLineId": inv * 3 + line, "InvoiceId": inv, "Quantity": 1},
                    location=Location(file="i.json", json_path=f"$[{inv}].InvoiceLine[{line}]"),
                    parent=link,
                    array_path="$[*].InvoiceLine",
                )
            )
    p = SourceProfile.of_records("Invoice.InvoiceLine", recs)
    assert p.parent is not None and p.parent.parent == "Invoice" and p.parent.rows == 15
    equal = {c: n for c, pk, n in p.parent.pairs() if pk == "InvoiceId"}
    assert equal["InvoiceId"] == 15 and equal["Quantity"] == 3  # Quantity 1 equals InvoiceId 1 by chance
    spec = p.to_field_spec("Quantity")
    assert spec.path == "InvoiceLine[*].Quantity"
    assert spec.id == field_id("Invoice.InvoiceLine", "InvoiceLine[*].Quantity")
    half = SourceProfile.of_records("Invoice.InvoiceLine", recs[:7]).merge(
        SourceProfile.of_records("Invoice.InvoiceLine", recs[7:])
    )
    assert half == p
