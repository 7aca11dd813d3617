from __future__ import annotations

from collections import defaultdict

from esc.agents.profiler import STREAM_CAPS, ProfileDelta, Watermark, profile_batch, records_from_envelopes
from esc.contract.profile import SourceProfile
from esc.contract.records import Record
from esc.streams.events import RecordEnvelope
from tests.unit.agents.conftest import Pack


def test_records_round_trip_through_envelopes(chinook: Pack) -> None:
    back = records_from_envelopes(chinook.envelopes)
    assert len(back) == len(chinook.records)
    for a, b in zip(chinook.records, back, strict=True):
        assert (b.source, b.format, b.values, b.array_path) == (a.source, a.format, a.values, a.array_path)
        assert b.location == a.location
        assert (b.parent is None) == (a.parent is None)
        if a.parent is not None and b.parent is not None:
            assert (b.parent.source, b.parent.values) == (a.parent.source, a.parent.values)
            assert b.parent.location.render() == a.parent.location.render()


def test_batch_deltas_merge_to_the_whole_source_profile(chinook: Pack) -> None:
    by_source: dict[str, list[Record]] = defaultdict(list)
    for r in chinook.records:
        by_source[r.source].append(r)
    merged: dict[str, SourceProfile] = {}
    envs = chinook.envelopes
    for i in range(0, len(envs), 700):
        for d in profile_batch(envs[i : i + 700], {"stream": "esc.records/0", "offset": i + 699, "first": i}):
            assert d.watermark == Watermark(stream="esc.records/0", offset=i + 699, first=i)
            again = ProfileDelta.model_validate_json(d.model_dump_json())
            p = again.source_profile()
            merged[d.source] = p if d.source not in merged else merged[d.source].merge(p)
    assert set(merged) == set(by_source)
    for s, recs in by_source.items():
        whole = SourceProfile.of_records(s, recs, STREAM_CAPS)
        assert merged[s].records == whole.records == len(recs)
        exact = {"top_values", "examples"}  # Misra-Gries counters and example picks depend on batch order
        assert [f.model_dump(exclude=exact) for f in merged[s].field_specs()] == [
            f.model_dump(exclude=exact) for f in whole.field_specs()
        ], s
        assert (merged[s].parent is None) == (whole.parent is None)
        if whole.parent is not None and merged[s].parent is not None:
            assert merged[s].parent == whole.parent


def test_delta_meta_counts_files_and_links(chinook: Pack) -> None:
    deltas = {d.source: d for d in profile_batch(chinook.envelopes, Watermark(stream="s", offset=1))}
    line = deltas["Invoice.InvoiceLine"]
    assert line.meta.parent == "Invoice" and line.meta.array_path == "$[*].InvoiceLine"
    assert line.meta.file_records == {"Invoice.json": 2240} and line.records == 2240
    assert deltas["Artist"].meta.format == "csv" and deltas["Artist"].meta.files == ["Artist.csv"]


def test_pushed_records_have_no_files_and_deleted_are_not_observed() -> None:
    envs = [RecordEnvelope(source="orders", payload={"id": i, "total": i * 1.5}) for i in range(5)] + [
        RecordEnvelope(source="orders", record_id="x", payload={}, deleted=True)
    ]
    (d,) = profile_batch(envs, Watermark(stream="esc.records/2", offset=9))
    assert d.records == 5 and d.meta.files == [] and d.meta.format == "topic"
    assert d.source_profile().records == 5
