"""What ``esc schema`` prints beyond the contract itself: the summary (sources, drift past the alert thresholds, the
last example check) and ``--examples`` (the version's example queries run against the store now)."""

from __future__ import annotations

import json
from typing import Any

import typer

from esc.contract.model import Contract
from esc.settings import Settings

SHOWN_ROWS = 3


def summary_lines(contract: Contract) -> list[str]:
    from esc.contract.drift import drifted

    lines = [f"contract {contract.contract_id} v{contract.version}: {len(contract.sources)} sources, "
             f"{len(contract.foreign_keys)} foreign keys, {len(contract.entities)} entity types"]  # fmt: skip
    for name, src in sorted(contract.sources.items()):
        key_text = ", ".join(src.identity_key) or "(none proven)"
        lines.append(f"  {name} [{src.format}] {src.records} records, {len(src.fields)} fields, key: {key_text}")
    over = {s: drifted(r) for s, r in sorted(contract.drift.items())}
    over = {s: f for s, f in over.items() if f}
    if contract.drift:
        lines.append("drift (latest window of each source against the previous): "
                     + ("none past the alert thresholds" if not over else ""))  # fmt: skip
        for source, fields in over.items():
            for name, measures in sorted(fields.items()):
                shown = ", ".join(f"{m} {v:.3g}" for m, v in sorted(measures.items()))
                lines.append(f"  {source}.{name}: {shown} (window {contract.drift[source].window})")
    ex = contract.examples
    if ex is not None:
        state = "all passed" if not ex.failed else f"{ex.failed} failed"
        lines.append(f"example queries of v{ex.version} on {ex.store or 'the store'}: {ex.ran} ran, {state}"
                     + ("" if ex.version == contract.version else f" (v{contract.version} not checked yet)"))
        lines += [f"  failed: {r.name}: {r.error}" for r in ex.results if not r.ok]
    return lines


def _open_graph(settings: Settings, embedded: bool) -> tuple[Any, str]:
    if embedded:
        from esc.agents.stores.embedded import open_embedded

        graph, vectors = open_embedded(settings.state_dir)
        vectors.close()
        return graph, "embedded"
    from esc.agents.stores.neo4j import Neo4jGraphStore, label_namespace

    return Neo4jGraphStore(settings.neo4j_uri, namespace=label_namespace(settings.app_id)), "neo4j"


def show_examples(settings: Settings, contract: Contract, embedded: bool, as_json: bool) -> bool:
    """Run and print the examples; True when any failed."""
    from esc.agents.examples_runner import run_examples
    from esc.agents.query.cypher import compile_plan

    try:
        graph, store = _open_graph(settings, embedded)
    except Exception as exc:
        typer.echo(f"cannot open the {'embedded store' if embedded else 'Neo4j store'}: {exc}", err=True)
        raise typer.Exit(1) from exc
    try:
        report, runs = run_examples(contract, graph, store)
    finally:
        graph.close()
    if as_json:
        out = {"contract_id": contract.contract_id, "version": contract.version, "store": store, "ran": report.ran,
               "failed": report.failed, "examples": []}  # fmt: skip
        for run in runs:
            assert run.result is not None
            out["examples"].append({  # type: ignore[attr-defined]
                **run.result.model_dump(mode="json", exclude_none=True),
                "plans": [p.model_dump(mode="json", exclude_none=True) for p in run.plans],
                "cypher": [compile_plan(p)[0] for p in run.plans],
                "results": [r.values for r in run.rows[:SHOWN_ROWS]],
            })
        typer.echo(json.dumps(out, indent=2, ensure_ascii=False, default=str))
        return report.failed > 0
    typer.echo(f"example queries of contract {contract.contract_id} v{contract.version} on {store}: "
               f"{report.ran} ran, {report.failed} failed")  # fmt: skip
    for run in runs:
        r = run.result
        assert r is not None
        mark = "ok  " if r.ok else "FAIL"
        rows = [json.dumps(x.values, ensure_ascii=False, default=str) for x in run.rows[:SHOWN_ROWS]]
        typer.echo(f"{mark} {r.name}: {r.error if not r.ok else ', '.join(rows)}")
        if run.plans:
            typer.echo("       " + " ".join(compile_plan(run.plans[-1])[0].split()))
    return report.failed > 0
