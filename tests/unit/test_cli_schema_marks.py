"""The contract's time and unit marks as a user sees them: ``esc ingest --embedded`` then ``esc schema --json`` /
``--yaml`` on the suppliers pack (a year-month field, datetimes, cents with no unit word), and ``esc discover``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.paths import REPO

DROP = REPO / "tests" / "data" / "suppliers" / "drop"


def esc(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "esc.cli", *args], env=env, capture_output=True, timeout=300,
                          text=True)  # fmt: skip


def _marked(contract: dict) -> dict[tuple[str, str], dict]:  # type: ignore[type-arg]
    return {(e["source"], a["name"]): a for e in contract["entities"] for a in e["attributes"]
            if "time" in a or "unit" in a}  # fmt: skip


def test_esc_schema_shows_time_fields_and_units(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ESC_")}
    env.update(ESC_STATE_DIR=str(tmp_path / "state"), ESC_EMBEDDER="hashing")
    done = esc(env, "ingest", str(DROP), "--embedded")
    assert done.returncode == 0, done.stderr
    shown = esc(env, "schema", "--embedded", "--json")
    assert shown.returncode == 0, shown.stderr
    marks = _marked(json.loads(shown.stdout))
    assert marks[("procurement_suppliers", "onboarded")]["time"] == {"granularity": "month", "format": "YYYY-MM"}
    assert marks[("erp_vendors", "changed_on")]["time"] == {"granularity": "day", "role": "updated"}
    assert marks[("purchase_orders", "delivered_at")]["time"]["granularity"] == "minute"
    unit = marks[("procurement_suppliers", "outstanding_balance")]["unit"]
    assert (unit["scale"], unit["canonical"], unit["basis"]) == (0.01, "balance", "range")
    assert "erp_vendors.balance" in unit["rule"]
    yaml_text = esc(env, "schema", "--embedded", "--yaml").stdout
    assert "granularity: month" in yaml_text and "basis: range" in yaml_text
    found = esc(env, "discover", str(DROP), "--json")
    assert found.returncode == 0, found.stderr
    assert _marked(json.loads(found.stdout)["contract"]) == marks
