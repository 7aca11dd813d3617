"""Extraction planning: turn record envelopes into store writes.

Pure functions (no I/O). The walking skeleton writes one node per record, labelled from the source name, keyed
by the record id, with provenance; the pipeline issue replaces the key and attributes with the contract's.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from agents.stores.weaviate_ids import object_id
from agents.types import EdgeWrite, EntityWrite, SourceRecordRef, TextObject
from streams.events import RecordEnvelope

RECORD_KEY = "_record_id"
MAX_TEXT = 8000


@dataclass
class Plan:
    entities: list[EntityWrite] = field(default_factory=list)
    edges: list[EdgeWrite] = field(default_factory=list)
    texts: list[TextObject] = field(default_factory=list)


def provenance(env: RecordEnvelope) -> SourceRecordRef:
    return SourceRecordRef(
        source=env.source,
        record_id=env.resolved_id(),
        location=env.record_id or "",
        file=env.location.get("file"),
        file_hash=env.file_hash,
    )


def label_for(source: str) -> str:
    """Label from the source (file) name; escaping happens in the store adapter."""
    return source


def render_text(payload: dict[str, Any]) -> str:
    """A readable one-line rendering of a record, used as the text of its vector object."""
    parts = []
    for k, v in payload.items():
        if v is None:
            continue
        value = v if isinstance(v, str) else json.dumps(v, default=str, ensure_ascii=False)
        parts.append(f"{k}: {value}")
    return "; ".join(parts)[:MAX_TEXT]


def plan(envelopes: Iterable[RecordEnvelope], contract_version: int = 0) -> Plan:
    out = Plan()
    for env in envelopes:
        prov = provenance(env)
        label = label_for(env.source)
        key = {RECORD_KEY: prov.record_id}
        out.entities.append(
            EntityWrite(label=label, key=key, properties=env.payload, provenance=prov, contract_version=contract_version)
        )
        out.texts.append(
            TextObject(
                object_id=object_id(env.source, prov.record_id, "0"),
                text=render_text(env.payload),
                provenance=prov,
                entity_label=label,
                entity_key=json.dumps(key, sort_keys=True),
                contract_version=contract_version,
            )
        )
    return out


def attach_vectors(texts: Sequence[TextObject], vectors: Sequence[Sequence[float]]) -> None:
    for obj, vec in zip(texts, vectors, strict=True):
        obj.vector = [float(x) for x in vec]
