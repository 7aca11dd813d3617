"""Two ESC_APP_IDs on one stack keep disjoint graphs: the same file (same source, same labels, same keys) dropped
into two workers lands twice, each app answers from its own data, and retracting in one leaves the other whole."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from esc.contract.entities import entity_name
from tests.integration.worker import Worker, poll

pytestmark = pytest.mark.integration


def test_two_app_ids_on_one_stack_have_disjoint_graphs(kafka_bootstrap: str, neo4j_driver: Any, tmp_path: Path) -> None:
    import json
    import urllib.request

    a, b = Worker(tmp_path / "a"), Worker(tmp_path / "b")
    source = "planets"  # the same source name in both apps: the same contract label (Planet)
    rows = {a: [(1, "Mercury", 0), (2, "Venus", 0), (3, "Earth", 1)], b: [(1, "Kepler", 5), (2, "Gliese", 2)]}

    def names(w: Worker) -> list[str]:
        q = f"MATCH (n:`{w.label(entity_name(source))}`) RETURN n.name AS name ORDER BY n.id"
        return [r["name"] for r in neo4j_driver.execute_query(q).records]

    def ask(w: Worker, question: str) -> dict[str, Any]:
        req = urllib.request.Request(f"http://127.0.0.1:{w.web_port}/v1/ask", method="POST",
                                     data=json.dumps({"id": "q", "question": question}).encode(),
                                     headers={"Content-Type": "application/json"})  # fmt: skip
        with urllib.request.urlopen(req, timeout=60) as resp:
            return dict(json.load(resp))

    try:
        for w in (a, b):
            w.start()
            body = "".join(f"{i},{n},{m}\n" for i, n, m in rows[w])
            (w.data / f"{source}.csv").write_text("id,name,moons\n" + body, "utf-8")
        for w in (a, b):
            poll(lambda w=w: names(w), lambda got, w=w: got == [n for _, n, _ in rows[w]], 120, "each app's graph", w.log)
        assert a.label("x") != b.label("x")
        got = ask(a, "How many planets are there?")  # each app counts its own nodes only
        assert got["answer"] == 3 and got["citations"][0]["source"] == source, got
        assert ask(b, "How many planets are there?")["answer"] == 2
        (a.data / f"{source}.csv").unlink()  # retract app a's file: app b keeps its nodes
        poll(lambda: names(a), lambda got: got == [], 120, "app a's nodes retracted", a.log)
        assert names(b) == ["Kepler", "Gliese"]
    finally:
        for w in (a, b):
            w.stop()
            neo4j_driver.execute_query(
                f"MATCH (n:`{w.label(entity_name(source))}`) OPTIONAL MATCH (n)-[:DERIVED_FROM]->(s) DETACH DELETE n, s"
            )
