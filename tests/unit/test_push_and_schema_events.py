from __future__ import annotations

from esc.contract.model import Contract, SourceSpec
from esc.contract.serde import dump_json
from esc.streams.events import DeadLetter, RecordEnvelope
from esc.streams.push import envelopes_from_lines
from esc.streams.schema_events import latest_key, parse_contract, version_key


def test_push_lines_become_envelopes_or_dead_letters_with_reasons() -> None:
    lines = [
        b'{"id": 1, "name": "a"}\n',
        b"\n",
        b"{not json}\n",
        b"[1, 2]\n",
        b'[{"id": 2}, {"id": 3}]\n',
        b'{"name": "no id"}\n',
        b"\xff\xfe\n",
    ]
    out = list(envelopes_from_lines("things", lines, id_field="id"))
    good = [o for o in out if isinstance(o, RecordEnvelope)]
    dead = [o for o in out if isinstance(o, DeadLetter)]
    assert [g.record_id for g in good] == ["1", "2", "3"]
    assert all(g.source == "things" for g in good)
    reasons = [d.reason.split(":")[0] for d in dead]
    assert reasons == [
        "invalid json",
        "invalid record",
        "invalid record",
        "missing record id",
        "invalid json",
    ]
    assert dead[0].original == "{not json}\n"
    assert dead[-1].original_encoding == "base64"


def test_push_without_id_field_uses_content_ids() -> None:
    out = list(envelopes_from_lines("s", [b'{"a": 1}', b'{"a": 1}']))
    assert isinstance(out[0], RecordEnvelope) and isinstance(out[1], RecordEnvelope)
    assert out[0].resolved_id() == out[1].resolved_id()


def test_contract_round_trips_through_topic_value_and_keys_are_distinct() -> None:
    c = Contract(version=4, sources={"A": SourceSpec(format="csv", identity_key=["id"])})
    assert parse_contract(dump_json(c).encode()).sources["A"].identity_key == ["id"]
    assert latest_key("esc") == b"esc" and version_key("esc", 4) == b"esc@v4"


def test_a_pretty_printed_array_is_one_document_and_an_oversized_record_is_dead_lettered() -> None:
    import json

    from esc.streams.push import DLQ_ORIGINAL_BYTES, envelopes_from_bytes

    big = {"id": 2, "blob": "x" * (5 << 20)}  # 5 MB: over the 1 MiB record limit
    data = json.dumps([{"id": 1, "name": "a"}, big, {"id": 3}, 7], indent=2).encode()
    out = list(envelopes_from_bytes("things", data, id_field="id"))
    assert [o.record_id for o in out if isinstance(o, RecordEnvelope)] == ["1", "3"]
    dead = [o for o in out if isinstance(o, DeadLetter)]
    assert [d.reason.split(":")[0] for d in dead] == ["record too large", "invalid record"]
    assert "item 2: 5243" in dead[0].reason and dead[0].location == "2"
    assert len(dead[0].original) == DLQ_ORIGINAL_BYTES  # the dead letter itself stays small
    one = list(envelopes_from_bytes("things", b'{\n  "id": 9,\n  "name": "one object"\n}\n', id_field="id"))
    assert [o.record_id for o in one if isinstance(o, RecordEnvelope)] == ["9"]
    lines = list(envelopes_from_bytes("things", b'{"id": 1}\n{"id": 2}\n{oops\n', id_field="id"))
    assert [type(o).__name__ for o in lines] == ["RecordEnvelope", "RecordEnvelope", "DeadLetter"]
    assert lines[2].reason.startswith("invalid json: line 3")  # type: ignore[union-attr]
