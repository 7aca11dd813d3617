"""``esc schema`` and ``esc push`` as a user types them, on the embedded state: data drift after a new version of a
file (metrics, ``drift`` in ``--json``, the summary), the record schemas, the example queries with their results,
and a pushed record that does not fit its source's schema going to the DLQ with the reason."""

from __future__ import annotations

import asyncio
import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

from esc.agents import metrics
from esc.agents.embedding import HashingEmbedder
from esc.settings import load
from esc.streams.runtime.inprocess import open_runtime


def esc(env: dict[str, str], *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "esc.cli", *args], env=env, capture_output=True, timeout=300,
                          input=stdin, text=True)  # fmt: skip


def write_readings(folder: Path, shift: float, null_share: float) -> None:
    """A sensor file: temperature around 20 (+ shift), humidity missing in ``null_share`` of the rows."""
    rnd = random.Random(7)
    lines = ["reading_id,station,temperature,humidity"]
    for i in range(1, 401):
        humidity = "" if rnd.random() < null_share else str(rnd.randint(30, 90))
        lines.append(f"{i},S{i % 7},{round(rnd.gauss(20 + shift, 3), 2)},{humidity}")
    (folder / "readings.csv").write_text("\n".join(lines) + "\n", "utf-8")


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    out = {k: v for k, v in os.environ.items() if not k.startswith("ESC_")}
    out.update(ESC_STATE_DIR=str(tmp_path / "state"), ESC_EMBEDDER="hashing", ESC_APP_ID="sensors")
    return out


def test_a_shifted_column_and_a_null_jump_move_the_drift_metrics(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    write_readings(data, 0, 0.02)
    settings = load().replace(state_dir=tmp_path / "state", app_id="sensors", topic_prefix="esc")
    runtime, close = open_runtime(settings, data, embedder=HashingEmbedder())

    def value(name: str, field: str) -> float | None:
        return metrics.REGISTRY.get_sample_value(name, {"source": "readings", "field": field})

    async def run() -> None:
        await runtime.ingest_once()
        assert value("esc_field_null_rate", "humidity") is not None
        assert (value("esc_field_null_rate", "humidity") or 1) < 0.1
        first_psi = value("esc_field_psi", "temperature")
        write_readings(data, 15, 0.6)  # the file's next version: warmer, and humidity mostly missing
        await runtime.ingest_once()
        assert first_psi is None or first_psi < 0.25
        assert (value("esc_field_psi", "temperature") or 0) > 0.25
        assert (value("esc_field_ks", "temperature") or 0) > 0.3
        assert (value("esc_field_null_rate_change", "humidity") or 0) > 0.2
        assert (value("esc_field_psi", "humidity") or 1) < 0.25  # its values did not move, only their number

    try:
        asyncio.run(run())
    finally:
        close()


def test_esc_schema_shows_drift_schemas_and_examples_and_esc_push_checks_the_schema(
    env: dict[str, str], tmp_path: Path
) -> None:
    data = tmp_path / "data"
    data.mkdir()
    write_readings(data, 0, 0.02)
    assert esc(env, "ingest", str(data), "--embedded").returncode == 0
    write_readings(data, 15, 0.6)
    done = esc(env, "ingest", str(data), "--embedded")
    assert done.returncode == 0, done.stderr

    out = esc(env, "schema", "--embedded", "--json")
    assert out.returncode == 0, out.stderr
    contract = json.loads(out.stdout)
    drift = contract["drift"]["readings"]
    assert drift["window"] == 2 and drift["previous_records"] == 400
    assert drift["fields"]["temperature"]["psi"] > 0.25 and drift["fields"]["humidity"]["null_rate_change"] > 0.2
    assert drift["fields"]["temperature"]["id"] == next(
        f["id"] for f in contract["sources"]["readings"]["fields"] if f["name"] == "temperature"
    )
    assert contract["examples"]["version"] == contract["version"] and contract["examples"]["failed"] == 0

    text = esc(env, "schema", "--embedded").stdout
    assert "readings.temperature: ks" in text and "readings.humidity: null_rate_change" in text
    assert f"example queries of v{contract['version']} on embedded" in text and "all passed" in text

    schemas = json.loads(esc(env, "schema", "--embedded", "--record-schemas").stdout)
    assert schemas["readings"]["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert set(schemas["readings"]["properties"]) == {"reading_id", "station", "temperature", "humidity"}

    ran = esc(env, "schema", "--embedded", "--examples")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "ok   Reading: count: {\"n\": 400}" in ran.stdout and "FAIL" not in ran.stdout
    as_json = json.loads(esc(env, "schema", "--embedded", "--examples", "--json").stdout)
    assert as_json["failed"] == 0 and {e["kind"] for e in as_json["examples"]} == {"count", "lookup"}
    lookup = next(e for e in as_json["examples"] if e["kind"] == "lookup")
    assert lookup["results"] == [{"reading_id": 1}] and "MATCH" in lookup["cypher"][-1]

    pushed = esc(env, "push", "readings", "-", "--id-field", "reading_id", "--embedded", "--json",
                 stdin='{"reading_id": 9001, "temperature": "warm"}\n{"reading_id": 9002, "temperature": 21.5}\n')
    assert pushed.returncode == 0, pushed.stderr
    summary = json.loads(pushed.stdout)
    assert summary["accepted"] == 1 and summary["rejected"] == 1 and summary["reasons"] == {"contract violation": 1}
    dlq = [json.loads(line) for line in (tmp_path / "state" / "inprocess" / "dlq.jsonl").read_text().splitlines()]
    assert "field 'temperature' is string 'warm', the contract's type is decimal" in dlq[-1]["reason"]
    assert json.loads(dlq[-1]["original"])["reading_id"] == 9001
