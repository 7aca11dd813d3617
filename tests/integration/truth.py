"""A pack's ground truth (``truth.json``) against the graph a worker built: nodes per source (all with provenance,
none a stub) and relationships per foreign key / nesting, in the worker's label namespace."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from esc.contract.entities import entity_name


def pack_truth(pack: Path) -> dict[str, Any]:
    path = pack / "truth.json"
    assert path.exists(), f"the eval pack is missing: {path}"
    return dict(json.loads(path.read_text("utf-8")))


def drop_pack(pack: Path, into: Path) -> None:
    """Copy the pack's files into a watched folder the way a well-behaved producer does (write, then rename)."""
    for f in sorted((pack / "drop").iterdir()):
        tmp = into / f".{f.name}.part"
        shutil.copyfile(f, tmp)
        tmp.rename(into / f.name)


def wipe_labels(driver: Any, labels: list[str], sources: list[str], ns: str = "") -> None:
    """Delete these labels' nodes and these sources' records (auto-commit: CALL ... IN TRANSACTIONS needs it);
    ``ns`` is the label namespace of the worker's app id."""
    with driver.session() as session:
        for label in labels:
            session.run(f"MATCH (n:`{ns}{label}`) CALL (n) {{ DETACH DELETE n }} IN TRANSACTIONS OF 5000 ROWS").consume()
        session.run(
            f"MATCH (s:`{ns}SourceRecord`) WHERE s.source IN $sources "
            "CALL (s) { DETACH DELETE s } IN TRANSACTIONS OF 5000 ROWS",
            sources=sources,
        ).consume()


def expected_counts(truth: dict[str, Any]) -> dict[str, Any]:
    nodes = {s: (v["rows"], 0, 0) for s, v in truth["sources"].items()}
    edges: dict[tuple[str, str], int] = {}
    for fk in truth["foreign_keys"]:
        key = (entity_name(fk["from"]["source"]), entity_name(fk["to"]["source"]))
        edges[key] = edges.get(key, 0) + fk["child_nonnull_rows"]
    for h in truth["hierarchy"]:  # nesting: parent -[HAS_...]-> child; the child's FK to the parent is the same link
        key = (entity_name(h["child"]), entity_name(h["parent"]))
        edges.pop(key, None)
        edges[(entity_name(h["parent"]), entity_name(h["child"]))] = truth["sources"][h["child"]]["rows"]
    return {"nodes": nodes, "edges": edges}


def graph_counts(driver: Any, truth: dict[str, Any], ns: str = "") -> dict[str, Any]:
    """Nodes per source (count, without provenance, stubs) and relationships per expected (from, to) label pair,
    in the graph of label namespace ``ns``."""
    nodes = {}
    for source in truth["sources"]:
        rec = driver.execute_query(
            f"MATCH (n:`{ns}{entity_name(source)}`) RETURN count(n) AS n, "
            f"count(CASE WHEN NOT EXISTS {{ (n)-[:DERIVED_FROM]->(:`{ns}SourceRecord`) }} THEN 1 END) AS unsourced, "
            "count(CASE WHEN n._stub THEN 1 END) AS stubs"
        ).records[0]
        nodes[source] = (rec["n"], rec["unsourced"], rec["stubs"])
    edges = {}
    for src, dst in expected_counts(truth)["edges"]:
        rec = driver.execute_query(
            f"MATCH (a:`{ns}{src}`)-[r]->(b:`{ns}{dst}`) WHERE type(r) <> 'DERIVED_FROM' RETURN count(r) AS c"
        ).records[0]
        edges[(src, dst)] = rec["c"]
    return {"nodes": nodes, "edges": edges}
