"""``esc discover DIR``: profile a drop folder into a versioned schema contract.

Prints a short summary (sources with identity keys and confidences, foreign keys, hierarchy, entity types and
relationships, per-file errors) or, with ``--json``, one JSON object on stdout::

    {"contract": {...}, "diff": {...} | null, "errors": [{"file", "reason", "location"}], "seconds": 1.2,
     "llm": {"passes": [...], "errors": [...]} | null, "out": "contract.yaml" | null}

Exit codes: 0 on success, even when some files or rows were rejected (they are listed); 2 when DIR is missing
or ``--previous`` cannot be read; 1 when ``--out`` cannot be written.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

if TYPE_CHECKING:
    from rich.console import Console

    from esc.agents.llm import LLMOutcome
    from esc.contract.model import Contract, ContractDiff
    from esc.contract.records import Rejected

BIG_FILES = 50
BIG_BYTES = 20 << 20
"""A folder with at least this many files or bytes gets a progress bar (when stderr is a terminal)."""
MAX_ERRORS_SHOWN = 20


def _err(message: str) -> None:
    typer.echo(message, err=True)


def _folder_size(root: Path) -> tuple[int, int]:
    files = size = 0
    for dirpath, _dirs, names in os.walk(root):
        for name in names:
            files += 1
            try:
                size += (Path(dirpath) / name).stat().st_size
            except OSError:
                pass
    return files, size


def _size_of(root: Path, rel: str) -> int:
    path = root / rel
    try:
        if path.is_file():
            return path.stat().st_size
        if path.is_dir():
            return _folder_size(path)[1]
    except OSError:
        pass
    return 0


def _run_discovery(root: Path, console: Console, show_progress: bool) -> Any:
    from esc.streams.discover import discover
    from esc.streams.limits import max_fields as configured_max_fields

    try:
        max_fields = configured_max_fields()
    except ValueError as exc:
        _err(f"error: {exc}")
        raise typer.Exit(2) from exc
    files, size = _folder_size(root)
    if not show_progress or not console.is_terminal or (files < BIG_FILES and size < BIG_BYTES):
        return discover(root, max_fields=max_fields)
    from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn

    with Progress(
        TextColumn("[bold]discover[/bold] {task.description}"),
        BarColumn(),
        DownloadColumn(),
        TimeRemainingColumn(),
        console=console,
        transient=True,
    ) as bar:
        task = bar.add_task(root.name, total=max(size, 1))
        records = 0

        def progress(rel: str, count: int) -> None:
            nonlocal records
            records += count
            bar.update(task, advance=_size_of(root, rel), description=f"{rel} ({records:,} records)")

        return discover(root, progress=progress, max_fields=max_fields)


def _load_previous(path: Path) -> Contract:
    from esc.contract.serde import ContractFormatError, loads

    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        _err(f"error: cannot read --previous {path}: {exc.strerror or exc}")
        raise typer.Exit(2) from exc
    try:
        return loads(text, path.name)
    except ContractFormatError as exc:
        _err(f"error: --previous {path} is not a contract: {exc}")
        raise typer.Exit(2) from exc


def _run_llm(base: Contract, console: Console) -> tuple[Contract, LLMOutcome | None, str]:
    from esc import settings as settings_module
    from esc.agents.llm import LLMDiscovery, config_from_settings

    config = config_from_settings(settings_module.load())
    if config is None:
        return base, None, "LLM off: ESC_LLM_BASE_URL is empty"
    with console.status(f"LLM discovery ({config.model} at {config.base_url})"):
        outcome = LLMDiscovery(config).discover(base)
    return outcome.contract, outcome, ""


def _error_dicts(errors: list[Rejected]) -> list[dict[str, Any]]:
    return [
        {"file": e.file, "reason": e.reason, "location": e.location.render() if e.location else None}
        for e in errors
    ]


def _confidence(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def _print_summary(
    console: Console,
    contract: Contract,
    diff: ContractDiff | None,
    previous: Contract | None,
    errors: list[Rejected],
    seconds: float,
    llm: LLMOutcome | None,
    llm_note: str,
    out: Path | None,
) -> None:
    from rich.table import Table

    fields = sum(len(s.fields) for s in contract.sources.values())
    console.print(
        f"[bold]{len(contract.sources)} sources[/bold], {fields} fields, {len(contract.foreign_keys)} foreign keys, "
        f"{len(contract.hierarchy)} nesting edges in {seconds:.1f} s — contract v{contract.version} "
        f"({contract.content_hash[:12]})"
    )
    table = Table(title="Sources", title_justify="left", show_edge=False)
    for col in ("source", "format", "records", "fields", "identity key", "conf."):
        table.add_column(col, justify="right" if col in ("records", "fields", "conf.") else "left")
    for name in sorted(contract.sources):
        src = contract.sources[name]
        key = ", ".join(src.identity_key) or "[dim]none proven[/dim]"
        if "violation" in src.key_evidence:
            key += " [yellow](not re-proved)[/yellow]"
        table.add_row(
            name, src.format, f"{src.records:,}", str(len(src.fields)), key, _confidence(src.key_confidence)
        )
    console.print(table)
    if contract.foreign_keys:
        fk_table = Table(title="Foreign keys", title_justify="left", show_edge=False)
        for col in ("from", "to", "conf."):
            fk_table.add_column(col, justify="right" if col == "conf." else "left")
        for fk in sorted(contract.foreign_keys, key=lambda k: k.signature()):
            fk_table.add_row(
                f"{fk.from_.source}.{','.join(fk.from_.fields)}",
                f"{fk.to.source}.{','.join(fk.to.fields)}",
                _confidence(fk.confidence),
            )
        console.print(fk_table)
    for name in sorted(contract.sources):
        violation = contract.sources[name].key_evidence.get("violation")
        if isinstance(violation, dict):
            observed = ", ".join(violation.get("observed_key") or []) or "none"
            console.print(
                f"[yellow]warning[/yellow]: identity key of {name} ({', '.join(contract.sources[name].identity_key)}) "
                f"was not re-proved (observed key: {observed}); kept, see key_evidence.violation",
                highlight=False,
            )
    for fk in contract.foreign_keys:
        if "violation" in fk.evidence:
            console.print(
                f"[yellow]warning[/yellow]: foreign key {fk.from_.source}.{','.join(fk.from_.fields)} -> "
                f"{fk.to.source} was not re-proved; kept",
                highlight=False,
            )
    for edge in contract.hierarchy:
        console.print(f"hierarchy: {edge.parent} > {edge.child} ({edge.path})")
    console.print(f"entities ({len(contract.entities)}): " + ", ".join(e.name for e in contract.entities))
    console.print(
        f"relationships ({len(contract.relationships)}): "
        + ", ".join(f"{r.from_entity}-[{r.name}]->{r.to_entity}" for r in contract.relationships)
    )
    if llm_note:
        console.print(f"[yellow]{llm_note}[/yellow]")
    if llm is not None:
        for p in llm.passes:
            if not p.ok:
                console.print(
                    f"[yellow]LLM {p.name} pass failed: {p.error}[/yellow] (deterministic contract kept)"
                )
                continue
            r = p.report
            console.print(
                f"LLM {p.name}: FieldValidity {r.get('field_validity_received', 1.0):.2f} received, "
                f"{r.get('field_validity', 1.0):.2f} applied; +{len(r.get('added_entities', []))} entities, "
                f"+{len(r.get('added_attributes', []))} attributes, +{len(r.get('added_relationships', []))} "
                "relationships"
            )
            for line in [*r.get("dropped", []), *r.get("rejected", []), *p.problems]:
                console.print(f"  [yellow]rejected[/yellow] {line}", markup=True, highlight=False)
            for line in r.get("repaired", []):
                console.print(f"  repaired {line}", highlight=False)
    if previous is not None:
        if diff is None:
            console.print(f"no structural change: contract stays v{contract.version}")
        else:
            console.print(
                f"[bold]diff v{diff.from_version} -> v{diff.to_version}[/bold] ({len(diff.added)} added)"
            )
            for item in diff.added:
                console.print(f"  + {item.kind} {item.target}: {item.reason}", highlight=False)
    if errors:
        per_file = Counter(e.file for e in errors)
        console.print(f"[red]{len(errors)} errors[/red] in {len(per_file)} files (the rest was discovered):")
        for e in errors[:MAX_ERRORS_SHOWN]:
            where = e.location.render() if e.location else e.file
            console.print(f"  {where}: {e.reason}", highlight=False, markup=False)
        if len(errors) > MAX_ERRORS_SHOWN:
            console.print(f"  ... {len(errors) - MAX_ERRORS_SHOWN} more")
    if out is not None:
        console.print(f"wrote {out}")


def discover_command(
    directory: Annotated[Path, typer.Argument(help="Folder of source files (csv, json, jsonl, excel, ...).")],
    out: Annotated[
        Path | None,
        typer.Option("--out", "-o", help="Write the contract: YAML, or JSON when the name ends in .json."),
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print one machine-readable JSON object on stdout.")
    ] = False,
    llm: Annotated[
        bool,
        typer.Option("--llm", help="Add LLM-proposed entities/relationships (ESC_LLM_BASE_URL), validated."),
    ] = False,
    previous: Annotated[
        Path | None,
        typer.Option("--previous", help="Evolve from this earlier contract file and print the diff."),
    ] = None,
) -> None:
    """Discover the schema contract of a folder: field catalog, identity keys, foreign keys, hierarchy, entities."""
    from rich.console import Console

    from esc.contract.evolve import evolve, merge
    from esc.contract.serde import diff_to_dict, dumps, to_dict

    console = Console(stderr=as_json)
    if not directory.exists():
        _err(f"error: {directory} does not exist")
        raise typer.Exit(2)
    if not directory.is_dir():
        _err(f"error: {directory} is not a directory")
        raise typer.Exit(2)
    prev = _load_previous(previous) if previous is not None else None

    result = _run_discovery(directory, Console(stderr=True), show_progress=True)
    reason = f"esc discover {directory}"
    base = merge(prev, result.contract, reason=reason)
    outcome: LLMOutcome | None = None
    llm_note = ""
    if llm:
        base, outcome, llm_note = _run_llm(base, Console(stderr=True))
        reason += " --llm" if outcome is not None else ""
    contract, diff = evolve(prev, base, reason=reason)

    if out is not None:
        try:
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(dumps(contract, out.name), encoding="utf-8")
        except OSError as exc:
            _err(f"error: cannot write {out}: {exc.strerror or exc}")
            raise typer.Exit(1) from exc

    if as_json:
        payload = {
            "contract": to_dict(contract),
            "diff": diff_to_dict(diff) if diff is not None else None,
            "errors": _error_dicts(result.errors),
            "seconds": round(result.seconds, 3),
            "llm": outcome.summary() if outcome is not None else ({"note": llm_note} if llm_note else None),
            "out": str(out) if out is not None else None,
        }
        typer.echo(json.dumps(payload, ensure_ascii=False, indent=2, default=str))
        return
    _print_summary(console, contract, diff, prev, result.errors, result.seconds, outcome, llm_note, out)


def register(app: typer.Typer) -> None:
    app.command("discover")(discover_command)
