"""Text chunks in the graph and the entities they mention: the port the stores implement, and its rows.

A graph store that holds prose (Neo4j: ``(:Chunk)`` nodes; embedded: the ``chunks`` table) has, besides the
``GraphStore`` methods, the ones of :class:`ChunkStore`. Chunks are written beside the entities (the same batch,
the same deterministic ids as their vectors) and replaced whole per source record; mentions are
``(:Chunk)-[:MENTIONS {start, end, surface, score, field}]->(entity)`` edges written by the mention linker
(``agents.mention_linker``), which remembers per chunk which dictionary (``fingerprint``) linked it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel

from esc.agents.types import TextObject


class ChunkRow(BaseModel):
    id: str
    text: str
    source: str
    record_id: str
    field: str = ""
    chunk_index: int = 0
    start: int = 0
    location: str = ""
    file: str = ""
    entity_label: str = ""
    entity_key: str = ""


class MentionWrite(BaseModel):
    """One mention: offsets into the chunk's text; ``label``/``key`` name the entity (key: sorted JSON)."""

    chunk_id: str
    label: str
    key: str
    start: int
    end: int
    surface: str
    score: float
    field: str = ""
    value: str = ""


@runtime_checkable
class ChunkStore(Protocol):
    def upsert_chunks(self, chunks: Sequence[TextObject]) -> int:
        """Write chunks (a record's earlier chunks go first: a shorter text leaves none behind)."""

    def delete_chunks(self, source: str, record_ids: Sequence[str]) -> int:
        """Drop the chunks (and their mentions) of these source records."""

    def chunks_to_link(self, fingerprint: str, limit: int) -> list[ChunkRow]:
        """Chunks not linked yet by the dictionary with this fingerprint (at most ``limit``, by id)."""

    def replace_mentions(self, chunk_ids: Sequence[str], mentions: Sequence[MentionWrite], fingerprint: str) -> int:
        """Replace the mentions of these chunks and mark them linked by ``fingerprint``."""

    def chunk_rows(self, after: str, limit: int) -> list[ChunkRow]:
        """Every chunk, by id, ``limit`` at a time after ``after`` (lexical indexes read them)."""

    def mentioning(self, label: str, key: str, limit: int) -> list[dict[str, Any]]:
        """Chunks that mention one entity: the chunk's fields (``start``: the chunk's offset in its text) plus the
        mention's ``m_start``, ``m_end`` (offsets in the chunk), ``surface``, ``score``; best score first."""

    def mentions_in(self, chunk_ids: Sequence[str]) -> list[MentionWrite]:
        """The mentions of these chunks."""


def chunk_store(graph: object) -> ChunkStore | None:
    """The graph as a chunk store, when it is one (wrappers forward the methods of what they wrap)."""
    try:
        return graph if isinstance(graph, ChunkStore) and callable(graph.upsert_chunks) else None
    except AttributeError:
        return None


def row_of(t: TextObject) -> ChunkRow:
    p = t.provenance
    return ChunkRow(id=t.object_id, text=t.text, source=p.source, record_id=p.record_id, field=t.field,
                    chunk_index=t.chunk_index, start=t.start, location=p.location, file=p.file or "",
                    entity_label=t.entity_label or "", entity_key=t.entity_key or "")  # fmt: skip
