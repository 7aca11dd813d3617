"""VectorStore behaviours every backend shares: overwrite by object id, cosine near-vector, counts, deletes."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from esc.agents.stores.weaviate_ids import object_id
from esc.agents.types import SourceRecordRef, TextObject
from tests.conformance.conftest import Names

DIM = 16


def vec(seed: int) -> list[float]:
    return np.random.default_rng(seed).normal(size=DIM).astype(np.float32).tolist()


def obj(source: str, record: int, text: str, vector: list[float], chunk: int = 0, **extra: Any) -> TextObject:
    return TextObject(
        object_id=object_id(source, str(record), str(chunk)),
        text=text,
        provenance=SourceRecordRef(
            source=source, record_id=str(record), location=f"{source}.csv:row={record}"
        ),
        chunk_index=chunk,
        vector=vector,
        **extra,
    )


def cosine(a: list[float], b: list[float]) -> float:
    x, y = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return float(x @ y / (np.linalg.norm(x) * np.linalg.norm(y)))


def test_upsert_count_and_nearest_with_properties(vector_store: Any, names: Names) -> None:
    coll, src = names.collection(), names.source("docs")
    vector_store.ensure_collection(coll)
    objects = [
        obj(src, i, f"text {i}", vec(i), entity_label="Doc", entity_key=f'{{"id": {i}}}', contract_version=3)
        for i in range(10)
    ]
    assert vector_store.upsert(coll, objects) == 10
    assert vector_store.count(coll) == 10
    query = vec(4)
    hits = vector_store.near_vector(coll, query, limit=3)
    assert len(hits) == 3
    top = hits[0]
    assert top["id"] == objects[4].object_id
    assert math.isclose(top["similarity"], 1.0, abs_tol=1e-4)
    assert {
        k: top[k] for k in ("text", "source", "record_id", "location", "file", "entity_label", "entity_key")
    } == {
        "text": "text 4",
        "source": src,
        "record_id": "4",
        "location": f"{src}.csv:row=4",
        "file": "",
        "entity_label": "Doc",
        "entity_key": '{"id": 4}',
    }
    assert top["chunk_index"] == 0 and top["contract_version"] == 3
    # the rest in cosine order, with the cosine as similarity (clipped to [0, 1])
    expected = sorted(range(10), key=lambda i: -cosine(query, vec(i)))[:3]
    assert [h["record_id"] for h in hits] == [str(i) for i in expected]
    for h in hits:
        want = max(0.0, cosine(query, vec(int(h["record_id"]))))
        assert math.isclose(h["similarity"], want, abs_tol=1e-4)
        assert 0.0 <= h["similarity"] <= 1.0


def test_upsert_same_id_overwrites(vector_store: Any, names: Names) -> None:
    coll, src = names.collection(), names.source("docs")
    vector_store.upsert(coll, [obj(src, 1, "old text", vec(1)), obj(src, 2, "other", vec(2))])
    vector_store.upsert(coll, [obj(src, 1, "new text", vec(3))])
    assert vector_store.count(coll) == 2
    hits = vector_store.near_vector(coll, vec(3), limit=1)
    assert hits[0]["text"] == "new text" and math.isclose(hits[0]["similarity"], 1.0, abs_tol=1e-4)
    old = vector_store.near_vector(coll, vec(1), limit=2)
    assert all(h["text"] != "old text" for h in old)


def test_opposite_vector_similarity_is_clipped_at_zero(vector_store: Any, names: Names) -> None:
    coll, src = names.collection(), names.source("docs")
    v = vec(7)
    vector_store.upsert(coll, [obj(src, 1, "away", [-x for x in v])])
    hits = vector_store.near_vector(coll, v, limit=5)
    assert len(hits) == 1 and math.isclose(hits[0]["similarity"], 0.0, abs_tol=1e-4)


def test_delete_by_record(vector_store: Any, names: Names) -> None:
    coll, src, other = names.collection(), names.source("docs"), names.source("notes")
    vector_store.upsert(
        coll,
        [
            obj(src, 1, "a0", vec(10), chunk=0),
            obj(src, 1, "a1", vec(11), chunk=1),
            obj(src, 2, "b", vec(12)),
            obj(other, 1, "same record id, other source", vec(13)),
        ],
    )
    assert vector_store.count(coll) == 4
    assert vector_store.delete_by_record(coll, src, ["1"]) == 2
    assert vector_store.count(coll) == 2
    remaining = {h["text"] for h in vector_store.near_vector(coll, vec(10), limit=10)}
    assert remaining == {"b", "same record id, other source"}
    assert vector_store.delete_by_record(coll, src, ["1"]) == 0
    assert vector_store.delete_by_record(coll, src, []) == 0


def test_drop_and_unknown_collection(vector_store: Any, names: Names) -> None:
    coll, src = names.collection(), names.source("docs")
    assert vector_store.count(names.collection("Never")) == 0
    vector_store.upsert(coll, [obj(src, i, f"t{i}", vec(i)) for i in range(3)])
    vector_store.drop(coll)
    assert vector_store.count(coll) == 0


def test_limit_larger_than_collection(vector_store: Any, names: Names) -> None:
    coll, src = names.collection(), names.source("docs")
    vector_store.upsert(coll, [obj(src, i, f"t{i}", vec(i)) for i in range(3)])
    assert len(vector_store.near_vector(coll, vec(0), limit=50)) == 3
