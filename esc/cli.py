"""The ``esc`` command line. Each command family lives in ``esc/commands/<name>.py`` and registers itself here."""

from __future__ import annotations

import importlib

import typer

app = typer.Typer(
    name="esc",
    help="ESC: executable schema contracts over streaming sources (Kafka, Neo4j, Weaviate, Prometheus).",
    no_args_is_help=True,
    add_completion=False,
)

@app.callback()
def _root() -> None:
    """ESC: executable schema contracts over streaming sources."""


# Modules under esc.commands that expose ``register(app)``. Imported lazily-ish: each module keeps heavy
# imports (faust, neo4j, weaviate) inside its command functions so `esc --help` stays fast.
_COMMAND_MODULES = ("stack", "discover", "run", "push", "schema", "ask", "ingest")


def _register_all() -> None:
    for name in _COMMAND_MODULES:
        try:
            module = importlib.import_module(f"esc.commands.{name}")
        except ModuleNotFoundError as exc:
            if exc.name == f"esc.commands.{name}":
                continue  # command family not built yet
            raise
        module.register(app)


_register_all()


def main() -> None:
    from pydantic import ValidationError

    try:
        app()
    except ValidationError as exc:
        if exc.title != "Settings":
            raise
        for err in exc.errors():
            name = "ESC_" + "_".join(str(p) for p in err["loc"]).upper()
            typer.echo(f"esc: invalid configuration: {name}={err.get('input')!r}: {err['msg']}", err=True)
        raise SystemExit(2) from None


if __name__ == "__main__":
    main()
