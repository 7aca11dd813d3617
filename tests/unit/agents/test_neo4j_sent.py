"""The parameter lists the Neo4j store sends (``Sent``): the bytes on the wire are a plain list's, the ``repr`` the
driver builds for its debug line (whether or not debug logging is on) stays short for any batch (no server needed)."""

from __future__ import annotations

import io
from typing import Any

import pytest
from neo4j._codec.packstream import v1 as packstream

from esc.agents.stores.cypher import Sent
from tests.unit.agents.test_neo4j_batches import FakeDriver, entity, make_store
from tests.unit.agents.test_neo4j_lanes import _fact_rows, _LaneDriver


def _rows(n: int) -> list[dict[str, Any]]:
    return [
        {"key": [i, "x"], "props": {"a": 1.5, "b": "héllo", "c": [1, 2], "d": True}, "sid": f"s{i}", "e": [None, [i]]}
        for i in range(n)
    ]


def _run_line(params: dict[str, Any]) -> str:
    """What ``Bolt5x5.run`` (and every other Bolt version's) builds before it calls ``log.debug``."""
    return " ".join(map(repr, ("UNWIND $rows AS row ...", params, {})))


@pytest.mark.parametrize("encoder", ["rust", "python"])
def test_sent_is_packed_exactly_as_a_list(encoder: str) -> None:
    if encoder == "rust":
        assert packstream._rust_pack is not None, "neo4j-rust-ext (a dependency of the project) is not installed"

    def packed(value: Any) -> bytes:
        buf = io.BytesIO()
        packer = packstream.Packer(buf)
        if encoder == "rust":
            packer.pack(value)
        else:
            packer._py_pack(value, packstream.Packer._inject_hooks())
        return buf.getvalue()

    rows = _rows(300)
    assert packed({"rows": Sent(rows)}) == packed({"rows": rows})
    assert packed({"rows": Sent()}) == packed({"rows": []})


def test_what_the_store_hands_the_driver_has_a_short_repr(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[tuple[type, int, int]] = []

    class Watching(FakeDriver):
        def execute_query(self, query: str, parameters_: dict[str, Any] | None = None, **kw: Any) -> Any:
            if "UNWIND" in query:
                rows = (parameters_ or {})["rows"]
                seen.append((type(rows), len(rows), len(_run_line(parameters_ or {}))))
            return super().execute_query(query, parameters_, **kw)

    s, _ = make_store(monkeypatch, 1000, Watching())
    s.upsert_entities([entity(i) for i in range(2500)])
    assert sum(n for _, n, _ in seen) >= 2500  # every row was sent...
    assert all(t is Sent and line < 200 for t, _, line in seen)  # ...in lists whose repr is a summary
    assert len(_run_line({"rows": _rows(1000)})) > 50_000  # what a plain list's would be


def test_a_split_statement_hands_each_lane_a_sent_list(monkeypatch: pytest.MonkeyPatch) -> None:
    drv = _LaneDriver()
    s, _ = make_store(monkeypatch, 1000, drv)  # type: ignore[arg-type]
    s._write_split("UNWIND $rows AS row ...", _fact_rows(3000, dense=50, sparse=2000), 2)
    assert len(drv.committed) >= 2 and drv.sent_types and all(t is Sent for t in drv.sent_types)
