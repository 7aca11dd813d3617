"""A periodic mention sync keeps a dictionary whose contract is unchanged while rebuilding it would take more than
``REBUILD_SHARE`` of the time; new contracts and a drained runtime's sync (no hold) always rebuild."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from esc.agents import mention_linker
from esc.agents.mention_linker import REBUILD_SHARE, MentionLinker
from esc.contract.model import Contract

BUILD = 2.0  # seconds one (fake) build takes on the fake clock: a dictionary is held BUILD / REBUILD_SHARE seconds


class Graph:
    def __init__(self) -> None:
        self.gen = 0

    def generation(self) -> int:
        return self.gen


def test_data_only_changes_are_held_for_a_share_of_the_time(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = [100.0]
    monkeypatch.setattr(mention_linker, "time", SimpleNamespace(monotonic=lambda: clock[0], perf_counter=lambda: clock[0]))
    builds: list[int] = []

    def build(contract: Contract, graph: Any, stop: Any = None) -> list[Any]:
        builds.append(graph.gen)
        clock[0] += BUILD
        return []

    monkeypatch.setattr(mention_linker, "build_surfaces", build)
    linker, graph, contract = MentionLinker(), Graph(), Contract(contract_id="c")
    linker.dictionary(graph, contract, hold=True)
    graph.gen = 1
    clock[0] += BUILD / REBUILD_SHARE - 0.1
    linker.dictionary(graph, contract, hold=True)
    assert builds == [0]  # new data only, within the share of the time: held
    linker.dictionary(graph, contract)
    assert builds == [0, 1]  # no hold (a drained runtime): rebuilt
    graph.gen = 2
    newer = contract.model_copy(update={"version": 2})
    linker.dictionary(graph, newer, hold=True)
    assert builds == [0, 1, 2]  # a new contract is never held
    graph.gen = 3
    linker.dictionary(graph, newer, hold=True)
    assert builds == [0, 1, 2]
    clock[0] += BUILD / REBUILD_SHARE
    linker.dictionary(graph, newer, hold=True)
    assert builds == [0, 1, 2, 3]  # the share of the time is over
    linker.dictionary(graph, newer, hold=True)
    assert builds == [0, 1, 2, 3]  # same data: the same dictionary
