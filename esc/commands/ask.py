"""``esc ask "..."``: one question, answered with citations from the graph (or the vector index).

Stack mode (default): the latest contract from ``<prefix>.schema.contracts`` (key ``ESC_APP_ID``), Neo4j, and the
Weaviate collection of the app. ``--embedded``: the contract and the DuckDB stores of ``esc ingest/up --embedded``
in ``ESC_STATE_DIR``; when a running ``esc up --embedded`` holds those files, the question goes to its
``POST /v1/ask`` on ``ESC_WEB_PORT`` instead (said on stderr). ``--json`` prints the answer object:
``{answer, citations[{source, record_id, location}], route, confidence, contract_version}`` plus diagnostics.
Exit status: 0 answered or abstained (``route`` says which), 1 nothing to ask against, 2 bad usage.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import typer

from esc.settings import Settings, load

CONTRACT_TIMEOUT_S = 30.0
HTTP_TIMEOUT_S = 120.0
_DIAGNOSTICS = ("reason", "unmatched", "low_confidence", "plan", "query", "latency_ms", "text", "extension")


def _fail(message: str, code: int = 1) -> typer.Exit:
    typer.echo(f"esc ask: {message}", err=True)
    return typer.Exit(code)


def answer_json(answer: dict[str, Any]) -> dict[str, Any]:
    """The answer shape, with diagnostics only when they say something."""
    out = {k: answer.get(k) for k in ("answer", "citations", "route", "confidence", "contract_version")}
    out["citations"] = out["citations"] or []
    for key in _DIAGNOSTICS:
        if answer.get(key) not in (None, False):
            out[key] = answer[key]
    return out


def _print(answer: dict[str, Any], as_json: bool) -> None:
    if as_json:
        typer.echo(json.dumps(answer_json(answer), ensure_ascii=False, default=str))
        return
    if answer.get("route") == "abstain":
        typer.echo(f"I don't know: {answer.get('reason') or 'nothing grounds the question'}")
    else:
        value = answer.get("text") or answer.get("answer")
        typer.echo(value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str))
    typer.echo(
        f"  route {answer.get('route')}, confidence {answer.get('confidence')}, "
        f"contract v{answer.get('contract_version')}"
        + (" (weak evidence)" if answer.get("low_confidence") else "")
    )
    cites = answer.get("citations") or []
    for c in cites[:10]:
        where = f" ({c.get('location')})" if c.get("location") else ""
        typer.echo(f"  - {c.get('source')} {c.get('record_id')}{where}")
    if len(cites) > 10:
        typer.echo(f"  ... {len(cites) - 10} more citations")
    if answer.get("query"):
        typer.echo(f"  query: {answer['query']}")


# -- stack mode ------------------------------------------------------------------------------------------------


def latest_contract(settings: Settings) -> Any:
    """The latest contract on the compacted contracts topic, or None."""
    from esc.streams.runtime.kafka_io import read_topic
    from esc.streams.schema_events import latest_key, parse_contract
    from esc.streams.topics import SCHEMA_CONTRACTS

    key = latest_key(settings.app_id)

    async def fetch() -> Any:
        found = None
        async for msg in read_topic(
            settings, SCHEMA_CONTRACTS.name(settings.topic_prefix), key_filter=lambda k: k == key
        ):
            if msg.value is not None:
                found = parse_contract(msg.value)
        return found

    async def bounded() -> Any:
        return await asyncio.wait_for(fetch(), CONTRACT_TIMEOUT_S)

    return asyncio.run(bounded())


def _ask_stack(settings: Settings, question: str, options: Any) -> dict[str, Any]:
    from esc.streams.runtime.stores import query_service

    try:
        contract = latest_contract(settings)
    except Exception as exc:
        raise _fail(f"cannot read the contract from Kafka at {settings.kafka_bootstrap}: {exc or type(exc).__name__} "
                    "(is the stack up? `esc stack status`; or use --embedded)") from exc  # fmt: skip
    if contract is None:
        raise _fail(
            f"no contract for {settings.app_id!r} on {settings.topic('schema.contracts')} yet: ingest data first"
        )
    service = query_service(settings)
    try:
        service.on_contract(contract)
        return service.ask(question, options).model_dump(mode="json")
    finally:
        service.close()


# -- embedded mode ---------------------------------------------------------------------------------------------


def embedded_contract(settings: Settings) -> Any:
    from esc.contract.serde import load_json

    path = settings.state_dir / "inprocess" / "contract.json"
    return load_json(path.read_text("utf-8")) if path.exists() else None


def _ask_http(settings: Settings, question: str, options: Any) -> dict[str, Any]:
    import urllib.error
    import urllib.request

    from esc.streams.runtime.http_auth import bearer

    url = f"http://{settings.host}:{settings.web_port}/v1/ask"
    body = json.dumps({"question": question, "options": options.model_dump()}).encode("utf-8")
    headers = {"Content-Type": "application/json", **bearer(settings.api_token)}
    req = urllib.request.Request(url, data=body, headers=headers, method="POST")
    try:
        with urllib.request.urlopen(req, timeout=HTTP_TIMEOUT_S) as resp:
            data = json.loads(resp.read().decode("utf-8"))
    except urllib.error.HTTPError as exc:
        raise _fail(f"{url} answered HTTP {exc.code}: {exc.read()[:300].decode('utf-8', 'replace')}") from exc
    except (urllib.error.URLError, OSError, ValueError) as exc:
        raise _fail(
            f"the embedded store is locked by another process and {url} did not answer: {exc}"
        ) from exc
    if not isinstance(data, dict):
        raise _fail(f"{url} returned something that is not an answer object")
    return data


def _ask_embedded(settings: Settings, question: str, options: Any) -> dict[str, Any]:
    from esc.agents.query.service import LazyEmbedder
    from esc.agents.stores.embedded import open_embedded
    from esc.agents.stores.embedded.db import StoreLocked
    from esc.streams.runtime.stores import query_service

    try:
        graph, vectors = open_embedded(settings.state_dir)
    except StoreLocked:
        typer.echo(
            f"esc ask: the embedded store in {settings.state_dir} is held by a running `esc up --embedded`; "
            f"asking it over HTTP (port {settings.web_port})",
            err=True,
        )
        return _ask_http(settings, question, options)
    try:
        contract = embedded_contract(settings)
        if contract is None:
            raise _fail(
                f"no contract in {settings.state_dir / 'inprocess'} yet: run `esc ingest DIR --embedded` first"
            )
        from esc.agents.embedding import get_embedder
        from esc.streams.runtime.names import collection_for

        service = query_service(
            settings, graph=graph, vectors=vectors, embedder=LazyEmbedder(get_embedder),
            collection=collection_for(settings.app_id), cache_dir=settings.state_dir / "inprocess" / "grounding",
        )  # fmt: skip
        service.on_contract(contract)
        return service.ask(question, options).model_dump(mode="json")
    finally:
        graph.close()
        vectors.close()


def ask(
    question: str = typer.Argument(..., help="The question, in plain words."),
    as_json: bool = typer.Option(False, "--json", help="Print the answer object as JSON."),
    embedded: bool = typer.Option(
        False, "--embedded", help="Ask the embedded stores in ESC_STATE_DIR (no servers)."
    ),
    llm: bool = typer.Option(
        False, "--llm", help="Plan with the LLM (ESC_LLM_BASE_URL); validated like any plan."
    ),
    explain: bool = typer.Option(False, "--explain", help="Include the plan and the compiled query."),
    no_vectors: bool = typer.Option(False, "--no-vectors", help="Never fall back to vector search."),
) -> None:
    """Answer one question from the graph and the vector index, with citations (or say why not)."""
    from esc.streams.events import QueryOptions

    settings = load()
    if llm and not settings.llm_base_url.strip():
        raise _fail("--llm needs ESC_LLM_BASE_URL (an OpenAI-compatible endpoint)", 2)
    if not question.strip():
        raise _fail("the question is empty", 2)
    options = QueryOptions(
        mode="llm" if llm else "deterministic", vector_fallback=not no_vectors, explain=explain
    )
    answer = (_ask_embedded if embedded else _ask_stack)(settings, question, options)
    _print(answer, as_json)


def register(app: typer.Typer) -> None:
    app.command("ask")(ask)
