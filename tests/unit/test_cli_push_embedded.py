"""``esc push --embedded`` and ``esc schema --embedded`` as a user types them (subprocesses): a pretty-printed JSON
array with one 5 MB record lands except that record (DLQ with the reason, said in the summary), the pushed source
settles at once, ``--delete`` retracts a record, and every ``esc schema`` form reads the embedded state."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from esc.contract.entities import entity_name


def esc(env: dict[str, str], *args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[str]:
    run = subprocess.run([sys.executable, "-m", "esc.cli", *args], env=env, capture_output=True, timeout=300,
                         input=stdin.decode() if stdin is not None else None, text=True)  # fmt: skip
    return run


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    out = {k: v for k, v in os.environ.items() if not k.startswith("ESC_")}
    out.update(ESC_STATE_DIR=str(tmp_path / "state"), ESC_EMBEDDER="hashing", ESC_APP_ID="pushed")
    return out


def graph_rows(state: Path, label: str) -> list[dict[str, object]]:
    from esc.agents.stores.embedded import open_embedded

    graph, vectors = open_embedded(state)
    try:
        rows = graph.read("SELECT json_extract(props, '/id') AS id, json_extract_string(props, '/name') AS name "
                          "FROM entities WHERE label = $l AND NOT stub", {"l": label})  # fmt: skip
        return sorted(rows, key=lambda r: int(str(r["id"])))
    finally:
        graph.close()
        vectors.close()


def test_push_embedded_with_an_oversized_record_then_delete_and_read_the_schema(
    env: dict[str, str], tmp_path: Path
) -> None:
    people = [{"id": 1, "name": "Ada"}, {"id": 2, "name": "Alan"}, {"id": 3, "name": "Grace"}]
    huge = {"id": 4, "name": "Big", "notes": "x" * (5 << 20)}
    file = tmp_path / "people.json"
    file.write_text(json.dumps([*people[:2], huge, people[2]], indent=2), "utf-8")  # an array over many lines

    first = esc(env, "push", "people", str(file), "--id-field", "id", "--embedded", "--json")
    assert first.returncode == 0, first.stderr
    summary = json.loads(first.stdout.strip().splitlines()[-1])
    assert summary["accepted"] == 3 and summary["rejected"] == 1 and summary["deleted"] == 0
    assert sum(summary["reasons"].values()) == 1
    dlq = [
        json.loads(x)
        for x in (Path(env["ESC_STATE_DIR"]) / "inprocess" / "dlq.jsonl").read_text().splitlines()
    ]
    assert len(dlq) == 1 and dlq[0]["reason"].startswith("record too large") and dlq[0]["source"] == "people"

    latest = esc(env, "schema", "--embedded", "--json")
    assert latest.returncode == 0, latest.stderr
    contract = json.loads(latest.stdout)
    assert contract["sources"]["people"]["records"] == 3
    assert contract["sources"]["people"]["identity_key"] == [
        "id"
    ]  # settled at the end of the push, not in 30 s
    label = entity_name("people")
    assert [r["name"] for r in graph_rows(Path(env["ESC_STATE_DIR"]), label)] == ["Ada", "Alan", "Grace"]

    gone = esc(env, "push", "people", "--delete", "2", "--embedded", "--json")
    assert gone.returncode == 0, gone.stderr
    assert json.loads(gone.stdout.strip().splitlines()[-1])["deleted"] == 1
    assert [r["name"] for r in graph_rows(Path(env["ESC_STATE_DIR"]), label)] == ["Ada", "Grace"]

    more = esc(
        env, "push", "people", "-", "--id-field", "id", "--embedded", stdin=b'{"id": 5, "name": "Edsger"}\n'
    )
    assert more.returncode == 0 and "pushed 1 record(s)" in more.stdout, more.stderr
    assert [r["name"] for r in graph_rows(Path(env["ESC_STATE_DIR"]), label)] == ["Ada", "Grace", "Edsger"]

    v = json.loads(esc(env, "schema", "--embedded", "--json").stdout)["version"]
    plain = esc(env, "schema", "--embedded")
    assert plain.returncode == 0 and f"contract pushed v{v}:" in plain.stdout, plain.stderr
    first_version = json.loads(esc(env, "schema", "--embedded", "--version", "1", "--json").stdout)
    assert first_version["version"] == 1
    diffed = esc(env, "schema", "--embedded", "--diff", "1", str(v), "--json")
    assert diffed.returncode == 0 and json.loads(diffed.stdout)["to_version"] == v
    assert "people:" in esc(env, "schema", "--embedded", "--yaml").stdout
    missing = esc(env, "schema", "--embedded", "--version", "999")
    assert missing.returncode == 1 and "version 999" in missing.stderr


def test_push_needs_a_file_or_ids_to_delete(env: dict[str, str]) -> None:
    run = esc(env, "push", "people", "--embedded")
    assert run.returncode == 2 and "--delete" in run.stderr
