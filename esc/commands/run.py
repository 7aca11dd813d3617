"""``esc up``: run a worker that watches a drop folder and keeps contract, graph and vectors current.

Two modes, one product (same agents, contract, topics and answers):

- stack (Kafka mode): the Faust worker on Kafka, Neo4j and Weaviate (``streams/runtime/faust_app.py``);
- embedded: the in-process runtime on DuckDB stores in ``ESC_STATE_DIR`` (``streams/runtime/inprocess.py``),
  no servers.

``--embedded`` forces the embedded mode; otherwise it is chosen when ``ESC_KAFKA_BOOTSTRAP`` is unset and no broker
answers on the default port. The mode and the reason are printed.
"""

from __future__ import annotations

import faulthandler
import signal
from dataclasses import dataclass
from pathlib import Path

import typer

from esc import probe
from esc.settings import Settings, load


@dataclass(frozen=True)
class Mode:
    embedded: bool
    reason: str

    @property
    def name(self) -> str:
        return "embedded" if self.embedded else "stack"


def choose_mode(settings: Settings, embedded: bool) -> Mode:
    """Embedded when asked, or when no Kafka is configured and none answers locally; else the stack."""
    if embedded:
        return Mode(True, "--embedded given")
    if settings.kafka_bootstrap_env:
        return Mode(False, f"ESC_KAFKA_BOOTSTRAP={settings.kafka_bootstrap_env}")
    if probe.kafka_reachable(settings.kafka_bootstrap):
        return Mode(False, f"a Kafka broker answers at {settings.kafka_bootstrap}")
    return Mode(True, f"ESC_KAFKA_BOOTSTRAP is unset and no Kafka broker answers at {settings.kafka_bootstrap}")


def up(
    data: Path = typer.Option(None, "--data", help="Drop folder to watch (created if missing)."),
    embedded: bool = typer.Option(
        False, "--embedded", help="Run everything in this process on local files in ESC_STATE_DIR (no servers)."
    ),
    loglevel: str = typer.Option("info", "--loglevel"),
) -> None:
    """Run the ESC worker: drop folder -> records -> contract, graph and vectors, with /metrics over HTTP."""
    # `kill -USR1 <pid>` prints every thread's stack to stderr: how to see where a stuck worker waits.
    faulthandler.register(signal.SIGUSR1, all_threads=True)
    settings = load()
    from esc.streams.runtime.http_auth import InsecureBind, check_bind

    try:
        check_bind(settings.host, settings.api_token)
    except InsecureBind as exc:
        typer.echo(str(exc), err=True)
        raise typer.Exit(2) from exc
    mode = choose_mode(settings, embedded)
    if mode.embedded:
        _up_embedded(settings, data, mode, loglevel)
        return
    if not probe.kafka_reachable(settings.kafka_bootstrap):
        typer.echo(
            f"Kafka is not reachable at {settings.kafka_bootstrap} ({mode.reason}). Start the local stack with "
            "`esc stack up`, point ESC_KAFKA_BOOTSTRAP at a broker, or run without servers: `esc up --embedded`.",
            err=True,
        )
        raise typer.Exit(2)
    from esc.streams.runtime.faust_app import run_worker

    typer.echo(
        f"ESC worker (stack mode: {mode.reason}): broker {settings.kafka_bootstrap}, Neo4j {settings.neo4j_uri}, "
        f"Weaviate {settings.weaviate_url}, metrics http://{settings.host}:{settings.web_port}/metrics"
        + (f", watching {data}" if data else "")
    )
    run_worker(settings, data.resolve() if data else None, loglevel=loglevel)


def _up_embedded(settings: Settings, data: Path | None, mode: Mode, loglevel: str) -> None:
    import logging

    if data is None:
        typer.echo("embedded mode needs a folder to watch: esc up --data DIR [--embedded]", err=True)
        raise typer.Exit(2)
    logging.basicConfig(level=loglevel.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    from esc.agents.stores.embedded.db import StoreLocked
    from esc.streams.runtime.inprocess_http import serve_embedded

    base = f"http://{settings.host}:{settings.web_port}"
    typer.echo(
        f"ESC (embedded mode: {mode.reason}): state in {settings.state_dir}, watching {data.resolve()}, "
        f"{base}/metrics, {base}/healthz, POST {base}/v1/ask"
    )
    try:
        serve_embedded(settings, data.resolve())
    except StoreLocked as exc:
        typer.echo(str(exc), err=True)
        raise typer.Exit(1) from exc


def register(app: typer.Typer) -> None:
    app.command("up")(up)
