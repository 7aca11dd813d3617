"""The executable contract on the real stack (Faust worker, Kafka, Neo4j): the worker runs every new version's
example queries once Neo4j holds it and the contract on esc.schema.contracts carries the report; a file's next
version that shifts a column shows under ``drift`` in ``esc schema --json``; ``esc schema --examples`` runs them on
Neo4j; ``esc push`` rejects a record that does not fit its source's record schema (read from Kafka)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.integration.test_drift_alerts import write
from tests.integration.test_pipeline import read_dlq
from tests.integration.worker import Worker, poll

pytestmark = pytest.mark.integration


def schema(worker: Worker, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "esc.cli", "schema", *args], env=worker.env, capture_output=True,
                          text=True, timeout=120)  # fmt: skip


def contract(worker: Worker) -> dict[str, Any]:
    out = schema(worker, "--json")
    return json.loads(out.stdout) if out.returncode == 0 else {}


def test_examples_drift_and_pushed_record_checks_on_the_stack(
    kafka_bootstrap: str, neo4j_driver: Any, tmp_path: Path
) -> None:
    worker = Worker(tmp_path).start()
    source = f"readings{worker.run}"
    try:
        write(worker.data / f"{source}.csv", 0, 0.02)
        first = poll(lambda: contract(worker), lambda c: (c.get("examples") or {}).get("version") == c.get("version")
                     and source in c.get("drift", {}), 180, "the first version's examples and drift", worker.log)  # fmt: skip
        assert first["examples"]["store"] == "neo4j" and first["examples"]["failed"] == 0
        assert first["examples"]["ran"] >= 2 and first["drift"][source]["window"] == 1

        write(worker.data / f"{source}.csv", 15, 0.6)
        second = poll(lambda: contract(worker), lambda c: c.get("drift", {}).get(source, {}).get("window") == 2,
                      180, "the second drift window", worker.log)  # fmt: skip
        fields = second["drift"][source]["fields"]
        assert fields["temperature"]["psi"] > 0.25 and fields["humidity"]["null_rate_change"] > 0.2
        assert second["version"] == first["version"]  # drift is statistics: no new version

        ran = schema(worker, "--examples", "--json")
        assert ran.returncode == 0, ran.stdout + ran.stderr
        assert json.loads(ran.stdout)["store"] == "neo4j" and json.loads(ran.stdout)["failed"] == 0

        pushed = subprocess.run(
            [sys.executable, "-m", "esc.cli", "push", source, "-", "--id-field", "reading_id", "--json"],
            input='{"reading_id": 9001, "temperature": "warm"}\n', env=worker.env, capture_output=True, text=True,
            timeout=120, check=True,
        )
        assert json.loads(pushed.stdout)["reasons"] == {"contract violation": 1}
        dead = read_dlq(kafka_bootstrap, worker.topic("dlq"), 1, 30)
        assert any("field 'temperature' is string 'warm'" in d["reason"] and d["stage"] == "push" for d in dead)
    finally:
        worker.stop()
        neo4j_driver.execute_query("MATCH (n) WHERE any(l IN labels(n) WHERE l STARTS WITH $ns) DETACH DELETE n",
                                   ns=worker.label(""))  # fmt: skip
