"""``esc ask --embedded`` over a state dir laid out like the embedded runtime's (DuckDB stores + contract.json),
its --json shape, and the HTTP fallback when another process holds the store."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest
from typer.testing import CliRunner

from esc.agents.query.memstore import load_folder
from esc.agents.stores.embedded import open_embedded
from esc.cli import app
from esc.contract import serde
from esc.contract.evolve import evolve
from esc.streams.discover import discover

ROWS = [
    ("1", "Ada", "London", "ada@example.org"),
    ("2", "Bo", "Paris", "bo@example.org"),
    ("3", "Cy", "Paris", "cy@x.io"),
]


@pytest.fixture(scope="module")
def state_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    data = tmp_path_factory.mktemp("data")
    (data / "Person.csv").write_text(
        "PersonId,Name,City,Email\n" + "".join(",".join(r) + "\n" for r in ROWS), encoding="utf-8"
    )
    state = tmp_path_factory.mktemp("state")
    contract, _ = evolve(None, discover(data).contract)
    graph, vectors = open_embedded(state)
    try:
        load_folder(graph, data, contract)
    finally:
        graph.close()
        vectors.close()
    (state / "inprocess").mkdir()
    (state / "inprocess" / "contract.json").write_text(serde.dump_json(contract), encoding="utf-8")
    return state


def _run(state: Path, *args: str, port: int = 6066) -> Any:
    env = {"ESC_STATE_DIR": str(state), "ESC_WEB_PORT": str(port), "ESC_LLM_BASE_URL": ""}
    return CliRunner().invoke(app, ["ask", *args], env=env)


def test_json_answer_shape_with_citations(state_dir: Path) -> None:
    result = _run(state_dir, "--embedded", "--json", "What is the email of Bo?")
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout.strip().splitlines()[-1])
    assert {"answer", "citations", "route", "confidence", "contract_version"} <= out.keys()
    assert out["answer"] == "bo@example.org" and out["route"] == "lookup"
    assert out["citations"] and set(out["citations"][0]) == {"source", "record_id", "location"}
    assert out["citations"][0]["source"] == "Person"


def test_count_in_text_mode_and_abstention(state_dir: Path) -> None:
    result = _run(state_dir, "--embedded", "How many persons live in Paris?")
    assert result.exit_code == 0 and result.stdout.splitlines()[0] == "2", result.output
    result = _run(state_dir, "--embedded", "--json", "--no-vectors", "What is the airspeed of a swallow?")
    out = json.loads(result.stdout.strip().splitlines()[-1])
    assert out["route"] == "abstain" and out["answer"] is None and out["reason"]


def test_no_contract_and_llm_without_endpoint(tmp_path: Path) -> None:
    result = _run(tmp_path, "--embedded", "How many persons?")
    assert result.exit_code == 1 and "no contract" in result.output
    result = _run(tmp_path, "--embedded", "--llm", "How many persons?")
    assert result.exit_code == 2 and "ESC_LLM_BASE_URL" in result.output


class _FakeAsk(BaseHTTPRequestHandler):
    seen: ClassVar[list[dict[str, Any]]] = []

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        _FakeAsk.seen.append({"path": self.path, "body": body})
        reply = {"id": "x", "answer": 42, "citations": [], "route": "aggregate", "confidence": 1.0,
                 "contract_version": 7}  # fmt: skip
        data = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        return None


@pytest.fixture
def fake_server() -> Iterator[int]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = HTTPServer(("127.0.0.1", port), _FakeAsk)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield port
    server.shutdown()


def test_locked_store_falls_back_to_the_running_server(state_dir: Path, fake_server: int) -> None:
    code = "from esc.agents.stores.embedded import open_embedded; import sys, time; held = open_embedded(sys.argv[1]); " \
           "print('held', flush=True); time.sleep(60)"  # fmt: skip
    holder = subprocess.Popen([sys.executable, "-c", code, str(state_dir)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        result = _run(state_dir, "--embedded", "--json", "How many persons live in Paris?", port=fake_server)
    finally:
        holder.kill()
        holder.wait()
    assert result.exit_code == 0, result.output
    assert "asking it over HTTP" in result.output
    assert json.loads(result.stdout.strip().splitlines()[-1])["answer"] == 42
    assert _FakeAsk.seen[-1]["path"] == "/v1/ask"
    assert _FakeAsk.seen[-1]["body"]["question"] == "How many persons live in Paris?"


def test_unknown_name_abstains_naming_it_and_the_grounding_is_kept(state_dir: Path) -> None:
    result = _run(state_dir, "--embedded", "--json", "--no-vectors", "What is the email of Zorro Nobody?")
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout.strip().splitlines()[-1])
    assert out["route"] == "abstain" and out["answer"] is None
    assert "Zorro Nobody" in out["reason"] and out["unmatched"] == ["Zorro Nobody"]
    kept = list((state_dir / "inprocess" / "grounding").glob("grounding-*.pickle"))
    assert len(kept) == 1  # the next process reads it instead of rebuilding
    again = _run(state_dir, "--embedded", "--json", "What is the email of Bo?")
    assert json.loads(again.stdout.strip().splitlines()[-1])["answer"] == "bo@example.org"
    assert list((state_dir / "inprocess" / "grounding").glob("grounding-*.pickle")) == kept
