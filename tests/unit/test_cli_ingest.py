"""``esc ingest`` and the mode choice of ``esc up``/``esc ingest``, through the CLI on the shipped examples."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from esc import probe
from esc.cli import app
from esc.commands.run import choose_mode
from esc.settings import load

EXAMPLES = Path(__file__).resolve().parents[2] / "esc" / "examples"


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("ESC_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("ESC_EMBEDDER", "hashing")
    monkeypatch.setenv("ESC_APP_ID", "shop")
    monkeypatch.delenv("ESC_KAFKA_BOOTSTRAP", raising=False)
    data = tmp_path / "data"
    shutil.copytree(EXAMPLES / "shop", data)
    return data


def test_mode_is_embedded_when_asked_or_when_no_kafka_is_there(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ESC_KAFKA_BOOTSTRAP", raising=False)
    assert choose_mode(load(), embedded=True).embedded
    monkeypatch.setattr(probe, "kafka_reachable", lambda bootstrap: False)
    mode = choose_mode(load(), embedded=False)
    assert mode.embedded and "no Kafka broker answers" in mode.reason
    monkeypatch.setattr(probe, "kafka_reachable", lambda bootstrap: True)
    assert not choose_mode(load(), embedded=False).embedded
    monkeypatch.setenv("ESC_KAFKA_BOOTSTRAP", "broker:9092")
    mode = choose_mode(load(), embedded=False)
    assert not mode.embedded and "ESC_KAFKA_BOOTSTRAP=broker:9092" in mode.reason


def test_ingest_then_drift_then_ask(env: Path) -> None:
    runner = CliRunner()
    first = runner.invoke(app, ["ingest", str(env), "--embedded", "--json"])
    assert first.exit_code == 0, first.output
    run = json.loads(first.stdout.strip().splitlines()[-1])
    files = [p for p in env.iterdir() if p.is_file()]
    assert run["files"] == len(files) and run["dead"] == 0 and run["deferred"] == 0
    lines = sum(1 for line in (env / "orders.jsonl").read_text("utf-8").splitlines() if line.strip())
    assert run["sources"]["orders"] == lines
    assert [d["data"]["to_version"] for d in run["diffs"]] == list(range(1, run["contract_version"] + 1))

    again = runner.invoke(app, ["ingest", str(env), "--embedded", "--json"])
    assert again.exit_code == 0, again.output
    nothing = json.loads(again.stdout.strip().splitlines()[-1])
    assert nothing["files"] == 0 and nothing["records"] == 0 and nothing["diffs"] == []
    assert nothing["contract_version"] == run["contract_version"]

    shutil.copy(EXAMPLES / "drift" / "customers.csv", env / "customers.csv")
    drift = runner.invoke(app, ["ingest", str(env), "--embedded"])
    assert drift.exit_code == 0, drift.output
    assert f"v{run['contract_version']} -> v{run['contract_version'] + 1}" in drift.stdout
    assert "customers.loyalty_tier" in drift.stdout

    asked = runner.invoke(
        app, ["ask", "--embedded", "--json", "What is the loyalty tier of the customer Ada Lovelace?"]
    )
    assert asked.exit_code == 0, asked.output
    answer = json.loads(asked.stdout.strip().splitlines()[-1])
    with (env / "customers.csv").open(encoding="utf-8") as fh:
        header = fh.readline().strip().split(";")
        ada = next(dict(zip(header, line.strip().split(";"), strict=True)) for line in fh if ";Ada;" in line)
    assert answer["answer"] == ada["loyalty_tier"]
    assert answer["contract_version"] == run["contract_version"] + 1
    assert [c["source"] for c in answer["citations"]] == ["customers"]


def test_stack_mode_ingest_points_at_esc_up(env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(probe, "kafka_reachable", lambda bootstrap: True)
    result = CliRunner().invoke(app, ["ingest", str(env)])
    assert result.exit_code == 2
    assert "esc up --data" in result.output


def test_ingest_of_a_missing_folder_is_a_usage_error(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["ingest", str(tmp_path / "nope"), "--embedded"])
    assert result.exit_code == 2 and "is not a folder" in result.output


def test_a_symlink_out_of_the_drop_folder_is_refused_not_read(env: Path, tmp_path: Path) -> None:
    """A path-traversal hole otherwise: a link to a file outside (say /etc/passwd) would become a queryable source."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secrets.csv").write_text("user,password\nroot,hunter2\n", "utf-8")
    (env / "secrets.csv").symlink_to(outside / "secrets.csv")
    (env / "linked").symlink_to(outside, target_is_directory=True)  # a folder link: not walked
    runner = CliRunner()
    first = runner.invoke(app, ["ingest", str(env), "--embedded", "--json"])
    assert first.exit_code == 0, first.output
    run = json.loads(first.stdout.strip().splitlines()[-1])
    assert "secrets" not in run["sources"] and run["sources"]  # the rest is ingested
    assert run["dead"] == 1 and any("symbolic link" in r for r in run["dead_reasons"]), run["dead_reasons"]
    asked = runner.invoke(app, ["ask", "--embedded", "--json", "What is the password of root?"])
    assert "hunter2" not in asked.stdout
    again = json.loads(
        runner.invoke(app, ["ingest", str(env), "--embedded", "--json"]).stdout.strip().splitlines()[-1]
    )
    assert again["dead"] == 0 and again["files"] == 0  # refused once, remembered
    found = runner.invoke(app, ["discover", str(env), "--json"])
    assert "hunter2" not in found.stdout and "symbolic link" in found.output


def test_hostile_file_names_are_ingested_under_safe_source_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A control character, bytes that are not UTF-8, 240 characters, and one name in two Unicode normalizations:
    each used to abort the whole ingest (model validation, JSON serialization)."""
    import os

    monkeypatch.setenv("ESC_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("ESC_EMBEDDER", "hashing")
    data = tmp_path / "drop"
    data.mkdir()
    names = [
        b"ok.csv",
        b"bad\x07name.csv",
        b"inv\xff\xfe.csv",
        b"x" * 240 + b".csv",
        "Cafe\u0301.csv".encode(),
        "Caf\u00e9.csv".encode(),
    ]
    for i, name in enumerate(names, start=1):
        with open(os.path.join(os.fsencode(data), name), "wb") as fh:
            fh.write(f"id,v\n{i},value{i}\n".encode())
    runner = CliRunner()
    first = runner.invoke(app, ["ingest", str(data), "--embedded", "--json"])
    assert first.exit_code == 0, first.output
    run = json.loads(first.stdout.strip().splitlines()[-1])
    assert run["files"] == len(names) and run["dead"] == 0, run
    assert run["sources"]["bad\\x07name"] == 1 and run["sources"]["inv\\xff\\xfe"] == 1
    assert run["sources"]["Caf\u00e9"] == 2  # one source, two files, two records
    long = [s for s in run["sources"] if s.startswith("xxx")]
    assert len(long) == 1 and len(long[0]) <= 200
    again = json.loads(
        runner.invoke(app, ["ingest", str(data), "--embedded", "--json"]).stdout.strip().splitlines()[-1]
    )
    assert again["files"] == 0 and again["files_deleted"] == 0 and again["tombstones"] == 0  # stable names
    asked = runner.invoke(app, ["ask", "--embedded", "--json", "What is the v of Caf\u00e9 with id 5?"])
    assert json.loads(asked.stdout.strip().splitlines()[-1])["answer"] == "value5", asked.stdout


def test_a_record_that_cannot_be_json_is_dead_lettered_and_its_file_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ESC_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("ESC_EMBEDDER", "hashing")
    data = tmp_path / "drop"
    data.mkdir()
    (data / "lone.jsonl").write_text('{"id": 1, "v": "\\ud800 lone"}\n{"id": 2, "v": "fine"}\n', "utf-8")
    deep: object = "x"
    for _ in range(900):
        deep = {"a": deep}
    (data / "deep.json").write_text(json.dumps([{"id": 1, "v": deep}]), "utf-8")
    result = CliRunner().invoke(app, ["ingest", str(data), "--embedded", "--json"])
    assert result.exit_code == 0, result.output
    run = json.loads(result.stdout.strip().splitlines()[-1])
    assert run["sources"]["lone"] == 1 and run["dead"] == 1, run  # the other record of the file is ingested
    assert any("cannot be serialized" in r and "surrogates" in r for r in run["dead_reasons"])
    assert run["sources"]["deep"] == 1
