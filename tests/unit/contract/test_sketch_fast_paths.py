"""The fast paths of the sketches give exactly what the plain ones give: leading zeros from float exponents, the
merge of sorted sets, the smallest distinct values by selection, tuple sketches of batches too large for an exact
set, case folding of codes read only where a value may change (columnar vs record path), bounded tuple sketches."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
from hypothesis import given
from hypothesis import strategies as st

from esc.contract.combos import ComboProfile, combo_cap
from esc.contract.field_profile import Caps
from esc.contract.hash_arrow import hash_str_array
from esc.contract.hashing import _hash_str, merge_sorted_unique, smallest_distinct, sorted_unique
from esc.contract.profile import SourceProfile
from esc.contract.records import Record
from esc.contract.sketches import HyperLogLog, _clz64
from esc.streams.discover import DISCOVERY_CAPS
from esc.streams.readers import read, scan
from esc.streams.readers.columnar import profile_csv_columnar

U64 = st.integers(min_value=0, max_value=2**64 - 1)


def _clz_reference(x: int) -> int:
    return 64 - x.bit_length()


@given(st.lists(U64, max_size=200))
def test_leading_zeros_equal_the_bit_length(xs: list[int]) -> None:
    edges = [0, 1, 2**31, 2**32 - 1, 2**32, 2**53 - 1, 2**53 + 1, 2**63, 2**64 - 1]
    a = np.array(xs + edges, dtype=np.uint64)
    assert _clz64(a).tolist() == [_clz_reference(x) for x in xs + edges]


def test_hll_registers_do_not_depend_on_duplicates_or_order() -> None:
    rng = np.random.default_rng(7)
    h = rng.integers(0, 2**63, 50_000, dtype=np.int64).view(np.uint64) * np.uint64(3)
    dup = np.concatenate([h, h[:20_000]])
    rng.shuffle(dup)
    assert HyperLogLog.empty(12).add(dup) == HyperLogLog.empty(12).add(sorted_unique(h))


@given(st.lists(U64, max_size=300), st.lists(U64, max_size=300))
def test_merge_of_sorted_sets_is_their_union(xs: list[int], ys: list[int]) -> None:
    a, b = sorted_unique(np.array(xs, np.uint64)), sorted_unique(np.array(ys, np.uint64))
    assert merge_sorted_unique(a, b).tolist() == sorted(set(xs) | set(ys))


@given(st.lists(st.integers(min_value=0, max_value=60), max_size=400), st.integers(min_value=1, max_value=40))
def test_smallest_distinct_by_selection(xs: list[int], k: int) -> None:
    a = np.array(xs, np.uint64)
    assert smallest_distinct(a, k).tolist() == sorted(set(xs))[:k]


def test_smallest_distinct_hashes_of_a_large_batch() -> None:
    rng = np.random.default_rng(5)
    for distinct in (3, 700, 50_000):  # few values (found by hashing), many repeats, nearly all distinct
        h = rng.integers(0, distinct, 60_000).astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15) + np.uint64(11)
        assert smallest_distinct(h, 512).tolist() == sorted_unique(h)[:512].tolist()


def test_a_batch_too_large_for_an_exact_set_gives_the_same_sketches() -> None:
    caps = Caps(exact=64, combo=1 << 20, sample_k=16, hll_p=8)
    rng = np.random.default_rng(3)
    h = rng.integers(0, 500, 2_000).astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    fast = ComboProfile.of(("a", "b"), h, caps, cap=64)  # 2,000 tuples > 64 + 1: no sort
    u = sorted_unique(h)
    assert fast.exact.hashes is None and fast.dups is None and fast.rows == 2_000
    assert fast.hll == HyperLogLog.empty(8).add(u)
    assert fast.sample.hashes.tolist() == u[:16].tolist()


def test_tuple_sketches_are_bounded_per_combination() -> None:
    caps = Caps(exact=100, combo=10_000)
    assert combo_cap(("order_id", "line_no"), caps) == 10_000  # a pair of ids: a large table's composite key
    assert combo_cap(("order_id", "quantity"), caps) == 100
    assert combo_cap(("a_id", "b_id", "c_id"), caps) == 100
    rows = [{"order_id": i // 4, "line_no": i % 4, "quantity": i % 7, "ship": f"d{i % 300}"} for i in range(5_000)]
    p = SourceProfile.of_rows("lines", rows, caps=caps)
    kept = {cols: len(c.exact.hashes) for cols, c in p.combos.items() if c.exact.hashes is not None}
    assert kept == {("line_no", "order_id"): 5_000, ("\x00row",): 5_000}  # the rest are estimates
    assert all(c.hll.estimate() > 0 for c in p.combos.values())


CODES = """code;label;n
alfki;Alfreds things;1
ALFKI;Alfreds things;2
  anatr  ;x;3
BERGS;y;4
straße1;z;5
Éclair12;z;6
ab cdef;w;7
\x1cqwerty;v;8
QWERTY\x0b;v;9
a\x0bbcdef;u;10
12345678;t;11
2020-01-02;s;12
ok-code-9;r;13
"""


def test_case_folding_reads_only_what_may_change_and_equals_the_record_path(tmp_path: Path) -> None:
    f = tmp_path / "codes.csv"
    f.write_text(CODES * 300, encoding="utf-8")
    (sf,) = scan(f)
    fast = profile_csv_columnar(sf, DISCOVERY_CAPS)
    assert isinstance(fast, SourceProfile)
    recs = [r for r in read(sf) if isinstance(r, Record)]
    slow = SourceProfile.of_records(sf.source, recs, DISCOVERY_CAPS)
    assert fast.to_dict() == slow.to_dict()
    folded, _ = fast.fields["code"].folded()
    raw = fast.fields["code"].exact
    assert folded.hashes is not None and raw.hashes is not None
    assert len(folded.hashes) < len(raw.hashes)  # alfki = ALFKI, anatr, straße1 ... fold onto one another


@given(st.lists(st.text(max_size=30), max_size=60), st.integers(min_value=0, max_value=5))
def test_strings_hashed_from_arrow_buffers_equal_the_scalar_hash(xs: list[str], cut: int) -> None:
    xs = [x.encode("utf-8", "replace").decode("utf-8") for x in xs]  # what Arrow can hold: valid UTF-8
    want = [_hash_str(x) for x in xs]
    for typ in (pa.string(), pa.large_string()):
        arr = pa.array(xs, typ)
        assert hash_str_array(arr).tolist() == want
        assert hash_str_array(arr.slice(cut)).tolist() == want[cut:]  # an array that starts inside its buffers


def test_text_read_only_where_it_may_be_text_equals_the_record_path(tmp_path: Path) -> None:
    pad = "word " * 14  # 70 characters: between plain strings and certain text
    kinds = [
        "no sentence end at all {i}",
        "one end. then more {i}",
        "two ends. here! {i}",
        "a number 3.14 and 2.71 are no ends {i}",
        "ends at the very end {i}.",
        "inner\nnewline {i}",
        "question? and answer. {i}",
    ]
    rows = ["id,note"]
    for i in range(700):
        note = pad + kinds[i % len(kinds)].format(i=i)
        if i % 11 == 0:
            note = "\n" + note + "\n"  # newlines only around the value: stripped away
        rows.append(f'{i},"{note}"')
    f = tmp_path / "notes.csv"
    f.write_text("\n".join(rows) + "\n", encoding="utf-8")
    (sf,) = scan(f)
    fast = profile_csv_columnar(sf, DISCOVERY_CAPS)
    assert isinstance(fast, SourceProfile)
    slow = SourceProfile.of_records(sf.source, [r for r in read(sf) if isinstance(r, Record)], DISCOVERY_CAPS)
    assert fast.to_dict() == slow.to_dict()
    assert set(fast.fields["note"].types) == {"string", "text"}  # both kinds were there to tell apart
