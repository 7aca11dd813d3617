"""``esc schema``: the current contract, any earlier version, the diff between two, or a live tail of diffs."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator

import typer

from esc.settings import load


def schema(
    version: int = typer.Option(None, "--version", help="Show this version instead of the latest."),
    diff: tuple[int, int] | None = typer.Option(None, "--diff", help="Show what version B added over A (two numbers)."),
    follow: bool = typer.Option(False, "--follow", help="Tail esc.schema.diffs like a subscriber (Ctrl-C stops)."),
    as_json: bool = typer.Option(False, "--json", help="JSON output."),
    as_yaml: bool = typer.Option(False, "--yaml", help="Print the whole contract as YAML."),
    embedded: bool = typer.Option(
        False, "--embedded", help="Read the embedded state in ESC_STATE_DIR instead of Kafka."
    ),
) -> None:
    """Show the contract published on esc.schema.contracts, or follow esc.schema.diffs."""
    from esc.contract import serde
    from esc.contract.evolve import diff_items
    from esc.contract.model import Contract, ContractDiff
    from esc.streams.runtime.kafka_io import read_topic
    from esc.streams.schema_events import latest_key, parse_contract, version_key
    from esc.streams.topics import SCHEMA_CONTRACTS, SCHEMA_DIFFS

    settings = load()
    contracts_topic = SCHEMA_CONTRACTS.name(settings.topic_prefix)

    if embedded:
        from esc.streams.runtime.inprocess import load_contract, state_folder

        contracts_topic = str(state_folder(settings.state_dir))

    async def fetch(version: int | None) -> Contract | None:
        """The latest contract, or one version."""
        if embedded:  # the embedded runtime's compacted-topic files: contract.json, contracts/v<N>.json
            return load_contract(settings.state_dir, version)
        key = latest_key(settings.app_id) if version is None else version_key(settings.app_id, version)
        found: Contract | None = None
        async for msg in read_topic(settings, contracts_topic, key_filter=lambda k: k == key):
            if msg.value is not None:
                found = parse_contract(msg.value)
        return found

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
    if as_json:
        typer.echo(serde.dump_json(contract))
    elif as_yaml:
        typer.echo(serde.dump_yaml(contract))
    else:
        typer.echo(f"contract {contract.contract_id} v{contract.version}: {len(contract.sources)} sources, "
                   f"{len(contract.foreign_keys)} foreign keys, {len(contract.entities)} entity types")
        for name, src in sorted(contract.sources.items()):
            key_text = ", ".join(src.identity_key) or "(none proven)"
            typer.echo(f"  {name} [{src.format}] {src.records} records, {len(src.fields)} fields, key: {key_text}")


def register(app: typer.Typer) -> None:
    app.command("schema")(schema)
