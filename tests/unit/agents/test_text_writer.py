"""TextWriter (agents/text_writer.py): a write of many chunks upserts each part while the next one is embedded,
in order, one upsert at a time; an error of either side reaches the caller, after the upsert under way ended."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from typing import Any

import pytest

from esc.agents.embedding import HashingEmbedder
from esc.agents.text_writer import UPSERT_PART, TextWriter
from esc.agents.types import SourceRecordRef, TextObject


def texts(n: int) -> list[TextObject]:
    return [TextObject(object_id=f"s/{i}/0", text=f"text {i}", provenance=SourceRecordRef(source="s", record_id=str(i)),
                       chunk_index=0) for i in range(n)]  # fmt: skip


class SlowStore:
    """Records upserts (their thread and when they ran); ``fail_at``: the upsert call that raises."""

    def __init__(self, fail_at: int | None = None) -> None:
        self.calls: list[tuple[list[str], str, float, float]] = []
        self.fail_at = fail_at
        self.active = 0
        self.max_active = 0
        self.lock = threading.Lock()

    def ensure_collection(self, name: str) -> None:
        pass

    def upsert(self, collection: str, objs: Sequence[TextObject]) -> int:
        with self.lock:
            self.active += 1
            self.max_active = max(self.max_active, self.active)
        t0 = time.perf_counter()
        try:
            if self.fail_at is not None and len(self.calls) == self.fail_at:
                raise RuntimeError("store said no")
            assert all(o.vector for o in objs)  # embedded before they are sent
            time.sleep(0.05)
            return len(objs)
        finally:
            with self.lock:
                self.active -= 1
            self.calls.append(([o.object_id for o in objs], threading.current_thread().name, t0, time.perf_counter()))


class SlowEmbedder(HashingEmbedder):
    def embed(self, items: Sequence[str]) -> Any:
        time.sleep(0.02)
        return super().embed(items)


def test_parts_are_upserted_in_order_beside_the_embedding_of_the_next() -> None:
    store = SlowStore()
    w = TextWriter(store, SlowEmbedder(), "c", embed_batch=64)  # type: ignore[arg-type]
    objs = texts(3 * UPSERT_PART + 10)
    assert w.write(objs) == len(objs)
    assert [i for ids, *_ in store.calls for i in ids] == [o.object_id for o in objs]  # every chunk once, in order
    assert [len(ids) for ids, *_ in store.calls] == [UPSERT_PART] * 3 + [10]
    assert store.max_active == 1
    assert all(name.startswith("esc-vector-upsert") for _, name, *_ in store.calls)


def test_a_small_write_is_one_upsert_on_the_caller_s_thread() -> None:
    store = SlowStore()
    w = TextWriter(store, HashingEmbedder(), "c", embed_batch=16)  # type: ignore[arg-type]
    assert w.write(texts(20)) == 20
    assert len(store.calls) == 1 and store.calls[0][1] == threading.current_thread().name


def test_a_failed_upsert_fails_the_write() -> None:
    w = TextWriter(SlowStore(fail_at=1), HashingEmbedder(), "c", embed_batch=64)  # type: ignore[arg-type]
    with pytest.raises(RuntimeError, match="store said no"):
        w.write(texts(3 * UPSERT_PART))


def test_a_failed_embedding_waits_for_the_upsert_under_way() -> None:
    store = SlowStore()

    class Breaks(HashingEmbedder):
        calls = 0

        def embed(self, items: Sequence[str]) -> Any:
            type(self).calls += 1
            if type(self).calls > UPSERT_PART // 64:  # the second part's first batch
                raise RuntimeError("embedder died")
            return super().embed(items)

    w = TextWriter(store, Breaks(), "c", embed_batch=64)  # type: ignore[arg-type]
    with pytest.raises(RuntimeError, match="embedder died"):
        w.write(texts(2 * UPSERT_PART))
    assert len(store.calls) == 1 and store.active == 0  # the first part's upsert had ended
