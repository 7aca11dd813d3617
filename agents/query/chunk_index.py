"""A lexical index over the text chunks ESC embeds: the words of prose, for retrieval beside the vectors.

The chunks are the ones the extractor writes (``agents.chunking.chunk_for_embedding`` over the graph's text
attributes, same ids as the vector objects), so a chunk found here and the same chunk found by vector search are one
piece of evidence. Scored with BM25 (k1 = 1.2, b = 0.75) over ``retrieval.terms``: folded, stemmed words and
numbers. Built from the graph once per grounding (contract version + data), like the row index.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from esc.agents.chunking import chunk_for_embedding
from esc.agents.stores.weaviate_ids import object_id

K1 = 1.2
B = 0.75
DOCUMENT_FORMATS = frozenset({"text", "markdown", "pdf"})


@dataclass
class ChunkEntry:
    id: str
    source: str
    record_id: str
    location: str
    file: str
    chunk_index: int
    start: int
    text: str
    tf: Counter[str]
    length: int


@dataclass
class ChunkIndex:
    chunks: list[ChunkEntry] = field(default_factory=list)
    df: Counter[str] = field(default_factory=Counter)
    by_id: dict[str, ChunkEntry] = field(default_factory=dict)

    def add(self, source: str, record_id: str, location: str, name: str, value: str, document: bool,
            terms: Callable[[str], list[str]]) -> None:  # fmt: skip
        for c in chunk_for_embedding(value, None if document else name):
            tf = Counter(terms(c.text))
            cid = object_id(source, record_id, name, str(c.index))
            entry = ChunkEntry(cid, source, record_id, location, location.split(":", 1)[0], c.index, c.start,
                               c.text, tf, sum(tf.values()))  # fmt: skip
            self.chunks.append(entry)
            self.by_id[cid] = entry
            self.df.update(tf.keys())

    def search(self, q_terms: list[str], keep: Callable[[ChunkEntry], bool] | None, limit: int) -> list[tuple[float, ChunkEntry]]:
        n = len(self.chunks)
        if not n:
            return []
        avg = sum(c.length for c in self.chunks) / n or 1.0
        wanted = set(q_terms)
        idf = {t: math.log(1 + (n - self.df.get(t, 0) + 0.5) / (self.df.get(t, 0) + 0.5)) for t in wanted}
        scored = []
        for c in self.chunks:
            common = wanted & c.tf.keys()
            if not common or (keep is not None and not keep(c)):
                continue
            s = sum(idf[t] * c.tf[t] * (K1 + 1) / (c.tf[t] + K1 * (1 - B + B * c.length / avg)) for t in common)
            scored.append((s, c))
        scored.sort(key=lambda x: (-x[0], x[1].id))
        return scored[:limit]


def text_attributes(grounding: Any) -> list[tuple[Any, list[str], bool]]:
    """(type info, its text attribute names, whether its source is a document) for every type that holds prose."""
    out = []
    for info in grounding.vocab.types.values():
        src = grounding.contract.sources.get(info.source)
        document = src is not None and src.format in DOCUMENT_FORMATS
        names = [a.name for a in info.attrs.values() if a.type == "text" or (document and a.name == "text")]
        if names:
            out.append((info, names, document))
    return out
