from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path

from esc.agents import metrics
from esc.agents.pipeline import profile_messages
from esc.streams.events import RecordEnvelope
from esc.streams.runtime.profile_pool import ProfilePool


def values(n: int) -> list[bytes | None]:
    out: list[bytes | None] = [
        RecordEnvelope(source="pp_orders", record_id=str(i), payload={"id": i, "total": f"{i}.50"})
        .model_dump_json()
        .encode()
        for i in range(n)
    ]
    return [*out, None, b"not an envelope"]  # a tombstone and garbage carry no profile evidence


def updates() -> float:
    # source labels are bounded: after 200 sources (other tests) a new one is counted under "_other"
    label = metrics.source_label("pp_orders")
    return metrics.REGISTRY.get_sample_value("esc_profile_updates_total", {"source": label}) or 0.0


def test_child_process_profiles_like_the_parent_and_counts_each_delta_once() -> None:
    pool = ProfilePool()
    try:
        before = updates()
        got = asyncio.run(pool.profile(values(50), "r/0", 0, 51, {"r/1": 7}))
        assert updates() == before + 1  # counted here, not lost in the child's registry
        want = profile_messages(values(50), "r/0", 0, 51, {"r/1": 7})
        assert [d.model_dump() for d in got] == [d.model_dump() for d in want]
        assert got[0].records == 50 and got[0].watermark.marks() == {"r/0": 51, "r/1": 7}
    finally:
        pool.close()


def test_a_dead_child_is_replaced_and_the_batch_is_still_profiled() -> None:
    pool = ProfilePool()

    async def scenario() -> tuple[int, int]:
        first = await pool.profile(values(5), "r/0", 0, 6, {})
        assert pool._pool is not None
        for pid in list(pool._pool._processes):  # the child dies (OOM killer, SIGKILL)
            os.kill(pid, signal.SIGKILL)
        await asyncio.sleep(0.5)
        second = await pool.profile(values(7), "r/0", 7, 14, {})
        third = await pool.profile(values(3), "r/0", 15, 18, {})  # a new child
        return first[0].records, second[0].records + third[0].records

    try:
        assert asyncio.run(scenario()) == (5, 10)
    finally:
        pool.close()


def test_a_whole_file_is_profiled_in_the_child_like_in_the_parent(tmp_path: Path) -> None:
    from esc.agents.file_profile import profile_file
    from esc.streams.readers import SourceFile

    path = tmp_path / "pp_items.csv"
    path.write_text("id,name\n" + "".join(f"{i},item {i}\n" for i in range(40)))
    sf = SourceFile(path=path, rel="pp_items.csv", format="csv", source="pp_items")
    pool = ProfilePool()
    try:
        got = asyncio.run(pool.profile_file(sf, "h1", 7, 500, None))
        want = profile_file(sf, "h1", 7, 500)
        assert not isinstance(got, str) and not isinstance(want, str)
        assert got.delta.model_dump() == want.delta.model_dump() and got.conflicts == want.conflicts
        assert got.delta.records == 40 and got.delta.watermark.offset == 7
        (tmp_path / "pp_bad.csv").write_bytes(b"\xef\xbb\xbfid\n1\n")
        bad = SourceFile(path=tmp_path / "pp_bad.csv", rel="pp_bad.csv", format="csv", source="pp_bad")
        assert asyncio.run(pool.profile_file(bad, "h2", 1, 500, None)) == "byte-order mark"
    finally:
        pool.close()
