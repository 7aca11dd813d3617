"""The reconciliation packs' questions (tests/data/people and tests/data/suppliers, ``questions.jsonl``) through ESC
with entity resolution, scored like bench/qa.py; conflict questions must also carry ``conflicts`` with every
disagreeing source cited.

    PYTHONPATH=. .venv/bin/python bench/_reconcile_qa.py [tests/data/suppliers]
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from esc.agents.reconcile.hook import Reconciler
from esc.agents.stores.base import GraphStore
from esc.contract.evolve import evolve
from esc.contract.model import Contract

REPO = Path(__file__).resolve().parents[1]
PEOPLE = REPO / "tests" / "data" / "people"
SUPPLIERS = REPO / "tests" / "data" / "suppliers"


def load_reconciled(drop: Path, graph: GraphStore, batch: int = 50) -> tuple[Contract, Reconciler]:
    """Write every record of ``drop`` through the extractor into ``graph`` in batches, with entity resolution."""
    from esc.agents.extractors import plan as extract
    from esc.contract.records import Record
    from esc.streams.discover import discover
    from esc.streams.events import envelope_for
    from esc.streams.readers import read, scan_with_errors

    contract, _ = evolve(None, discover(drop).contract)
    rec = Reconciler(graph)
    rec.use(contract)
    files, _ = scan_with_errors(drop)
    for sf in files:
        envs = [envelope_for(item, sf.rel, "bench") for item in read(sf) if isinstance(item, Record)]
        for i in range(0, len(envs), batch):
            p = extract(envs[i : i + batch], contract)
            graph.upsert_entities(p.entities)
            graph.upsert_edges(p.edges)
            rec.on_written(p.entities)
    return contract, rec


def conflict_ok(q: dict[str, Any], answer: Any) -> bool:
    """A conflict question's answer names the field's conflict and cites every source the truth says holds it."""
    if not q.get("conflict_sources"):
        return True
    for c in answer.conflicts or []:
        cited = {cit.source for v in c.values for cit in v.citations}
        if set(q["conflict_sources"]) <= cited and len(c.values) >= 2:
            return True
    return False


def people_qa(verbose: bool = False) -> dict[str, Any]:
    return pack_qa(PEOPLE, verbose)


def suppliers_qa(verbose: bool = False) -> dict[str, Any]:
    return pack_qa(SUPPLIERS, verbose)


def pack_qa(pack: Path, verbose: bool = False) -> dict[str, Any]:
    """A reconciliation pack's questions (``pack/questions.jsonl`` over ``pack/drop``), scored."""
    import bench.qa as qa
    from esc.agents.query.agent import QueryAgent
    from esc.agents.query.memstore import MemoryGraphStore

    graph = MemoryGraphStore()
    contract, _ = load_reconciled(pack / "drop", graph)
    agent = QueryAgent(contract, graph)
    items, wrong, conflicts_missing = [], [], []
    questions = qa.read_questions(pack / "questions.jsonl")
    for q in questions:
        a = agent.ask(q["question"])
        s = qa.scored(q, a)
        items.append(s)
        if not s.ok:
            wrong.append({"id": q["id"], "q": q["question"], "gold": q.get("answer"), "got": a.answer,
                          "route": a.route, "reason": a.reason})  # fmt: skip
        if q.get("conflict_sources") and not conflict_ok(q, a):
            conflicts_missing.append(q["id"])
    report = qa.score_set(items)
    n_conf = sum(1 for q in questions if q.get("conflict_sources"))
    out = {"questions": report["questions"], "exact_match": report["exact_match"],
           "by_category": report["by_category"], "confident_wrong": report["confident_wrong"],
           "acc_at_conf": report["acc_at_conf"],
           "conflict_questions_with_conflicts": f"{n_conf - len(conflicts_missing)}/{n_conf}",
           "conflicts_missing": conflicts_missing}  # fmt: skip
    if verbose:
        out["wrong"] = wrong
    return out


if __name__ == "__main__":
    import sys

    print(json.dumps(pack_qa(Path(sys.argv[1]) if len(sys.argv) > 1 else PEOPLE, verbose=True), indent=1, default=str))
