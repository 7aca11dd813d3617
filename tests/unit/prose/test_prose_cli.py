"""End to end, the way a user types it: `esc ingest DIR --embedded` links the notes to the people they mention (the
runtime runs the linker when drained), and `esc ask --embedded` answers from the notes with the sentence cited."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from esc.cli import app
from tests.unit.prose.conftest import PACK


def test_ingest_links_mentions_and_ask_answers_from_the_notes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ESC_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("ESC_EMBEDDER", "hashing")
    monkeypatch.delenv("ESC_KAFKA_BOOTSTRAP", raising=False)
    shutil.copytree(PACK / "drop", tmp_path / "drop")
    runner = CliRunner()
    done = runner.invoke(app, ["ingest", str(tmp_path / "drop"), "--embedded", "--json"])
    assert done.exit_code == 0, done.output
    truth = json.loads((PACK / "truth.json").read_text(encoding="utf-8"))
    q = truth["questions"][0]
    asked = runner.invoke(app, ["ask", "--embedded", "--json", q["question"]])
    assert asked.exit_code == 0, asked.output
    answer = json.loads(asked.output)
    assert answer["answer"] == q["answer"] and answer["extension"]["derived_from"] == "prose"
    assert any(c["location"].startswith(q["source"] + ":chars=") for c in answer["citations"])
    name = q["question"].rsplit(" of ", 1)[1].rstrip("?")
    said = json.loads(runner.invoke(app, ["ask", "--embedded", "--json", f"What do the notes say about {name}?"]).output)
    assert said["route"] == "vector" and all(name.split()[-1] in s for s in said["answer"])
