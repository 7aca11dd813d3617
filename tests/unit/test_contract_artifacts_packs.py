"""The executable contract on every public pack (tests/data/eval/relational/*), embedded runtime: every version
publishes a JSON Schema (2020-12) per source that validates every record of that source, and the example queries
of the final version (a count and a lookup per entity type, a hop along every foreign key) return results on
DuckDB. The Neo4j half is tests/conformance/test_contract_examples_conformance.py."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from esc.agents.embedding import HashingEmbedder
from esc.agents.examples_runner import run_examples
from esc.agents.record_check import violation
from esc.contract.examples import example_queries
from esc.contract.record_schema import record_schemas
from esc.contract.serde import load_json
from esc.settings import load
from esc.streams.events import RecordEnvelope
from esc.streams.runtime.inprocess import InProcessRuntime, open_runtime
from tests.paths import RELATIONAL

PACKS = sorted(p.name for p in RELATIONAL.iterdir() if (p / "drop").is_dir())


@pytest.fixture(scope="module", params=PACKS)
def ingested(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[InProcessRuntime]:
    state = tmp_path_factory.mktemp(request.param)
    settings = load().replace(state_dir=state, app_id=request.param, topic_prefix="esc")
    runtime, close = open_runtime(settings, RELATIONAL / request.param / "drop", embedder=HashingEmbedder())
    try:
        asyncio.run(runtime.ingest_once())
        yield runtime
    finally:
        close()


def records(runtime: InProcessRuntime) -> dict[str, list[RecordEnvelope]]:
    out: dict[str, list[RecordEnvelope]] = {}
    for path in sorted(runtime.log.folder.glob("*.jsonl")):
        for line in path.read_text("utf-8").splitlines():
            item = json.loads(line)
            if item["v"] is not None:
                env = RecordEnvelope.model_validate_json(item["v"])
                out.setdefault(env.source, []).append(env)
    return out


def test_every_version_publishes_record_schemas_that_validate_every_record(ingested: InProcessRuntime) -> None:
    """A record schema constrains each field on its own (nothing required, other fields allowed), so a record is
    valid exactly when each of its (field, value) pairs is: each distinct pair is checked once per distinct set of
    field schemas (most versions leave a source's fields as they were)."""
    by_source = records(ingested)
    versions = sorted(Path(ingested.dir / "contracts").glob("v*.json"), key=lambda p: int(p.stem[1:]))
    assert versions and by_source
    pairs = {s: {(k, json.dumps(v, sort_keys=True)) for e in envs for k, v in e.payload.items()}
             for s, envs in by_source.items()}  # fmt: skip
    done: set[tuple[str, str]] = set()
    covered: set[str] = set()
    for path in versions:
        contract = load_json(path.read_text("utf-8"))
        schemas = record_schemas(contract)
        assert set(schemas) == set(contract.sources)
        for source, schema in schemas.items():
            Draft202012Validator.check_schema(schema)
            assert schema["type"] == "object" and "required" not in schema and schema["additionalProperties"]
            covered.add(source)
            fingerprint = (source, json.dumps(schema["properties"], sort_keys=True))
            if fingerprint in done:
                continue
            done.add(fingerprint)
            validator = Draft202012Validator(schema)
            bad = [(k, v) for k, v in sorted(pairs.get(source, ())) if not validator.is_valid({k: json.loads(v)})]
            assert not bad, f"{path.name} {source}: {len(bad)} values fail, e.g. {bad[:3]}"
    assert covered >= set(by_source)  # every record's source has a schema in some version
    final = ingested.contract
    assert final is not None
    env = next(iter(next(iter(by_source.values()))))
    assert violation(final, env.source, env.payload) is None  # what the worker and esc push check


def test_the_example_queries_return_results_on_the_embedded_store(ingested: InProcessRuntime) -> None:
    contract = ingested.contract
    assert contract is not None
    examples = example_queries(contract)
    kinds = {e.kind for e in examples}
    assert kinds == {"count", "lookup", "hop"}
    fk_rels = [r for r in contract.relationships if r.kind == "foreign_key"]
    assert len([e for e in examples if e.kind == "hop"]) >= len(fk_rels) > 0
    report, _ = run_examples(contract, ingested.ingestor.graph, "embedded")
    failed = [(r.name, r.error) for r in report.results if not r.ok]
    assert report.ran == len(examples) and not failed, failed
    # the runtime ran them on its own when the version landed, and the contract carries the report
    assert contract.examples is not None and contract.examples.version == contract.version
    assert contract.examples.failed == 0 and contract.examples.ran == report.ran
