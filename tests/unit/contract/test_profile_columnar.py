"""The columnar (pyarrow) fast path gives the same profiles as the record readers."""

from __future__ import annotations

from pathlib import Path

from esc.contract.profile import SourceProfile
from esc.contract.records import Record
from esc.streams.discover import DISCOVERY_CAPS
from esc.streams.readers import read, scan
from esc.streams.readers.columnar import profile_csv_columnar

CSV = """id;code;price;when;note;email;flag
1;01581;0.99;2009-01-01;plain words here;a@b.org;true
2;01582;17.00;2009-01-02; leading space;c@d.org;false
3;;17;2009-01-03;"quoted; with delimiter";;true
4;A-1;1.50;;"A long sentence is here. Another sentence follows, so this one counts as text for sure!";x@y.com;
5;01581;-2.25;2010-12-31;plain words here;a@b.org;true
"""


def _record_profile(path: Path) -> SourceProfile:
    (sf,) = scan(path)
    recs = [r for r in read(sf) if isinstance(r, Record)]
    return SourceProfile.of_records(sf.source, recs, DISCOVERY_CAPS)


def test_columnar_equals_record_path(tmp_path: Path) -> None:
    f = tmp_path / "things.csv"
    f.write_text(CSV * 1, encoding="utf-8")
    (sf,) = scan(f)
    fast = profile_csv_columnar(sf, DISCOVERY_CAPS)
    assert isinstance(fast, SourceProfile)
    slow = _record_profile(f)
    assert fast.to_dict() == slow.to_dict()
    assert fast.to_field_spec("code").type == "string"  # leading zeros keep codes as strings
    assert fast.to_field_spec("price").type == "decimal"


def test_columnar_declines_ragged_files(tmp_path: Path) -> None:
    f = tmp_path / "bad.csv"
    f.write_text("a,b\n1,2\n3\n4,5\n", encoding="utf-8")
    (sf,) = scan(f)
    out = profile_csv_columnar(sf, DISCOVERY_CAPS)
    assert isinstance(out, list) and "declined" in out[0].reason


def test_columnar_equals_record_path_on_mostly_distinct_text(tmp_path: Path) -> None:
    lines = ["k,comment,qty,phone"]
    for i in range(3000):
        comment = f"carefully {i} final deposits" if i % 7 else f" {i}% off, see http://x.org/{i}"
        lines.append(f'{i},"{comment}",{i % 50},+1 (555) {i:04d}')
    f = tmp_path / "big.csv"
    f.write_text("\n".join(lines) + "\n", encoding="utf-8")
    (sf,) = scan(f)
    fast = profile_csv_columnar(sf, DISCOVERY_CAPS)
    assert isinstance(fast, SourceProfile)
    assert fast.to_dict() == _record_profile(f).to_dict()
    assert fast.to_field_spec("phone").semantic == "phone"


def test_byte_ranges_merge_to_the_whole_file(tmp_path: Path) -> None:
    from esc.streams.readers.columnar import plan_csv, profile_csv_range, split_ranges

    lines = ["order_id,line_no,qty,comment"]
    lines += [f"{o},{n},{(o * n) % 9},c{o % 13}" for o in range(1, 700) for n in range(1, 1 + o % 4 + 1)]
    f = tmp_path / "lines.csv"
    f.write_text("\n".join(lines) + "\n", encoding="utf-8")
    (sf,) = scan(f)
    plan = plan_csv(sf)
    assert not isinstance(plan, list)
    ranges = split_ranges(sf, plan, 3)
    assert len(ranges) == 3 and ranges[0][0] == plan.data_start and ranges[-1][1] == plan.size
    parts = [profile_csv_range(sf, plan, a, b, DISCOVERY_CAPS) for a, b in ranges]
    assert all(isinstance(p, SourceProfile) for p in parts)
    merged = parts[0]
    for p in parts[1:]:
        merged = merged.merge(p)  # type: ignore[union-attr,arg-type]
    whole = profile_csv_columnar(sf, DISCOVERY_CAPS)
    assert isinstance(whole, SourceProfile) and isinstance(merged, SourceProfile)
    assert merged.records == whole.records == len(lines) - 1
    assert merged.to_dict() == whole.to_dict()
    assert merged.to_dict() == _record_profile(f).to_dict()
