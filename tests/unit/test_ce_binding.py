"""The CloudEvents Kafka binding (structured mode) of schema diffs and contracts, read back with the SDK."""

from __future__ import annotations

import json

import pytest
from cloudevents.core.bindings import kafka

from esc.agents.contract_agent import ContractAgent, contract_message, diff_event
from esc.agents.profiler import Watermark, profile_batch
from esc.contract.model import Contract, ContractDiff
from esc.streams import ce_binding
from esc.streams.events import RecordEnvelope
from esc.streams.schema_events import parse_contract


def _contract_and_diff() -> tuple[Contract, ContractDiff]:
    agent = ContractAgent()
    envs = [RecordEnvelope(source="o", payload={"oid": i, "name": f"n{i}"}) for i in range(3)]
    contract, diff = agent.apply(profile_batch(envs, Watermark(stream="s", offset=2)), now=0.0)
    assert diff is not None
    return contract, diff


def test_a_diff_is_a_structured_cloudevent_with_its_content_type_header() -> None:
    contract, diff = _contract_and_diff()
    plain = diff_event(diff, contract).model_dump_json().encode()
    headers, value = ce_binding.diff_message(plain)
    assert headers == [("content-type", b"application/cloudevents+json")]
    event = kafka.from_structured_event(kafka.KafkaMessage(headers=dict(headers), key=b"app", value=value))
    attrs, original = event.get_attributes(), json.loads(plain)
    assert (
        attrs["specversion"] == "1.0" and attrs["type"] == "esc.schema.diff" and attrs["id"] == original["id"]
    )
    assert attrs["subject"] == "esc" and attrs["partitionkey"] == "app" and attrs["time"] is not None
    assert event.get_data() == original["data"] and event.get_data()["to_version"] == 1


def test_a_contract_is_the_data_of_a_structured_cloudevent_and_reads_back_the_same() -> None:
    contract, _ = _contract_and_diff()
    key, plain = contract_message(contract)
    headers, value = ce_binding.contract_message(plain)
    assert headers == [("content-type", b"application/cloudevents+json")]
    event = kafka.from_structured_event(kafka.KafkaMessage(headers=dict(headers), key=key, value=value))
    assert event.get_attributes()["type"] == "esc.schema.contract"
    assert event.get_attributes()["subject"] == "esc@v1" and event.get_attributes()["id"].startswith("esc:1:")
    assert (
        parse_contract(value) == parse_contract(plain) == contract
    )  # a plain value from before is read as is
    with pytest.raises(ValueError):
        ce_binding.contract_data(b"[1, 2]")
