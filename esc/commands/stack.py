"""``esc stack up|down|status|logs``: the native Kafka, Neo4j, Weaviate and Prometheus, without Docker."""

from __future__ import annotations

import json
import sys
import time
from typing import Annotated

import typer

stack_app = typer.Typer(
    name="stack",
    help="Install (cached), start, check and stop the native stack: Kafka, Neo4j, Weaviate, Prometheus.",
    no_args_is_help=True,
)

OnlyOption = Annotated[
    str | None, typer.Option("--only", help="Comma-separated services, e.g. kafka,neo4j (default: all).")
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON on stdout.")]


def _err(message: str) -> None:
    typer.echo(message, err=True)


@stack_app.command("up")
def up_command(
    only: OnlyOption = None,
    as_json: JsonOption = False,
    timeout: Annotated[
        float | None, typer.Option("--timeout", help="Seconds to wait for each service to become ready.")
    ] = None,
) -> None:
    """Install what is missing, then start the services one after another and wait until each really answers."""
    from esc import settings as settings_module
    from esc import stack

    settings = settings_module.load()
    say = _err if as_json else typer.echo
    started = time.monotonic()
    try:
        timings = stack.up(settings, only, say=say, timeout=timeout)
    except ValueError as exc:
        _err(f"error: {exc}")
        raise typer.Exit(2) from exc
    except stack.StackError as exc:
        _err(f"error: {exc}")
        raise typer.Exit(1) from exc
    total = time.monotonic() - started
    if as_json:
        statuses = [s.model_dump() for s in stack.status(settings, only)]
        typer.echo(json.dumps({"seconds": round(total, 2), "ready_seconds": timings, "services": statuses}))
    else:
        typer.echo(f"stack up in {total:.1f} s: " + ", ".join(f"{k} {v:.1f} s" for k, v in timings.items()))


@stack_app.command("down")
def down_command(only: OnlyOption = None, as_json: JsonOption = False) -> None:
    """Stop the services in reverse order (SIGTERM, wait, SIGKILL). Safe to run twice."""
    from esc import settings as settings_module
    from esc import stack

    settings = settings_module.load()
    try:
        stopped = stack.down(settings, only, say=_err if as_json else typer.echo)
    except ValueError as exc:
        _err(f"error: {exc}")
        raise typer.Exit(2) from exc
    except stack.StackError as exc:
        _err(f"error: {exc}")
        raise typer.Exit(1) from exc
    if as_json:
        typer.echo(json.dumps({"stopped": stopped}))


@stack_app.command("status")
def status_command(only: OnlyOption = None, as_json: JsonOption = False) -> None:
    """Each service up/down with its address, checked with a real request (not just the pid). Exit 1 if any is down."""
    from esc import settings as settings_module
    from esc import stack

    settings = settings_module.load()
    try:
        statuses = stack.status(settings, only)
    except ValueError as exc:
        _err(f"error: {exc}")
        raise typer.Exit(2) from exc
    if as_json:
        typer.echo(json.dumps([s.model_dump() for s in statuses]))
    else:
        for s in statuses:
            pid = f"pid {s.pid}" if s.pid else "no pid"
            line = f"{s.name:<11} {s.state:<8} {s.address:<40} {pid:<11} log: {s.log}"
            typer.echo(line + (f"\n            {s.detail}" if s.detail and s.state != "down" else ""))
    if any(s.state not in ("up", "foreign") for s in statuses):
        raise typer.Exit(1)


@stack_app.command("logs")
def logs_command(
    service: Annotated[
        str | None, typer.Argument(help="kafka, neo4j, weaviate or prometheus (default: all).")
    ] = None,
    lines: Annotated[int, typer.Option("-n", "--lines", help="How many last lines to show.")] = 40,
) -> None:
    """Print the last lines of a service's log (or of every service's log)."""
    from esc import settings as settings_module
    from esc import stack
    from esc.stack.process import tail

    settings = settings_module.load()
    try:
        names = stack.parse_only(service)
    except ValueError as exc:
        _err(f"error: {exc}")
        raise typer.Exit(2) from exc
    for name in names:
        path = stack.log_path(settings, name)
        if len(names) > 1:
            typer.echo(f"==> {path} <==")
        text = tail(path, lines)
        if text:
            sys.stdout.write(text + "\n")
        else:
            typer.echo(f"(no log yet at {path})")


def register(app: typer.Typer) -> None:
    app.add_typer(stack_app, name="stack")
