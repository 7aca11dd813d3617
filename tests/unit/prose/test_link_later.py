"""A chunk whose vector object is not written yet (the vector outbox runs behind the graph) is not linked until it is:
the linker leaves its batch for the next run, and after ``LATER_TRIES`` runs links it in the graph without the refs."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from esc.agents import mention_linker
from tests.unit.prose.conftest import COLLECTION, PACK, Ingested, ingest_pack
from tests.unit.prose.test_vector_mentions import filtered_ids, graph_links


def test_chunks_without_vector_objects_wait_for_them(tmp_path: Path) -> None:
    shutil.copytree(PACK / "drop", tmp_path / "drop")
    pack = ingest_pack(tmp_path / "drop")
    try:
        links = graph_links(pack)
        ids = sorted({c for chunks in links.values() for c in chunks})
        gone = pack.graph.chunk_rows("", 100_000)[0]
        # the graph forgets every link (a new dictionary) and one chunk's vector object is missing
        pack.graph.replace_mentions(ids, [], "stale")
        pack.vectors.delete_by_record(COLLECTION, gone.source, [gone.record_id])
        waited = pack.ingestor.link_mentions()
        assert waited.waiting > 0 and waited.chunks == 0  # the first batch holds the missing object: nothing marked
        assert pack.graph.chunk_rows("", 100_000) and graph_links(pack) == {}
        for _ in range(mention_linker.LATER_TRIES - 2):
            assert pack.ingestor.link_mentions().waiting > 0
        done = pack.ingestor.link_mentions()  # the last try: linked in the graph without that object's refs
        assert done.waiting == 0 and done.chunks > 0
        assert graph_links(pack) == links
        missing = {r.id for r in pack.graph.chunk_rows("", 100_000) if r.record_id == gone.record_id}
        for ref, chunks in links.items():
            assert filtered_ids(pack, ref) == chunks - missing, ref
    finally:
        pack.graph.close()
        pack.vectors.close()


def test_a_sync_gives_way_to_graph_work_and_the_next_goes_on(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``stop`` is asked before each batch: when graph work came in while one was linked, the sync ends there (a
    batch linked, the rest not), and the syncs after it link the rest: the same links as one sync that was never
    stopped."""
    with _forgotten(tmp_path, monkeypatch) as (pack, links):
        total = len(pack.graph.chunk_rows("", 100_000))
        assert total >= 3 and links
        marked = _count_calls(monkeypatch, pack.graph, "replace_mentions")

        def sync() -> mention_linker.LinkResult:
            before = marked[0]
            return pack.ingestor.link_mentions(stop=lambda: marked[0] > before)  # work came in during a batch

        first = sync()
        assert first.stopped and first.chunks == 2
        runs = 1
        while (more := sync()).chunks:
            assert more.chunks <= 2
            runs += 1
        assert runs == -(-total // 2) and not more.stopped
        assert graph_links(pack) == links


def test_a_sync_gives_way_between_the_dictionary_reads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Reading every name for the dictionary takes seconds on a large graph: ``stop`` is asked before each read,
    and a build cut short is dropped (no chunk marked with a partial dictionary); the next sync reads it again
    and links as if never stopped."""
    with _forgotten(tmp_path, monkeypatch, new_contract=True) as (pack, links):
        reads = _count_calls(monkeypatch, pack.graph, "distinct_values")
        cut = pack.ingestor.link_mentions(stop=lambda: reads[0] >= 1)  # work came in during the first read
        assert cut.stopped and cut.chunks == 0 and reads[0] == 1
        assert graph_links(pack) == {}
        done = pack.ingestor.link_mentions(stop=lambda: False)
        assert done.chunks > 0 and not done.stopped and reads[0] > 2  # read again, every read
        assert graph_links(pack) == links


def test_syncs_that_always_give_way_still_link(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Records that keep coming a little slower than the busy window: every sync finds graph work at its first
    question. After ``GIVE_WAY`` syncs in a row that linked nothing, one reads its dictionary and links a batch
    before it asks, so the links still come (a sync every 5 s: one batch per 20 s at worst)."""
    with _forgotten(tmp_path, monkeypatch, new_contract=True) as (pack, links):
        total = len(pack.graph.chunk_rows("", 100_000))
        rounds = 2 * (mention_linker.GIVE_WAY + 1)
        linked = [pack.ingestor.link_mentions(stop=lambda: True).chunks for _ in range(rounds)]
        assert linked == ([0] * mention_linker.GIVE_WAY + [2]) * 2
        while sum(linked) < total:
            linked.append(pack.ingestor.link_mentions(stop=lambda: True).chunks)
        assert graph_links(pack) == links


@contextmanager
def _forgotten(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, new_contract: bool = False
) -> Iterator[tuple[Ingested, dict[str, set[str]]]]:
    """The pack ingested and linked, with its links, then forgotten by the graph (as after a new dictionary);
    batches of two chunks; ``new_contract``: a new version, so the next sync reads its dictionary again."""
    shutil.copytree(PACK / "drop", tmp_path / "drop")
    pack = ingest_pack(tmp_path / "drop")
    try:
        links = graph_links(pack)
        pack.graph.replace_mentions(sorted({c for chunks in links.values() for c in chunks}), [], "stale")
        monkeypatch.setattr(mention_linker, "BATCH", 2)
        if new_contract:
            pack.ingestor.contract = pack.contract.model_copy(update={"version": 99})
        yield pack, links
    finally:
        pack.graph.close()
        pack.vectors.close()


def _count_calls(monkeypatch: pytest.MonkeyPatch, obj: object, name: str) -> list[int]:
    count = [0]
    real = getattr(obj, name)

    def counted(*args: Any, **kwargs: Any) -> Any:
        count[0] += 1
        return real(*args, **kwargs)

    monkeypatch.setattr(obj, name, counted)
    return count
