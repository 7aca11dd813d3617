"""Entity refs on vector objects: the chunks' MENTIONS, copied to the vector store, and search filtered by them.

The mention linker (``agents.mention_linker``) writes ``(:Chunk)-[:MENTIONS]->(entity)`` to the graph; a chunk's
vector object has the chunk's id, so the same links go on the object as a list of **entity refs**
(:func:`entity_ref`: a uuid5 of the entity's label and identity key, the form ``graph.entity_id``-like ids take,
so Weaviate stores them as ``uuid[]`` and filters them exactly). Then vector search can be restricted to the
chunks that mention an entity the question names (``agents.query.vector.search``).

A vector store takes part when it has ``set_mentions(collection, {object id: [refs]})`` and
``near_vector_mentioning(collection, vector, refs, limit)`` (Weaviate and the embedded store do; wrappers forward
them); with another store nothing is copied and search is not filtered.

A chunk whose vector object is not written yet (the Faust worker's vector outbox runs behind the graph) is left
unlinked by the linker and linked at its next run (:class:`~agents.mention_linker.LinkLater`). What is not kept: an object rewritten after it was linked (a replay re-embeds its chunk) carries no refs until the
linker links its chunk again, which it does, since rewriting a chunk in the graph clears its link mark.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from esc.agents.chunk_graph import MentionWrite
from esc.agents.mention_linker import LinkLater
from esc.agents.stores.weaviate_ids import object_id


def entity_ref(label: str, key: str) -> str:
    """The ref of an entity (``key``: its identity key as sorted JSON, as chunks and mentions carry it)."""
    return object_id("entity", label, key)


def refs_by_chunk(chunk_ids: Sequence[str], writes: Sequence[MentionWrite]) -> dict[str, list[str]]:
    """Every linked chunk with the sorted refs of the entities it mentions (none: an empty list, which clears)."""
    out: dict[str, set[str]] = {cid: set() for cid in chunk_ids}
    for w in writes:
        out.setdefault(w.chunk_id, set()).add(entity_ref(w.label, w.key))
    return {cid: sorted(refs) for cid, refs in out.items()}


def copy_mentions(vectors: Any, collection: str, chunk_ids: Sequence[str], writes: Sequence[MentionWrite]) -> int:
    """Put the refs of the linked chunks on their vector objects; returns the objects found (0: the store takes
    none). Raises :class:`LinkLater` when some chunk has no vector object yet (its text waits in the vector
    outbox): the linker leaves the batch unlinked and links it again at its next run."""
    setter = getattr(vectors, "set_mentions", None)
    if setter is None or not chunk_ids:
        return 0
    found = int(setter(collection, refs_by_chunk(chunk_ids, writes)))
    if found < len(set(chunk_ids)):
        raise LinkLater(f"{len(set(chunk_ids)) - found} of {len(set(chunk_ids))} chunks have no vector object yet")
    return found


def near_vector_mentioning(
    vectors: Any, collection: str, vector: Sequence[float], refs: Sequence[str], limit: int
) -> list[dict[str, Any]] | None:
    """Nearest objects among those mentioning any of ``refs``; None when the store cannot filter so."""
    search = getattr(vectors, "near_vector_mentioning", None)
    if search is None or not refs:
        return None
    return list(search(collection, vector, list(refs), limit))
