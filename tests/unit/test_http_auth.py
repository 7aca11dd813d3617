"""ESC_API_TOKEN: the data endpoints answer 401 without the bearer token (embedded runtime here; the Faust worker
in tests/integration/test_queries_topic.py), /metrics and /healthz stay open, and no API binds beyond loopback
without a token."""

from __future__ import annotations

import asyncio
import json
import socket
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from esc.agents.embedding import HashingEmbedder
from esc.settings import load
from esc.streams.runtime.http_auth import InsecureBind, authorized, bearer, check_bind, is_loopback
from esc.streams.runtime.inprocess import open_runtime


def test_authorized_needs_the_exact_bearer_token_on_data_paths_only() -> None:
    ok = {"Authorization": "Bearer s3cret"}
    assert authorized("/v1/ask", ok, "s3cret")
    assert authorized("/v1/ask", {"Authorization": "bearer s3cret"}, "s3cret")  # the scheme is case-insensitive
    for bad in ({}, {"Authorization": "Bearer s3cre"}, {"Authorization": "s3cret"}, {"Authorization": "Basic s3cret"}):
        assert not authorized("/v1/ask", bad, "s3cret")
        assert not authorized("/v1/schema", bad, "s3cret")
        assert not authorized("/contract", bad, "s3cret")
        assert authorized("/metrics", bad, "s3cret") and authorized("/healthz", bad, "s3cret")
    assert authorized("/v1/ask", {}, "")  # no token configured: open (loopback only, see check_bind)
    assert bearer("t") == {"Authorization": "Bearer t"} and bearer("") == {}


def test_binding_beyond_loopback_needs_a_token() -> None:
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost") and is_loopback("127.8.0.1")
    assert not is_loopback("0.0.0.0") and not is_loopback("10.1.2.3") and not is_loopback("example.org")
    check_bind("127.0.0.1", "")
    check_bind("0.0.0.0", "tok")
    with pytest.raises(InsecureBind, match="ESC_API_TOKEN"):
        check_bind("0.0.0.0", "")


def test_the_embedded_api_answers_401_without_the_token(tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    data = tmp_path / "data"
    data.mkdir()
    (data / "cities.csv").write_text("code,name\nOSL,Oslo\nLIS,Lisbon\n", "utf-8")
    settings = load().replace(state_dir=tmp_path / "state", app_id="auth", topic_prefix="esc")
    runtime, close = open_runtime(settings, data, embedder=HashingEmbedder())
    base = f"http://127.0.0.1:{port}"

    def status(path: str, headers: dict[str, str], body: bytes | None = None) -> int:
        req = urllib.request.Request(base + path, data=body, headers=headers, method="POST" if body else "GET")
        try:
            with urllib.request.urlopen(req, timeout=30) as resp:
                return int(resp.status)
        except urllib.error.HTTPError as exc:
            return int(exc.code)

    async def scenario() -> dict[str, int]:
        task = asyncio.create_task(runtime.serve("127.0.0.1", port, tick_seconds=0.5, token="s3cret"))
        try:
            for _ in range(200):  # up, and the file ingested
                await asyncio.sleep(0.1)
                if runtime.contract is not None:
                    try:
                        await asyncio.to_thread(status, "/healthz", {})
                        break
                    except OSError:
                        continue
            ask = json.dumps({"question": "What is the name of the city with code OSL?"}).encode()
            good = {"Content-Type": "application/json", **bearer("s3cret")}
            wrong = {"Content-Type": "application/json", **bearer("other")}
            return {
                "metrics": await asyncio.to_thread(status, "/metrics", {}),
                "healthz": await asyncio.to_thread(status, "/healthz", {}),
                "ask no token": await asyncio.to_thread(status, "/v1/ask", {"Content-Type": "application/json"}, ask),
                "ask wrong token": await asyncio.to_thread(status, "/v1/ask", wrong, ask),
                "ask": await asyncio.to_thread(status, "/v1/ask", good, ask),
                "schema no token": await asyncio.to_thread(status, "/v1/schema", {}),
                "schema": await asyncio.to_thread(status, "/v1/schema", good),
                "contract no token": await asyncio.to_thread(status, "/contract", {}),
                "contract": await asyncio.to_thread(status, "/contract", good),
            }
        finally:
            task.cancel()
            try:
                await task
            except asyncio.CancelledError:
                pass

    try:
        got = asyncio.run(scenario())
    finally:
        close()
    assert got == {
        "metrics": 200, "healthz": 200,
        "ask no token": 401, "ask wrong token": 401, "ask": 200,
        "schema no token": 401, "schema": 200,
        "contract no token": 401, "contract": 200,
    }  # fmt: skip


def test_the_embedded_api_refuses_to_bind_beyond_loopback_without_a_token(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    settings = load().replace(state_dir=tmp_path / "state", app_id="auth2", topic_prefix="esc")
    runtime, close = open_runtime(settings, data, embedder=HashingEmbedder())
    try:
        with pytest.raises(InsecureBind):
            asyncio.run(runtime.serve("0.0.0.0", 0, tick_seconds=0.5))
    finally:
        close()


def test_esc_up_on_every_interface_without_a_token_is_a_clear_usage_error(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    env = {**os.environ, "ESC_HOST": "0.0.0.0", "ESC_API_TOKEN": "", "ESC_STATE_DIR": str(tmp_path / "state")}
    run = subprocess.run([sys.executable, "-m", "esc.cli", "up", "--embedded", "--data", str(tmp_path / "d")],
                         env=env, capture_output=True, text=True, timeout=120)  # fmt: skip
    assert run.returncode == 2, run.stderr
    assert "ESC_API_TOKEN" in run.stderr and "Traceback" not in run.stderr
