"""``esc up``: run a worker that watches a drop folder and keeps contract, graph and vectors current."""

from __future__ import annotations

from pathlib import Path

import typer

from esc import probe
from esc.settings import load


def up(
    data: Path = typer.Option(None, "--data", help="Drop folder to watch (created if missing)."),
    loglevel: str = typer.Option("info", "--loglevel"),
) -> None:
    """Run the ESC worker: file watcher -> esc.records -> extractors -> Neo4j + Weaviate, with /metrics."""
    settings = load()
    if not probe.kafka_reachable(settings.kafka_bootstrap):
        typer.echo(
            f"Kafka is not reachable at {settings.kafka_bootstrap}. Start the local stack with `esc stack up` "
            "or point ESC_KAFKA_BOOTSTRAP at a broker.",
            err=True,
        )
        raise typer.Exit(2)
    from streams.runtime.faust_app import run_worker

    typer.echo(
        f"ESC worker (Kafka mode): broker {settings.kafka_bootstrap}, Neo4j {settings.neo4j_uri}, "
        f"Weaviate {settings.weaviate_url}, metrics http://{settings.host}:{settings.web_port}/metrics"
        + (f", watching {data}" if data else "")
    )
    run_worker(settings, data.resolve() if data else None, loglevel=loglevel)


def register(app: typer.Typer) -> None:
    app.command("up")(up)
