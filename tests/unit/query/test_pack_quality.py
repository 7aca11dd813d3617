"""Release thresholds of question answering, held on every evaluation pack in tests/data (the scoring of
bench/qa.py): the public packs' questions (EM >= 0.95) and paraphrases (EM >= 0.8), and the flights pack, a
second test set written from a schema nobody tuned to (tests/data/flights/README.md). On every pack each
out-of-scope question is declined and at most 5 % of the answers are wrong with confidence >= 0.8."""

from __future__ import annotations

import pytest

import bench.qa as qa
from esc.agents.query.agent import QueryAgent
from esc.agents.query.memstore import MemoryGraphStore
from tests.paths import REPO

EVAL = REPO / "tests" / "data" / "eval"
FLIGHTS_EM = 0.8
"""The flights pack's floor: below the public packs' (some of its questions need a composite join to the weather
or a delay read from "late"), kept so that a regression on data nobody tuned to fails a test."""


@pytest.fixture(scope="module", params=["chinook", "sakila", "northwind", "flights"])
def pack(request: pytest.FixtureRequest) -> tuple[qa.Pack, QueryAgent]:
    found = qa.find_pack(request.param, EVAL, "all")
    assert not isinstance(found, str), found
    graph = MemoryGraphStore()
    contract, _, _ = qa.load(found.drop, graph)
    return found, QueryAgent(contract, graph)


def _report(pack: qa.Pack, agent: QueryAgent, set_name: str) -> dict[str, object]:
    items = []
    for q in qa.read_questions(pack.sets[set_name]):
        items.append(qa.scored(q, agent.ask(q["question"])))
    report = {"pack": pack.name, "set": set_name, **qa.score_set(items)}
    report["wrong"] = [(s.q["id"], s.answer, s.q.get("answer")) for s in items if not s.ok][:10]
    return report


def test_release_thresholds(pack: tuple[qa.Pack, QueryAgent]) -> None:
    found, agent = pack
    for set_name in found.sets:
        report = _report(found, agent, set_name)
        misses = qa.check(report)  # type: ignore[arg-type]
        if found.name == "flights":
            assert float(report["exact_match"]) >= FLIGHTS_EM, (report["exact_match"], report["wrong"])  # type: ignore[arg-type]
            misses = [m for m in misses if " EM " not in m]  # its own floor, above
        assert not misses, (misses, report["wrong"])
        acc = report["acc_at_conf"]
        assert acc["accuracy"] is None or acc["accuracy"] >= 0.95 or acc["n"] < 20, acc  # type: ignore[index]


_ANSWERS = """
import json, sys
import bench.qa as qa
from esc.agents.query.agent import QueryAgent
from esc.agents.query.memstore import MemoryGraphStore
from tests.paths import REPO
pack = qa.find_pack("flights", REPO / "tests" / "data" / "eval", "all")
graph = MemoryGraphStore()
contract, _, _ = qa.load(pack.drop, graph)
agent = QueryAgent(contract, graph)
out = []
for q in qa.read_questions(pack.sets["questions"]):
    a = agent.ask(q["question"])
    out.append([q["id"], a.route, a.confidence, json.dumps(a.answer, default=str, sort_keys=True)])
print(json.dumps(out))
"""


def test_answers_do_not_depend_on_hash_order() -> None:
    """Readings tie-break in a fixed order: two processes with different string hashing answer alike."""
    import json
    import os
    import subprocess
    import sys

    runs = []
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(REPO)}
        done = subprocess.run([sys.executable, "-c", _ANSWERS], env=env, capture_output=True, text=True, cwd=REPO,
                              timeout=600, check=True)  # fmt: skip
        runs.append(json.loads(done.stdout.strip().splitlines()[-1]))
    assert runs[0] == runs[1]
