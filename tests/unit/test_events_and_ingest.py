from __future__ import annotations

import base64
import json

import pytest

from esc.agents.ingest import MAX_MESSAGE_BYTES, parse
from esc.agents.metrics import MAX_SOURCE_LABELS, dlq_reason_label, source_label
from esc.agents.stores.cypher import UnsafeIdentifier, ident, to_property
from esc.streams.events import DeadLetter, RecordEnvelope


def test_envelope_id_is_content_hash_when_absent_and_stable() -> None:
    a = RecordEnvelope(source="s", payload={"x": 1, "y": "z"})
    b = RecordEnvelope(source="s", payload={"y": "z", "x": 1})
    assert a.resolved_id() == b.resolved_id()
    assert RecordEnvelope(source="s", payload={"x": 2}).resolved_id() != a.resolved_id()
    assert RecordEnvelope(source="s", record_id="r1", payload={}).key() == "s\x1fr1"


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        (b"not json at all", "invalid envelope"),
        (b'{"payload": {"a": 1}}', "invalid envelope: source"),
        (b'{"source": "s", "payload": [1, 2]}', "invalid envelope: payload"),
        (b'{"source": "s\\n", "payload": {}}', "invalid envelope: source"),
        (b'{"source": "s", "payload": {}, "surprise": 1}', "invalid envelope: surprise"),
    ],
)
def test_invalid_messages_become_dead_letters_with_reason_and_original(raw: bytes, reason: str) -> None:
    item = parse(raw)
    assert isinstance(item, DeadLetter)
    assert item.reason.startswith(reason)
    assert item.original == raw.decode()


def test_non_utf8_and_oversized_messages_keep_their_bytes() -> None:
    junk = b"\xff\xfe\x00garbage"
    dead = parse(junk)
    assert isinstance(dead, DeadLetter) and dead.original_encoding == "base64"
    assert base64.b64decode(dead.original) == junk
    big = json.dumps({"source": "s", "payload": {"t": "x" * MAX_MESSAGE_BYTES}}).encode()
    dead = parse(big)
    assert isinstance(dead, DeadLetter) and dead.reason.startswith("oversized")


def test_valid_message_parses() -> None:
    env = parse(b'{"source": "orders", "record_id": "7", "payload": {"qty": 3}}')
    assert isinstance(env, RecordEnvelope) and env.payload == {"qty": 3}


@pytest.mark.parametrize(
    ("name", "quoted"),
    [
        ("Name", "`Name`"),
        ("we`ird", "`we``ird`"),
        ("a b", "`a b`"),
        ("x`) DETACH DELETE n //", "`x``) DETACH DELETE n //`"),
    ],
)
def test_identifiers_are_backtick_escaped(name: str, quoted: str) -> None:
    assert ident(name) == quoted


def test_unsafe_identifiers_are_refused() -> None:
    for bad in ("", "a\x00b", "x" * 501):
        with pytest.raises(UnsafeIdentifier):
            ident(bad)


def test_property_values_fit_neo4j() -> None:
    assert to_property({"a": 1}) == '{"a": 1}'
    assert to_property([1, "a"]) == '[1, "a"]'
    assert to_property(["a", "b"]) == ["a", "b"]
    assert to_property(2**70) == str(2**70)
    assert to_property(True) is True


def test_source_labels_are_bounded() -> None:
    labels = {source_label(f"src-{i}") for i in range(MAX_SOURCE_LABELS + 50)}
    assert len(labels) <= MAX_SOURCE_LABELS + 1 and "_other" in labels
    assert dlq_reason_label("invalid envelope: source: bad") == "invalid envelope"


def test_a_source_with_control_characters_is_a_dead_letter() -> None:
    for bad in ("a\x1fb", "line\nbreak", "tab\t", "\x00"):
        dead = parse(json.dumps({"source": bad, "payload": {}}).encode())
        assert isinstance(dead, DeadLetter) and "control characters" in dead.reason
    assert isinstance(parse(json.dumps({"source": "ok name\x7f", "payload": {}}).encode()), RecordEnvelope)
