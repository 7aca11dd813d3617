"""``esc schema``: the current contract, any earlier version, the diff between two, or a live tail of diffs; the
contract's executable artifacts: per-source record JSON Schemas (``--record-schemas``) and its example queries run
against the store (``--examples``); data drift shows in the summary and under ``drift`` in ``--json``."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

import typer

from esc.settings import Settings, load

if TYPE_CHECKING:
    from esc.contract.model import Contract


async def fetch_contract(settings: Settings, version: int | None = None, embedded: bool = False) -> Contract | None:
    """The latest contract (or one version) from esc.schema.contracts, or from the embedded state."""
    if embedded:  # the embedded runtime's compacted-topic files: contract.json, contracts/v<N>.json
        from esc.streams.runtime.inprocess import load_contract

        return load_contract(settings.state_dir, version)
    from esc.streams.runtime.kafka_io import read_topic
    from esc.streams.schema_events import latest_key, parse_contract, version_key
    from esc.streams.topics import SCHEMA_CONTRACTS

    key = latest_key(settings.app_id) if version is None else version_key(settings.app_id, version)
    found: Contract | None = None
    topic = SCHEMA_CONTRACTS.name(settings.topic_prefix)
    async for msg in read_topic(settings, topic, key_filter=lambda k: k == key):
        if msg.value is not None:
            found = parse_contract(msg.value)
    return found


def schema(
    version: int = typer.Option(None, "--version", help="Show this version instead of the latest."),
    diff: tuple[int, int] | None = typer.Option(None, "--diff", help="Show what version B added over A (two numbers)."),
    follow: bool = typer.Option(False, "--follow", help="Tail esc.schema.diffs like a subscriber (Ctrl-C stops)."),
    as_json: bool = typer.Option(False, "--json", help="JSON output."),
    as_yaml: bool = typer.Option(False, "--yaml", help="Print the whole contract as YAML."),
    embedded: bool = typer.Option(
        False, "--embedded", help="Read the embedded state in ESC_STATE_DIR instead of Kafka."
    ),
    record_schemas: bool = typer.Option(
        False, "--record-schemas", help="Print the version's JSON Schema (2020-12) of each source's records."
    ),
    examples: bool = typer.Option(
        False, "--examples", help="Run the version's example queries against the store and print their results."
    ),
) -> None:
    """Show the contract published on esc.schema.contracts, or follow esc.schema.diffs."""
    from esc.contract import serde
    from esc.contract.evolve import diff_items
    from esc.contract.model import ContractDiff
    from esc.streams.runtime.kafka_io import read_topic
    from esc.streams.topics import SCHEMA_CONTRACTS, SCHEMA_DIFFS

    settings = load()
    contracts_topic = SCHEMA_CONTRACTS.name(settings.topic_prefix)

    if embedded:
        from esc.streams.runtime.inprocess import state_folder

        contracts_topic = str(state_folder(settings.state_dir))

    async def fetch(version: int | None) -> Contract | None:
        """The latest contract, or one version."""
        return await fetch_contract(settings, version, embedded)

    async def events() -> AsyncIterator[bytes]:
        if embedded:  # diffs.jsonl, followed as it grows
            path = state_folder(settings.state_dir) / "diffs.jsonl"
            done = 0
            while True:
                if path.exists():
                    with path.open("rb") as fh:
                        fh.seek(done)
                        for line in fh:
                            if not line.endswith(b"\n"):
                                break  # a line being written: read it whole next time
                            done += len(line)
                            yield line
                await asyncio.sleep(0.5)
        async for msg in read_topic(settings, SCHEMA_DIFFS.name(settings.topic_prefix), follow=True):
            if msg.value is not None:
                yield msg.value

    async def tail() -> None:
        async for value in events():
            event = json.loads(value)
            if as_json:
                typer.echo(json.dumps(event, sort_keys=True))
            else:
                data = event.get("data", {})
                kinds = ", ".join(f"{k}: {len(v)}" for k, v in data.get("added", {}).items())
                typer.echo(f"v{data.get('from_version')} -> v{data.get('to_version')}  {kinds}  ({data.get('reason', '')})")

    if follow:
        try:
            asyncio.run(tail())
        except KeyboardInterrupt:
            pass
        return

    cid = settings.app_id
    if diff is not None and None not in diff:
        a, b = diff
        old, new = asyncio.run(fetch(a)), asyncio.run(fetch(b))
        if old is None or new is None:
            typer.echo(f"version {a if old is None else b} not found on {contracts_topic}", err=True)
            raise typer.Exit(1)
        d = ContractDiff(contract_id=cid, from_version=a, to_version=b, added=diff_items(old, new))
        if as_json:  # the shape of an esc.schema.diffs event's data
            data = {"contract_id": cid, "from_version": a, "to_version": b, "added": serde.diff_added_by_kind(d)}
            typer.echo(json.dumps(data, indent=2, sort_keys=True))
        else:
            typer.echo(serde.dump_diff_yaml(d))
        return

    contract = asyncio.run(fetch(version))
    if contract is None:
        typer.echo(f"no contract{'' if version is None else f' version {version}'} on {contracts_topic} yet", err=True)
        raise typer.Exit(1)
    if record_schemas:
        from esc.contract.record_schema import record_schemas as schemas_of

        typer.echo(json.dumps(schemas_of(contract), indent=2, ensure_ascii=False))
    elif examples:
        from esc.commands.schema_examples import show_examples

        if show_examples(settings, contract, embedded, as_json):
            raise typer.Exit(1)
    elif as_json:
        typer.echo(serde.dump_json(contract))
    elif as_yaml:
        typer.echo(serde.dump_yaml(contract))
    else:
        from esc.commands.schema_examples import summary_lines

        for line in summary_lines(contract):
            typer.echo(line)


def register(app: typer.Typer) -> None:
    app.command("schema")(schema)
