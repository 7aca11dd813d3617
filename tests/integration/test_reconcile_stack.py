"""Streaming entity resolution on the real stack (Kafka, Neo4j): a worker watches a folder with a CRM, a billing and
a portal file in which Maria Keller's CRM and billing records share nothing; a new version of the portal file adds
a record with both her e-mail and her phone (the clusters merge: one canonical entity with three SAME_AS members,
score and evidence on each edge), a question over HTTP answers her current city with the conflict; the portal file
without that record splits them again. After each step the graph equals the one a fresh worker builds from the
same final files."""

from __future__ import annotations

import csv
import json
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from tests.integration.worker import Worker, poll
from tests.unit.reconcile.streaming_case import PORTAL, write_folder

pytestmark = pytest.mark.integration
CANONICAL = "_Canonical"


def _write_portal(folder: Path, rows: list[dict[str, Any]]) -> None:
    tmp = folder / ".portal_users.csv.tmp"
    with tmp.open("w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=list(PORTAL[0]))
        w.writeheader()
        w.writerows(rows)
    tmp.replace(folder / "portal_users.csv")


def snapshot(driver: Any, ns: str) -> dict[str, Any]:
    """Nodes (label, properties) and relationships (type, properties, both ends) of one app's graph, without
    internal ids or contract versions, sorted."""

    def strip(props: dict[str, Any]) -> str:
        return json.dumps({k: v for k, v in props.items() if k != "_contract_version"}, sort_keys=True, default=str)

    nodes = driver.execute_query(
        "MATCH (n) WHERE any(l IN labels(n) WHERE l STARTS WITH $ns) RETURN labels(n) AS l, properties(n) AS p",
        ns=ns,
    ).records
    rels = driver.execute_query(
        "MATCH (a)-[r]->(b) WHERE any(l IN labels(a) WHERE l STARTS WITH $ns) "
        "RETURN labels(a) AS la, properties(a) AS pa, type(r) AS t, properties(r) AS pr, labels(b) AS lb, "
        "properties(b) AS pb",
        ns=ns,
    ).records

    def lab(labels: list[str]) -> str:
        return ",".join(sorted(x[len(ns):] for x in labels))

    return {
        "nodes": sorted(f"{lab(r['l'])} {strip(r['p'])}" for r in nodes),
        "rels": sorted(f"{lab(r['la'])} {strip(r['pa'])} -{r['t']} {strip(r['pr'])}-> {lab(r['lb'])} {strip(r['pb'])}"
                       for r in rels),
    }


def _same(driver: Any, w: Worker, want: dict[str, Any]) -> None:
    """Wait for the worker's graph to equal ``want``; on timeout, fail with what differs."""
    try:
        poll(lambda: snapshot(driver, w.label("")), lambda s: s == want, 120, "the graph", w.log)
    except BaseException:
        got = snapshot(driver, w.label(""))
        diff = {k: {"missing": sorted(set(want[k]) - set(got[k]))[:5], "extra": sorted(set(got[k]) - set(want[k]))[:5]}
                for k in want}  # fmt: skip
        pytest.fail(f"graphs differ: {json.dumps(diff, indent=1)}")


def _count(driver: Any, label: str) -> int:
    return int(driver.execute_query(f"MATCH (n:`{label}`) RETURN count(n) AS c").records[0]["c"])


def _ask(worker: Worker, question: str) -> dict[str, Any]:
    req = urllib.request.Request(f"http://127.0.0.1:{worker.web_port}/v1/ask", method="POST",
                                 data=json.dumps({"question": question}).encode(),
                                 headers={"Content-Type": "application/json"})  # fmt: skip
    with urllib.request.urlopen(req, timeout=60) as resp:
        return dict(json.load(resp))


def _wipe(driver: Any, ns: str) -> None:
    driver.execute_query("MATCH (n) WHERE any(l IN labels(n) WHERE l STARTS WITH $ns) DETACH DELETE n", ns=ns)


def _settled(driver: Any, w: Worker, canon: int) -> None:
    ns = w.label("")
    want = {"CrmContact": 4, "BillingAccount": 3, CANONICAL: canon}
    poll(lambda: {k: _count(driver, ns + k) for k in want}, lambda got: got == want, 240, f"{want}", w.log)


def test_late_record_merges_and_its_deletion_splits_on_the_stack(kafka_bootstrap: str, neo4j_driver: Any,
                                                                  tmp_path: Path) -> None:
    stream = Worker(tmp_path / "stream")
    write_folder(stream.data)
    _write_portal(stream.data, PORTAL[:-1])  # without the record that links Maria's two records
    fresh = [Worker(tmp_path / f"fresh{i}") for i in range(2)]
    try:
        stream.start()
        ns = stream.label("")
        _settled(neo4j_driver, stream, 0)
        poll(lambda: _count(neo4j_driver, ns + "PortalUser"), lambda n: n == 2, 120, "portal users", stream.log)
        before = snapshot(neo4j_driver, ns)
        _write_portal(stream.data, PORTAL)  # the bridging record arrives
        _settled(neo4j_driver, stream, 8)
        poll(lambda: _count(neo4j_driver, ns + "PortalUser"), lambda n: n == 3, 120, "portal users", stream.log)
        edges = poll(lambda: neo4j_driver.execute_query(
            f"MATCH (m)-[r:SAME_AS]->(c:`{ns}{CANONICAL}`) WHERE c._members = 3 RETURN r.score AS s, r.evidence AS e"
        ).records, lambda rs: len(rs) == 3, 120, "Maria's three SAME_AS edges", stream.log)  # fmt: skip
        assert all(r["s"] > 0 and json.loads(r["e"])["rule"] for r in edges)
        answer = poll(lambda: _ask(stream, "Which city does Maria Keller live in?"),
                      lambda a: a.get("answer") == "Munich", 120, "the answer with the conflict", stream.log)  # fmt: skip
        cited = {c["source"] for v in answer["conflicts"][0]["values"] for c in v["citations"]}
        assert answer["conflicts"][0]["field"] == "city" and {"crm_contacts", "billing_accounts"} <= cited
        merged = snapshot(neo4j_driver, ns)
        # a fresh worker on the same final files builds the same graph
        write_folder(fresh[0].data)
        fresh[0].start()
        _settled(neo4j_driver, fresh[0], 8)
        _same(neo4j_driver, fresh[0], merged)
        # the bridging record goes: the cluster splits and the graph is the one without it
        _write_portal(stream.data, PORTAL[:-1])
        _settled(neo4j_driver, stream, 0)
        _same(neo4j_driver, stream, before)
        write_folder(fresh[1].data)
        _write_portal(fresh[1].data, PORTAL[:-1])
        fresh[1].start()
        _settled(neo4j_driver, fresh[1], 0)
        _same(neo4j_driver, fresh[1], before)
    finally:
        for w in (stream, *fresh):
            w.stop()
            _wipe(neo4j_driver, w.label(""))
