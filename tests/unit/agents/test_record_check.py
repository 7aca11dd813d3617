"""The worker's intake checks pushed records against their source's record schema (agents/record_check.py): one
that does not fit goes to the dead letters with the reason and is not written; records read from files, records of
sources the contract does not know yet and fields it does not know yet pass."""

from __future__ import annotations

import asyncio
from pathlib import Path

import jsonschema_rs
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from esc.agents import metrics
from esc.agents.record_check import REASON, split, violation
from esc.contract.entities import with_entities
from esc.contract.model import Contract
from esc.contract.record_schema import KINDS, record_schema
from esc.streams.events import RecordEnvelope
from tests.fakes.contracts import chinook_like, field, source
from tests.unit.agents.fakes import RecordingGraph
from tests.unit.agents.test_pipeline_worker import Log, messages, new_worker


def test_a_pushed_record_that_would_widen_a_type_is_a_dead_letter_with_the_reason(tmp_path: Path) -> None:
    contract = with_entities(chinook_like())
    contract.version, contract.content_hash = 2, "v2"
    good = RecordEnvelope(source="Artist", record_id="1", payload={"ArtistId": 1, "Name": "AC/DC", "Genre": "rock"})
    bad = RecordEnvelope(source="Artist", record_id="2", payload={"ArtistId": "two", "Name": "Accept"})
    from_file = RecordEnvelope(source="Artist", record_id="3", payload={"ArtistId": "three"}, format="csv")
    unknown = RecordEnvelope(source="Nowhere", record_id="4", payload={"x": {"deep": 1}})

    async def run() -> None:
        graph = RecordingGraph()
        worker = new_worker(graph, Log(), tmp_path / "state.json")
        worker.on_contract(contract)
        before = metrics.REGISTRY.get_sample_value("esc_dlq_total", {"stage": "contract", "reason": REASON}) or 0
        result = await worker.on_records(messages([good, bad]))
        assert [d.location for d in result.dead] == ["2"] and result.dead[0].stage == "contract"
        assert result.dead[0].reason == (
            f"{REASON}: Artist v2: field 'ArtistId' is string 'two', the contract's type is int"
        )
        assert '"ArtistId":"two"' in result.dead[0].original  # the whole envelope, for a replay by hand
        assert graph.count("Artist") == 1
        after = metrics.REGISTRY.get_sample_value("esc_dlq_total", {"stage": "contract", "reason": REASON})
        assert after == before + 1

    asyncio.run(run())
    ok, dead = split([good, bad, from_file, unknown], contract)
    assert ok == [good, from_file, unknown] and len(dead) == 1
    assert split([bad], None) == ([bad], [])
    assert violation(contract, "Artist", {"ArtistId": None, "Name": 7}) is None  # a null, and a number as a name


KINDS_CHECKED = [k for k in KINDS if k != "json"]
_texts = st.one_of(
    st.text(max_size=12),
    st.from_regex(r"-?[0-9]{1,20}(\.[0-9]{1,16})?([eE][-+]?[0-9]{1,3})?\n?", fullmatch=True),
    st.from_regex(r"[0-9]{4}-[0-9]{2}-[0-9]{2}([T ][0-9]{2}:[0-9]{2}(:[0-9]{2})?(Z|[+-][0-9]{2}:?[0-9]{2})?)?\n?",
                  fullmatch=True),
    st.sampled_from(["yes", "No", "T", "false", "١٢٣", "٢٠٢٠-٠١-٠١", "1.5\u2028", "0.5", "-0.5", "007", "1e5"]),
)
_values = st.one_of(st.none(), st.booleans(), st.integers(), st.integers(min_value=2**63, max_value=2**90),
                    st.floats(allow_nan=False), _texts, st.lists(st.integers(), max_size=2),
                    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2))


def _typed_contract() -> Contract:
    fields = [field("Typed", f"f_{k}", k) for k in KINDS_CHECKED]
    return Contract(sources={"Typed": source("Typed", "jsonl", fields)}, version=3, content_hash="typed-v3")


@settings(max_examples=400, deadline=None)
@given(st.dictionaries(st.sampled_from([f"f_{k}" for k in KINDS_CHECKED]), _values, max_size=4))
def test_the_fast_check_never_admits_what_jsonschema_rejects(payload: dict[str, object]) -> None:
    """The verdict is jsonschema's: what jsonschema-rs admits, jsonschema admits too, and ``violation`` is None
    exactly when jsonschema finds no error (where the fast check rejects, jsonschema decides)."""
    contract = _typed_contract()
    schema = record_schema(contract, "Typed")
    slow = Draft202012Validator(schema)
    if jsonschema_rs.validator_for(schema).is_valid(payload):
        assert slow.is_valid(payload), payload
    assert (violation(contract, "Typed", payload) is None) == slow.is_valid(payload), payload


def test_where_the_fast_check_is_stricter_jsonschema_decides() -> None:
    contract = _typed_contract()
    fast = jsonschema_rs.validator_for(record_schema(contract, "Typed"))
    late = {"f_date": "2020-01-01\n"}  # Python's $ matches before a final newline, ECMA-262's does not
    assert not fast.is_valid(late) and violation(contract, "Typed", late) is None
    assert violation(contract, "Typed", {"f_int": "007"}) is not None  # a code, not an integer
