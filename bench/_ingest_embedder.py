"""``bench/ingest.py``: the embedder's own rate beside the worker's vectors/s (issue 15, point 4).

The worker embeds text chunks behind the graph (its vector outbox, at low priority while records are written). Two
ESC rates are printed: over the whole run (chunks / time until the outbox was empty) and over the tail (the chunks
embedded after the graph load ended / the time that took, when the vector lane runs alone). The limit beside them is
the same embedder (``ESC_EMBEDDER`` as the worker reads it) embedding a sample of the same texts in batches of the
worker's size, in the bench process after the worker is done, so nothing else competes for the CPU.
"""

from __future__ import annotations

import csv
import random
import time
from pathlib import Path
from typing import Any

SAMPLE = 1024


def text_sample(
    tpch: Path, tables: list[str], n: int = SAMPLE, seed: int = 7, lane: bool = False
) -> list[str]:
    """Up to ``n`` values of the TPC-H comment columns (the files' only free text), drawn evenly over the tables
    weighted by their row counts as a reservoir per table, seeded. ``lane``: only the values the worker embeds
    (text by ``is_text``, the extractor's rule; TPC-H's short comments stay graph-only), each as the embedder
    input of its chunks (``field:`` context line, then the text): the inputs ESC's vector lane embeds."""
    from esc.agents.chunking import chunk_for_embedding
    from esc.agents.text_writer import embedding_input
    from esc.contract.semantic import is_text

    rng = random.Random(seed)
    texts: list[str] = []
    for t in tables:
        path = tpch / f"{t}.csv"
        if not path.exists():
            continue
        with path.open(newline="", encoding="utf-8") as fh:
            reader = csv.reader(fh)
            header = next(reader, [])
            cols = [i for i, h in enumerate(header) if h.endswith("comment")]
            if not cols:
                continue
            pool: list[str] = []
            seen = 0
            for row in reader:
                value = row[cols[0]] if cols[0] < len(row) else ""
                if lane and not is_text(value):
                    continue
                seen += 1
                if len(pool) < n:
                    pool.append(value)
                else:
                    j = rng.randrange(seen)
                    if j < n:
                        pool[j] = value
            if lane:
                pool = [embedding_input(c) for v in pool for c in chunk_for_embedding(v, header[cols[0]])]
            texts.extend(v for v in pool if v.strip())
    rng.shuffle(texts)
    return texts[:n]


def embedder_rate(texts: list[str]) -> dict[str, Any]:
    """Sentences/s of the worker's embedder kind on ``texts`` in the worker's batch size (one warm-up batch first)."""
    from esc.agents.embedding import default_embedder_kind, get_embedder
    from esc.agents.ingest import EMBED_BATCH

    kind = default_embedder_kind()
    emb = get_embedder(kind)
    if not texts:
        return {"embedder": kind, "sentences": 0, "sentences_per_s": None}
    emb.embed(texts[:EMBED_BATCH])
    t0 = time.perf_counter()
    for i in range(0, len(texts), EMBED_BATCH):
        emb.embed(texts[i : i + EMBED_BATCH])
    secs = time.perf_counter() - t0
    return {"embedder": kind, "batch": EMBED_BATCH, "sentences": len(texts), "seconds": round(secs, 2),
            "sentences_per_s": round(len(texts) / secs, 1)}


def vector_rates(vectors: dict[str, Any]) -> dict[str, Any]:
    """ESC's vectors/s from what ``vectors_catch_up`` measured."""
    out: dict[str, Any] = {}
    chunks = vectors.get("chunks") or 0
    if chunks and vectors.get("caught_up_at_s"):
        out["overall_per_s"] = round(chunks / vectors["caught_up_at_s"], 1)
    tail = vectors.get("tail_chunks") or 0
    if tail and vectors.get("tail_seconds"):
        out["tail_per_s"] = round(tail / vectors["tail_seconds"], 1)
    return out
