"""Weaviate adapter: one collection of text chunks per contract, our own vectors, deterministic object ids."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import urlparse

from esc.agents.stores.base import VectorStore
from esc.agents.stores.weaviate_ids import object_id as object_id
from esc.agents.types import TextObject

try:
    import weaviate
    import weaviate.classes as wvc
except ImportError as exc:  # pragma: no cover - depends on the install
    raise ImportError("the Weaviate store needs the 'stack' extra: pip install 'esc-contracts[stack]'") from exc

TEXT_PROPERTIES: tuple[tuple[str, str], ...] = (
    ("text", "text"),
    ("source", "text"),
    ("record_id", "text"),
    ("location", "text"),
    ("file", "text"),
    ("entity_label", "text"),
    ("entity_key", "text"),
    ("chunk_index", "int"),
    ("contract_version", "int"),
    ("mentions", "uuid[]"),  # entity refs of the chunk's MENTIONS (agents/mentions_vectors.py), set by the linker
)
MENTIONS = "mentions"


UPSERT_BATCH = 500


def collection_name(contract_id: str) -> str:
    """Weaviate class names start with a capital letter and hold only letters, digits and underscores."""
    cleaned = re.sub(r"[^0-9A-Za-z_]", "_", contract_id) or "Esc"
    return "EscText_" + cleaned if not cleaned[0].isalpha() else cleaned[0].upper() + cleaned[1:] + "Text"


def _property(name: str, kind: str) -> Any:
    types = {"text": wvc.config.DataType.TEXT, "int": wvc.config.DataType.INT, "uuid[]": wvc.config.DataType.UUID_ARRAY}
    return wvc.config.Property(name=name, data_type=types[kind])


def _refs(value: Any) -> list[str]:
    return sorted(str(u) for u in value) if isinstance(value, list | tuple) else []


class WeaviateVectorStore(VectorStore):
    def __init__(self, url: str, grpc_port: int = 50051) -> None:
        parsed = urlparse(url)
        self._client = weaviate.connect_to_local(
            host=parsed.hostname or "127.0.0.1",
            port=parsed.port or 8080,
            grpc_port=grpc_port,
            skip_init_checks=False,
        )
        self._known: set[str] = set()

    def ensure_collection(self, name: str) -> None:
        if name in self._known:
            return
        if not self._client.collections.exists(name):
            try:
                self._client.collections.create(
                    name,
                    vector_config=wvc.config.Configure.Vectors.self_provided(),
                    properties=[_property(n, t) for n, t in TEXT_PROPERTIES],
                )
            except weaviate.exceptions.UnexpectedStatusCodeError as exc:
                if "already exists" not in str(exc):
                    raise
        else:  # a collection made before the entity refs: add the property (existing objects have none)
            coll = self._client.collections.get(name)
            if MENTIONS not in {p.name for p in coll.config.get().properties}:
                try:
                    coll.config.add_property(_property(MENTIONS, "uuid[]"))
                except weaviate.exceptions.UnexpectedStatusCodeError as exc:
                    if "already exists" not in str(exc):
                        raise
        self._known.add(name)

    def upsert(self, collection: str, objects: Sequence[TextObject]) -> int:
        """One synchronous gRPC batch per ``UPSERT_BATCH`` objects (``insert_many``: an existing id is replaced).
        The client's background batcher cost ~1-2 s per call to start and flush, whatever the size."""
        if not objects:
            return 0
        self.ensure_collection(collection)
        coll = self._client.collections.get(collection)
        for i in range(0, len(objects), UPSERT_BATCH):
            part = objects[i : i + UPSERT_BATCH]
            res = coll.data.insert_many(
                [
                    wvc.data.DataObject(
                        properties={
                            "text": obj.text,
                            "source": obj.provenance.source,
                            "record_id": obj.provenance.record_id,
                            "location": obj.provenance.location,
                            "file": obj.provenance.file or "",
                            "entity_label": obj.entity_label or "",
                            "entity_key": obj.entity_key or "",
                            "chunk_index": obj.chunk_index,
                            "contract_version": obj.contract_version,
                        },
                        uuid=obj.object_id,
                        vector=list(obj.vector or []),
                    )
                    for obj in part
                ]
            )
            if res.has_errors:
                first = next(iter(res.errors.values()))
                raise RuntimeError(f"Weaviate rejected {len(res.errors)} objects: {first.message}")
        return len(objects)

    def near_vector(self, collection: str, vector: Sequence[float], limit: int = 5) -> list[dict[str, Any]]:
        return self._near(collection, vector, limit, None)

    def near_vector_mentioning(
        self, collection: str, vector: Sequence[float], refs: Sequence[str], limit: int = 5
    ) -> list[dict[str, Any]]:
        """Nearest objects among those whose entity refs hold any of ``refs`` (a filtered HNSW search)."""
        if not refs:
            return []
        return self._near(collection, vector, limit, wvc.query.Filter.by_property(MENTIONS).contains_any(list(refs)))

    def _near(self, collection: str, vector: Sequence[float], limit: int, filters: Any) -> list[dict[str, Any]]:
        coll = self._client.collections.get(collection)
        res = coll.query.near_vector(
            near_vector=list(vector), limit=limit, filters=filters,
            return_metadata=wvc.query.MetadataQuery(distance=True),
        )  # fmt: skip
        out = []
        for o in res.objects:
            distance = o.metadata.distance if o.metadata.distance is not None else 2.0
            props = dict(o.properties)
            props[MENTIONS] = _refs(props.get(MENTIONS))
            out.append({**props, "id": str(o.uuid), "similarity": max(0.0, 1.0 - distance)})
        return out

    def set_mentions(self, collection: str, mentions: Mapping[str, Sequence[str]]) -> int:
        """Set the entity refs of these objects (object id -> refs; an empty list clears). Only objects whose refs
        change are written (one read per ``UPSERT_BATCH`` ids, one update per changed object); an object not
        stored (yet) is skipped. Returns the objects found (updated or already right)."""
        if not mentions or not self._client.collections.exists(collection):
            return 0
        self.ensure_collection(collection)
        coll = self._client.collections.get(collection)
        ids = sorted(mentions)
        found = 0
        for i in range(0, len(ids), UPSERT_BATCH):
            part = ids[i : i + UPSERT_BATCH]
            res = coll.query.fetch_objects(filters=wvc.query.Filter.by_id().contains_any(part), limit=len(part),
                                           return_properties=[MENTIONS])  # fmt: skip
            have = {str(o.uuid): _refs(o.properties.get(MENTIONS)) for o in res.objects}
            for oid in part:
                want = sorted(mentions[oid])
                if oid not in have:
                    continue
                if have[oid] == want:
                    found += 1
                    continue
                try:
                    coll.data.update(uuid=oid, properties={MENTIONS: want})
                except weaviate.exceptions.UnexpectedStatusCodeError as exc:
                    if exc.status_code != 404:  # deleted meanwhile: nothing to update
                        raise
                    continue
                found += 1
        return found

    def delete_by_record(self, collection: str, source: str, record_ids: Sequence[str]) -> int:
        if not record_ids or (collection not in self._known and not self._client.collections.exists(collection)):
            return 0
        coll = self._client.collections.get(collection)
        flt = wvc.query.Filter.by_property("source").equal(source) & wvc.query.Filter.by_property(
            "record_id"
        ).contains_any(list(record_ids))
        res = coll.data.delete_many(where=flt)
        return int(res.successful)

    def count(self, collection: str) -> int:
        if not self._client.collections.exists(collection):
            return 0
        agg = self._client.collections.get(collection).aggregate.over_all(total_count=True)
        return int(agg.total_count or 0)

    def drop(self, collection: str) -> None:
        self._client.collections.delete(collection)
        self._known.discard(collection)

    def close(self) -> None:
        self._client.close()
