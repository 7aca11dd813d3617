"""Embedded node identity through the endpoint memo: the memo never changes an id (``entity_id`` is the truth),
keeps values that are equal to Python but not to the graph apart (True / 1, Decimal / int), and stays bounded."""

from __future__ import annotations

from decimal import Decimal

from esc.agents.stores.cypher import to_properties
from esc.agents.stores.embedded.ids import EndpointMemo, _dumps, entity_id, key_json


def test_memo_matches_entity_id_and_keeps_types_apart() -> None:
    memo = EndpointMemo()
    keys = [{"k": 1}, {"k": True}, {"k": 1.0}, {"k": Decimal("1")}, {"k": "1"}, {"a": 2, "b": "x"}, {"b": "x", "a": 2}]
    for _ in range(2):  # the second pass reads the memo
        for key in keys:
            eid, kj, props = memo.get("L", key)
            assert eid == entity_id("L", key)
            assert kj == key_json(key)
            assert props == _dumps(to_properties(key))  # the key as a stub node's properties
    assert memo.get("L", {"k": True})[0] != memo.get("L", {"k": 1})[0]
    assert memo.get("L", {"k": 1.0})[0] == memo.get("L", {"k": 1})[0]  # 1 and 1.0 are one key, as in Cypher
    assert memo.get("L", {"k": 1})[0] != memo.get("M", {"k": 1})[0]


def test_unhashable_values_are_not_remembered_and_the_memo_is_bounded() -> None:
    memo = EndpointMemo(size=3)
    assert memo.get("L", {"k": [1, 2]})[0] == entity_id("L", {"k": [1, 2]})
    for i in range(10):
        assert memo.get("L", {"k": i})[0] == entity_id("L", {"k": i})
    assert len(memo._memo) <= 3
