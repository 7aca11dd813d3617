"""Data drift through a real Prometheus: an embedded worker (``esc up --embedded``) ingests a sensor file, the file's
next version shifts a numeric column and leaves another mostly empty; Prometheus scrapes the drift gauges and the
rules in ops/prometheus/rules fire for exactly those fields (a real evaluation; the rule logic alone is tested with
``promtool test rules`` in tests/unit/test_stack_config.py)."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import time
import urllib.parse
import urllib.request
import uuid
from pathlib import Path
from typing import Any

import pytest

from esc.settings import Settings
from tests.integration.worker import free_port

pytestmark = pytest.mark.integration


def write(path: Path, shift: float, null_share: float) -> None:
    rnd = random.Random(7)
    lines = ["reading_id,station,temperature,humidity"]
    for i in range(1, 401):
        humidity = "" if rnd.random() < null_share else str(rnd.randint(30, 90))
        lines.append(f"{i},S{i % 7},{round(rnd.gauss(20 + shift, 3), 2)},{humidity}")
    tmp = path.with_name(f".{path.name}.part")
    tmp.write_text("\n".join(lines) + "\n", "utf-8")
    tmp.replace(path)  # appears whole, as a well-behaved producer writes it


def query(prometheus_url: str, promql: str) -> list[dict[str, Any]]:
    with urllib.request.urlopen(f"{prometheus_url}/api/v1/query?" + urllib.parse.urlencode({"query": promql}),
                                timeout=5) as response:  # fmt: skip
        body = json.load(response)
    assert body["status"] == "success", body
    return list(body["data"]["result"])


def wait_for(prometheus_url: str, promql: str, seconds: float, log: Path) -> list[dict[str, Any]]:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        found = query(prometheus_url, promql)
        if found:
            return found
        time.sleep(2)
    tail = log.read_text("utf-8", errors="replace")[-3000:] if log.exists() else ""
    raise AssertionError(f"nothing for {promql} within {seconds:.0f} s; worker log:\n{tail}")


def test_a_shift_and_a_null_jump_fire_the_drift_alerts_in_prometheus(
    prometheus_url: str, stack_settings: Settings, tmp_path: Path
) -> None:
    from esc.stack import register_target, unregister_target

    run = uuid.uuid4().hex[:8]
    source = f"readings_{run}"
    data = tmp_path / "data"
    data.mkdir()
    write(data / f"{source}.csv", 0, 0.02)
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("ESC_")}
    env.update(ESC_STATE_DIR=str(tmp_path / "state"), ESC_EMBEDDER="hashing", ESC_WEB_PORT=str(port),
               ESC_APP_ID=f"drift{run}")  # fmt: skip
    log = tmp_path / "worker.log"
    with log.open("wb") as out:
        proc = subprocess.Popen([sys.executable, "-m", "esc.cli", "up", "--data", str(data), "--embedded"],
                                env=env, stdout=out, stderr=subprocess.STDOUT)  # fmt: skip
    target = f"drift-{run}"
    register_target(stack_settings, target, f"127.0.0.1:{port}", {"test": "drift"})
    try:
        wait_for(prometheus_url, f'esc_field_null_rate{{source="{source}", field="humidity"}}', 120, log)
        write(data / f"{source}.csv", 15, 0.6)  # the next version: warmer, humidity mostly missing
        shift = wait_for(prometheus_url, f'esc_field_psi{{source="{source}", field="temperature"}} > 0.25', 120, log)
        assert float(shift[0]["value"][1]) > 1
        firing = f'ALERTS{{alertstate="firing", source="{source}"}}'
        deadline = time.monotonic() + 180
        alerts: set[tuple[str, str]] = set()
        while time.monotonic() < deadline and len(alerts) < 2:
            alerts = {(r["metric"]["alertname"], r["metric"]["field"]) for r in query(prometheus_url, firing)}
            time.sleep(3)
        assert alerts == {("EscFieldDistributionShift", "temperature"), ("EscFieldNullRateJump", "humidity")}
    finally:
        unregister_target(stack_settings, target)
        proc.terminate()
        proc.wait(timeout=60)
