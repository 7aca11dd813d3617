"""``esc push SOURCE FILE|-``: send JSON records to esc.records (invalid ones to esc.dlq with the reason);
``--delete ID`` retracts pushed records (tombstones); ``--embedded`` pushes into the embedded state instead."""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from esc.settings import Settings, load

if TYPE_CHECKING:
    from esc.streams.events import DeadLetter, RecordEnvelope

    Item = RecordEnvelope | DeadLetter


def push(
    source: str = typer.Argument(..., help="Source name the records belong to."),
    file: str = typer.Argument(None, help="JSONL / JSON file, or - for standard input (optional with --delete)."),
    id_field: str = typer.Option(None, "--id-field", help="Payload field to use as the record id."),
    delete: list[str] = typer.Option(
        [], "--delete", metavar="ID", help="Retract the pushed record with this id (repeat for more)."
    ),
    embedded: bool = typer.Option(
        False, "--embedded", help="Push into the embedded state in ESC_STATE_DIR (no Kafka); returns when current."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print a JSON summary."),
) -> None:
    """Push JSON records (one object per line, a JSON array in any layout, or one object) onto esc.records.

    Each record is checked as the worker checks it; invalid and oversized ones (over 1 MiB), and those that do not
    fit their source's record schema under the current contract (`esc schema --record-schemas`), go to esc.dlq with
    the reason, and the rest are sent."""
    from esc.commands.schema import fetch_contract
    from esc.streams.events import DeadLetter
    from esc.streams.push import against_contract, envelopes_from_bytes

    settings = load()
    if file is None and not delete:
        typer.echo("give a FILE (or - for standard input) to push, or --delete ID to retract records", err=True)
        raise typer.Exit(2)
    if file not in (None, "-") and not Path(file).is_file():
        typer.echo(f"no such file: {file}", err=True)
        raise typer.Exit(2)
    items: list[RecordEnvelope | DeadLetter] = []
    if file is not None:
        with contextlib.ExitStack() as stack:
            fh = sys.stdin.buffer if file == "-" else stack.enter_context(Path(file).open("rb"))
            items = list(envelopes_from_bytes(source, fh.read(), id_field))
        if any(not isinstance(i, DeadLetter) for i in items):
            items = against_contract(items, asyncio.run(fetch_contract(settings, None, embedded)))
    reasons: Counter[str] = Counter(i.reason.split(":", 1)[0] for i in items if isinstance(i, DeadLetter))
    dead = sum(reasons.values())
    sent = len(items) - dead
    if embedded:
        where = _push_embedded(settings, source, items, delete)
    else:
        asyncio.run(_push_kafka(settings, source, items, delete))
        where = settings.topic("records")
    if as_json:
        typer.echo(json.dumps({"source": source, "sent": sent, "dead_letters": dead, "accepted": sent,
                               "rejected": dead, "deleted": len(delete), "reasons": dict(reasons.most_common())}))
    else:
        gone = f"; {len(delete)} retracted" if delete else ""
        typer.echo(f"pushed {sent} record(s) to {where}; {dead} rejected to the dead-letter queue{gone}")


async def _push_kafka(settings: Settings, source: str, items: Sequence[Item], delete: list[str]) -> None:
    from esc.streams.events import DeadLetter, record_key
    from esc.streams.runtime.kafka_io import ensure_topics, producer
    from esc.streams.topics import DLQ, RECORDS

    await ensure_topics(settings)
    prod = producer(settings)
    await prod.start()
    records = RECORDS.name(settings.topic_prefix)
    try:
        for item in items:
            if isinstance(item, DeadLetter):
                await prod.send(DLQ.name(settings.topic_prefix), item.model_dump_json().encode(), key=source.encode())
            else:
                await prod.send(records, item.model_dump_json().encode(), key=item.key().encode())
        for rid in delete:  # a tombstone under the record's key retracts it
            await prod.send(records, None, key=record_key(source, rid).encode())
        await prod.flush()
    finally:
        await prod.stop()


def _push_embedded(settings: Settings, source: str, items: Sequence[Item], delete: list[str]) -> str:
    from esc.agents.stores.embedded.db import StoreLocked
    from esc.streams.runtime.inprocess import open_runtime, state_folder

    try:
        runtime, close = open_runtime(settings, None)
    except StoreLocked as exc:
        typer.echo(f"{exc}\n(a running `esc up --embedded` holds the store: stop it, or push through Kafka)", err=True)
        raise typer.Exit(1) from exc
    try:
        summary = asyncio.run(runtime.push(source, items, delete))
    finally:
        close()
    return f"{state_folder(settings.state_dir)} (contract v{summary.contract_version})"


def register(app: typer.Typer) -> None:
    app.command("push")(push)
