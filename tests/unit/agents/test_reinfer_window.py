"""The contract agent's re-inference window (``reinfer_seconds``): settled sources whose profiles only grow are
re-inferred at most once per window; fields enter at once; a tick (and a drained in-process runtime) runs a due
re-inference, so the end state is the one an agent re-inferring at every change reaches."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from esc.agents import agent_state
from esc.agents import contract_agent as ca
from esc.agents.contract_agent import ContractAgent
from esc.agents.profiler import Watermark, profile_batch
from esc.contract.model import Contract
from esc.streams.events import RecordEnvelope as R


def feed(agent: ContractAgent) -> list[Contract]:
    """Shelves settle, then books whose shelves are partly unknown (no link yet), then the missing shelves arrive
    with a new field: only then does every book's shelf exist."""
    offset = 0
    out = []
    steps = [
        ([R(source="shelf", payload={"shelfId": i, "room": f"r{i % 4}"}) for i in range(30)], 0.0),
        ([R(source="book", payload={"bookId": i, "shelfId": 25 + i % 10}) for i in range(25)], 1.0),
        ([R(source="shelf", payload={"shelfId": i, "room": "r1", "label": f"L{i}"}) for i in range(30, 40)], 2.0),
    ]
    for envs, now in steps:
        offset += len(envs)
        c, _ = agent.apply(profile_batch(envs, Watermark(stream="s", offset=offset)), now=now)
        out.append(c)
    return out


def links(c: Contract) -> set[tuple[object, ...]]:
    return {fk.signature() for fk in c.foreign_keys}


BOOK_SHELF = ("book", ("shelfId",), "shelf", ("shelfId",))


def test_growth_inside_the_window_waits_for_the_tick_fields_do_not() -> None:
    eager, windowed = ContractAgent(settle_records=20), ContractAgent(settle_records=20, reinfer_seconds=10.0)
    e, w = feed(eager), feed(windowed)
    assert BOOK_SHELF not in links(e[1]) and BOOK_SHELF in links(e[2])  # the link needs the late shelves
    assert "label" in [f.name for f in w[2].sources["shelf"].fields]  # the new field is in at once
    assert BOOK_SHELF not in links(w[2]) and windowed.reinfer_due
    c, diff = windowed.tick(now=2.5)  # inside the window still: a tick runs what is due
    assert BOOK_SHELF in links(c) and diff is not None and not windowed.reinfer_due
    assert c.sources == eager.contract.sources and links(c) == links(eager.contract)
    assert windowed.tick(now=3.0)[1] is None  # nothing due: no new version


def test_growth_after_the_window_is_inferred_by_the_apply_itself() -> None:
    agent = ContractAgent(settle_records=20, reinfer_seconds=0.5)  # each step is a second after the last
    assert BOOK_SHELF in links(feed(agent)[2]) and not agent.reinfer_due


def test_a_window_counts_inferences(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []
    real = ca.infer
    monkeypatch.setattr(ca, "infer", lambda *a, **k: calls.append(1) or real(*a, **k))
    agent = ContractAgent(settle_records=5, reinfer_seconds=1.0)
    agent.apply(profile_batch([R(source="t", payload={"tId": i}) for i in range(5)], Watermark(stream="s", offset=4)), now=0.0)
    for n in range(1, 21):  # twenty more batches within 0.95 s
        envs = [R(source="t", payload={"tId": 5 * n + i}) for i in range(5)]
        agent.apply(profile_batch(envs, Watermark(stream="s", offset=5 * n + 4)), now=n * 0.0475)
    assert len(calls) == 1 and agent.reinfer_due  # settling inferred once; the growth waits
    agent.apply(profile_batch([R(source="t", payload={"tId": 999})], Watermark(stream="s", offset=999)), now=1.2)
    assert len(calls) == 2 and not agent.reinfer_due and agent.contract.sources["t"].records == 106


def test_a_loaded_agent_re_infers_once_what_a_crash_may_have_cut_off() -> None:
    agent = ContractAgent(settle_records=20, reinfer_seconds=10.0)
    feed(agent)
    assert agent.reinfer_due
    entries = agent_state.changed_entries(agent)
    loaded = agent_state.load_entries(entries)
    assert loaded.reinfer_due and BOOK_SHELF not in links(loaded.contract)
    c, _ = loaded.tick(now=3.0)
    assert BOOK_SHELF in links(c)
    legacy = ContractAgent.from_state(json.loads(json.dumps(agent.to_state())))
    assert legacy.reinfer_due and BOOK_SHELF in links(legacy.tick(now=3.0)[0])


def test_a_drained_in_process_runtime_has_run_the_due_re_inference(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``esc push --embedded`` three times with an hour-long window: the last push grows a settled source, and
    the drained runtime's contract has the link that growth makes (the drain ticked the due re-inference)."""
    from esc.agents.embedding import HashingEmbedder
    from esc.settings import load
    from esc.streams.runtime.inprocess import open_runtime

    monkeypatch.setenv("ESC_REINFER_SECONDS", "3600")
    settings = load().replace(state_dir=tmp_path / "state")
    runtime, close = open_runtime(settings, None, embedder=HashingEmbedder())
    try:
        assert runtime.writer.agent.reinfer_seconds == 3600

        async def pushes() -> tuple[Contract | None, Contract | None]:
            await runtime.push("shelf", [R(source="shelf", payload={"shelfId": i, "room": f"r{i % 4}"}) for i in range(30)])
            await runtime.push("book", [R(source="book", payload={"bookId": i, "shelfId": 25 + i % 10}) for i in range(25)])
            before = runtime.contract
            await runtime.push("shelf", [R(source="shelf", payload={"shelfId": i, "room": "r1"}) for i in range(30, 40)])
            return before, runtime.contract

        before, after = asyncio.run(pushes())
        assert before is not None and BOOK_SHELF not in links(before)
        assert after is not None and BOOK_SHELF in links(after) and not runtime.writer.agent.reinfer_due
        assert after.sources["shelf"].records == 40
    finally:
        close()
