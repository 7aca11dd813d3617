from __future__ import annotations

import pytest

from esc.agents.query.agent import QueryAgent
from esc.agents.query.memstore import MemoryGraphStore, load_folder
from esc.contract.evolve import evolve
from esc.contract.model import Contract
from esc.streams.discover import discover
from tests.paths import RELATIONAL as EVAL


class Pack:
    def __init__(self, name: str) -> None:
        root = EVAL / name / "drop"
        self.contract: Contract = evolve(None, discover(root).contract)[0]
        self.graph = MemoryGraphStore()
        load_folder(self.graph, root, self.contract)
        self.agent = QueryAgent(self.contract, self.graph)

    def rows(self, label: str) -> list[dict]:
        return [self.graph.nodes[n].props for n in self.graph.by_label[label]]


@pytest.fixture(scope="session")
def chinook() -> Pack:
    if not EVAL.exists():
        pytest.fail(f"eval pack missing: {EVAL}")
    return Pack("chinook")


@pytest.fixture(scope="session")
def northwind() -> Pack:
    return Pack("northwind")
