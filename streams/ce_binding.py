"""The CloudEvents Kafka protocol binding, structured content mode, for ``esc.schema.diffs`` and
``esc.schema.contracts`` (built and read with the ``cloudevents`` SDK).

Every message on those topics carries the header ``content-type: application/cloudevents+json`` and a value that
is one CloudEvent in JSON: ``specversion``, ``id``, ``source``, ``type``, ``subject``, ``time``, ``datacontenttype``
and ``data``. Schema diffs have type ``esc.schema.diff`` (data: from/to version, the added items by kind, reason);
contracts have type ``esc.schema.contract`` and the whole contract as ``data``. The message key stays the contract
id (``<id>@v<N>`` for the kept versions of the compacted contracts topic), which the SDK reads back as the
``partitionkey`` extension. The pipeline's own messages (and the embedded runtime's files) are plain JSON; only the
Kafka adapter wraps them here, and contract readers use ``contract_data`` (a plain value from before this binding
is read as is).
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from cloudevents.core.bindings import kafka
from cloudevents.core.v1.event import CloudEvent

CONTRACT_EVENT_TYPE = "esc.schema.contract"
CONTRACT_EVENT_SOURCE = "esc/contract-agent"
Headers = list[tuple[str, bytes]]


def _message(attributes: dict[str, Any], data: Any) -> tuple[Headers, bytes]:
    event = CloudEvent(attributes={k: v for k, v in attributes.items() if v is not None}, data=data)
    msg = kafka.to_structured_event(event)
    return list(msg.headers.items()), msg.value


def diff_message(event_json: bytes | None) -> tuple[Headers, bytes | None]:
    """Headers and value for a schema-diff event (``streams.events.CloudEvent`` as JSON) on Kafka."""
    if event_json is None:
        return [], None
    ev = json.loads(event_json)
    attrs = {k: ev.get(k) for k in ("id", "source", "type", "subject", "datacontenttype")}
    attrs["time"] = datetime.fromisoformat(ev["time"]) if ev.get("time") else None
    return _message(attrs, ev.get("data") or {})


def contract_message(contract_json: bytes | None) -> tuple[Headers, bytes | None]:
    """Headers and value for a contract (plain JSON) on the compacted contracts topic. The id is deterministic
    (contract id, version, content hash): a re-sent contract is recognisably the same event. A tombstone (None)
    stays one."""
    if contract_json is None:
        return [], None
    data = json.loads(contract_json)
    cid, version = data.get("contract_id", ""), data.get("version", 0)
    return _message(
        {
            "id": f"{cid}:{version}:{data.get('content_hash', '')}",
            "source": CONTRACT_EVENT_SOURCE,
            "type": CONTRACT_EVENT_TYPE,
            "subject": f"{cid}@v{version}",
            "datacontenttype": "application/json",
        },
        data,
    )


def contract_data(value: bytes) -> dict[str, Any]:
    """The contract (parsed JSON) in a contracts-topic value: the ``data`` of a structured-mode CloudEvent, or a
    plain contract value written before this binding."""
    parsed = json.loads(value)
    if isinstance(parsed, dict) and "specversion" in parsed and isinstance(parsed.get("data"), dict):
        return dict(parsed["data"])
    if not isinstance(parsed, dict):
        raise ValueError("a contracts-topic value must be a JSON object")
    return parsed
