"""``agents.types.build``: the planner's fast constructor gives the same models as ``model_construct``."""

from __future__ import annotations

from esc.agents.types import EdgeWrite, SourceRecordRef, TextObject, build


def test_build_equals_model_construct_when_every_field_is_given() -> None:
    values = {
        "type": "R",
        "from_label": "A",
        "from_key": {"a": 1},
        "to_label": "B",
        "to_key": {"b": 2},
        "contract_version": 3,
    }
    fast, slow = build(EdgeWrite, **values), EdgeWrite.model_construct(**values)
    assert fast == slow and fast.model_dump() == slow.model_dump()
    assert fast.model_fields_set == set(values)
    fast.contract_version = 4  # an ordinary, mutable model
    assert fast.model_copy().contract_version == 4


def test_build_fills_defaults_when_fields_are_missing() -> None:
    prov = build(SourceRecordRef, source="s", record_id="1")
    assert prov.location == "" and prov.file is None and prov.sid == "s\x1f1"
    text = build(TextObject, object_id="x", text="t", provenance=prov)
    assert text.vector is None and text.chunk_index == 0
