"""``esc ingest DIR``: read a folder once into the embedded stores, wait until everything is current, and exit.

The same pipeline as ``esc up --embedded`` (file connector -> profiler -> contract writer -> extraction worker ->
graph and vectors, with backfills), run until every topic is read and the backfill is idle. State persists in
``ESC_STATE_DIR``: a second run reads only new, changed and deleted files and continues the contract's versions.

Only the embedded mode ingests once. On the stack the worker is the ingester: ``esc up --data DIR`` watches the
folder and keeps Kafka, Neo4j and Weaviate current (``esc push`` sends records from elsewhere); without
``--embedded``, this command runs embedded when no Kafka is configured or answering, and otherwise says so and
exits with status 2 rather than guess.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import typer

from esc.settings import Settings, load

MAX_REASONS_SHOWN = 5


def describe_diff(event: dict[str, Any]) -> str:
    """One line for a schema-diff CloudEvent: versions, what was added by kind (a few names), why."""
    data = event.get("data", {})
    parts = []
    for kind, items in sorted(data.get("added", {}).items()):
        names = [str(i.get("target", "")) for i in items]
        shown = ", ".join(names[:4]) + (f" (+{len(names) - 4})" if len(names) > 4 else "")
        parts.append(f"{kind}: {shown}")
    reason = data.get("reason") or ""
    return f"v{data.get('from_version')} -> v{data.get('to_version')}  " + "; ".join(parts) + (
        f"  ({reason[:160]})" if reason else ""
    )


def contract_lines(contract: Any) -> list[str]:
    out = [
        f"contract {contract.contract_id} v{contract.version}: {len(contract.sources)} sources, "
        f"{len(contract.entities)} entity types, {len(contract.foreign_keys)} foreign keys"
    ]
    for name, src in sorted(contract.sources.items()):
        key = ", ".join(src.identity_key) or "(none proven)"
        out.append(f"  {name} [{src.format}] {src.records} records, {len(src.fields)} fields, key: {key}")
    return out


def _run(settings: Settings, folder: Path, as_json: bool) -> Any:
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from esc.streams.runtime.inprocess import ingest_embedded

    console = Console(stderr=True)
    with Progress(
        TextColumn("[bold]ingest"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("files"),
        TimeElapsedColumn(),
        TextColumn("{task.description}"),
        console=console,
        transient=as_json or not console.is_terminal,
        disable=not console.is_terminal,
    ) as progress:
        task = progress.add_task("", total=None)

        def advance(name: str, done: int, total: int) -> None:
            progress.update(task, completed=done, total=total, description=name[-60:])

        return ingest_embedded(settings, folder, progress=advance)


def ingest(
    folder: Path = typer.Argument(..., help="Folder of source files (CSV/TSV, JSON/JSONL, XML, Excel, Parquet, text)."),
    embedded: bool = typer.Option(False, "--embedded", help="Ingest into the embedded stores in ESC_STATE_DIR."),
    as_json: bool = typer.Option(False, "--json", help="Print the run summary as JSON."),
) -> None:
    """Ingest a folder once (embedded: no servers) and exit when contract, graph and vectors are current."""
    from esc.commands.run import choose_mode

    settings = load()
    if not folder.is_dir():
        typer.echo(f"esc ingest: {folder} is not a folder", err=True)
        raise typer.Exit(2)
    mode = choose_mode(settings, embedded)
    if not mode.embedded:
        typer.echo(
            f"esc ingest: stack mode ({mode.reason}) ingests continuously: run `esc up --data {folder}` "
            "(the worker watches the folder and keeps Kafka, Neo4j and Weaviate current). "
            "Use `esc ingest DIR --embedded` for a one-shot ingest without servers.",
            err=True,
        )
        raise typer.Exit(2)
    if not embedded:
        typer.echo(f"esc ingest: embedded mode ({mode.reason})", err=True)
    from esc.agents.stores.embedded.db import StoreLocked
    from esc.streams.runtime.inprocess import load_contract

    try:
        summary = _run(settings, folder.resolve(), as_json)
    except StoreLocked as exc:
        typer.echo(f"esc ingest: {exc}", err=True)
        raise typer.Exit(1) from exc
    contract = load_contract(settings.state_dir)
    if as_json:
        out = summary.to_json()
        out["state_dir"] = str(settings.state_dir)
        out["sources"] = {n: s.records for n, s in sorted(contract.sources.items())} if contract else {}
        typer.echo(json.dumps(out, ensure_ascii=False, default=str))
        return
    typer.echo(
        f"ingested {summary.files} new or changed files ({summary.files_deleted} deleted), {summary.records} records "
        f"in {summary.seconds} s -> contract v{summary.contract_version}, state in {settings.state_dir}"
    )
    for event in summary.diffs:
        typer.echo("  diff " + describe_diff(event))
    if summary.dead:
        typer.echo(f"  {summary.dead} dead letters (rest ingested), e.g.:")
        for reason, n in summary.dead_reasons.most_common(MAX_REASONS_SHOWN):
            typer.echo(f"    {n} x {reason}")
    if summary.deferred:
        typer.echo(f"  {summary.deferred} records wait for a contract that covers their source")
    if contract is not None:
        for line in contract_lines(contract):
            typer.echo(line)
    sys.stdout.flush()


def register(app: typer.Typer) -> None:
    app.command("ingest")(ingest)
