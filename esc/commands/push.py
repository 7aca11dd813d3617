"""``esc push SOURCE FILE|-``: send JSON records to esc.records (invalid ones to esc.dlq with the reason)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
from collections import Counter
from pathlib import Path

import typer

from esc.settings import load


def push(
    source: str = typer.Argument(..., help="Source name the records belong to."),
    file: str = typer.Argument(..., help="JSONL / JSON file, or - for standard input."),
    id_field: str = typer.Option(None, "--id-field", help="Payload field to use as the record id."),
    as_json: bool = typer.Option(False, "--json", help="Print a JSON summary."),
) -> None:
    """Push JSON records (one object per line, a JSON array in any layout, or one object) onto esc.records.

    Each record is checked as the worker checks it; invalid and oversized ones (over 1 MiB) go to esc.dlq with the
    reason, and the rest are sent."""
    from streams.events import DeadLetter
    from streams.push import envelopes_from_bytes
    from streams.runtime.kafka_io import ensure_topics, producer
    from streams.topics import DLQ, RECORDS

    settings = load()
    if file != "-" and not Path(file).is_file():
        typer.echo(f"no such file: {file}", err=True)
        raise typer.Exit(2)

    async def run() -> tuple[int, int]:
        await ensure_topics(settings)
        prod = producer(settings)
        await prod.start()
        sent = dead = 0
        try:
            with contextlib.ExitStack() as stack:
                fh = sys.stdin.buffer if file == "-" else stack.enter_context(Path(file).open("rb"))
                for item in envelopes_from_bytes(source, fh.read(), id_field):
                    if isinstance(item, DeadLetter):
                        await prod.send(
                            DLQ.name(settings.topic_prefix), item.model_dump_json().encode(), key=source.encode()
                        )
                        dead += 1
                        reasons[item.reason.split(":", 1)[0]] += 1
                    else:
                        await prod.send(
                            RECORDS.name(settings.topic_prefix), item.model_dump_json().encode(), key=item.key().encode()
                        )
                        sent += 1
            await prod.flush()
        finally:
            await prod.stop()
        return sent, dead

    reasons: Counter[str] = Counter()
    sent, dead = asyncio.run(run())
    if as_json:
        typer.echo(json.dumps({"source": source, "sent": sent, "dead_letters": dead, "accepted": sent,
                               "rejected": dead, "reasons": dict(reasons.most_common())}))
    else:
        typer.echo(f"pushed {sent} record(s) to {settings.topic('records')}; {dead} rejected to {settings.topic('dlq')}")


def register(app: typer.Typer) -> None:
    app.command("push")(push)
