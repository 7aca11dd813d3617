"""esc/settings.py: one pydantic-settings object from ESC_* variables, every one of them documented in README."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from pydantic import ValidationError

from esc.contract.field_cap import MAX_FIELDS_PER_SOURCE
from esc.settings import Settings
from esc.streams.limits import max_fields
from tests.paths import REPO


def _env_names() -> list[str]:
    names = []
    for name, info in Settings.model_fields.items():
        alias = info.validation_alias
        choices = getattr(alias, "choices", None)
        names.append(str(choices[0]) if choices else f"ESC_{name.upper()}")
    return names


def test_every_variable_is_in_the_readme_table() -> None:
    readme = (REPO / "README.md").read_text("utf-8")
    table = "\n".join(ln for ln in readme.splitlines() if ln.startswith("|"))
    missing = [n for n in _env_names() if not re.search(rf"`{n}`", table)]
    assert missing == [], f"document these in README's Configuration/Ports tables: {missing}"


def test_defaults_and_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for n in _env_names():
        monkeypatch.delenv(n, raising=False)
    s = Settings()
    assert (s.app_id, s.topic_prefix, s.web_port, s.max_fields) == ("esc", "esc", 6066, MAX_FIELDS_PER_SOURCE)
    assert s.kafka_bootstrap == "127.0.0.1:9092" and s.neo4j_uri == "bolt://127.0.0.1:7687"
    monkeypatch.setenv("ESC_APP_ID", "shop")
    monkeypatch.setenv("ESC_STATE_DIR", str(tmp_path))
    monkeypatch.setenv("ESC_KAFKA_BOOTSTRAP", "broker:29092")
    monkeypatch.setenv("ESC_WEB_PORT", "")  # empty counts as unset
    s = Settings()
    assert (s.app_id, s.topic_prefix, s.state_dir, s.web_port) == ("shop", "shop", tmp_path, 6066)
    assert s.kafka_bootstrap == "broker:29092" and s.topic("records") == "shop.records"
    monkeypatch.setenv("ESC_TOPIC_PREFIX", "t")
    assert Settings().topic("dlq") == "t.dlq"


def test_constructor_and_replace_win_over_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ESC_APP_ID", "from-env")
    s = Settings(app_id="given", kafka_bootstrap_env="k:1")
    assert (s.app_id, s.topic_prefix, s.kafka_bootstrap) == ("given", "given", "k:1")
    t = s.replace(web_port=7001, app_id="other")
    assert (t.web_port, t.app_id, t.topic_prefix, s.web_port) == (7001, "other", "given", 6066)
    with pytest.raises(ValidationError):
        s.replace(web_port="not a port")


def test_bad_values_name_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ESC_WEB_PORT", "abc")
    with pytest.raises(ValidationError, match="web_port"):
        Settings()
    monkeypatch.delenv("ESC_WEB_PORT")
    monkeypatch.setenv("ESC_MAX_FIELDS", "0")
    with pytest.raises(ValidationError, match="max_fields"):
        max_fields()
    monkeypatch.setenv("ESC_MAX_FIELDS", "40")
    assert max_fields() == 40


def test_secrets_stay_out_of_repr(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ESC_API_TOKEN", "s3cret-token")
    monkeypatch.setenv("ESC_LLM_API_KEY", "sk-abc")
    text = repr(Settings())
    assert "s3cret-token" not in text and "sk-abc" not in text


def test_the_cli_names_a_bad_variable_and_exits_2(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    esc = str(Path(sys.executable).parent / "esc")
    env = {**os.environ, "ESC_WEB_PORT": "abc", "ESC_STATE_DIR": str(tmp_path)}
    done = subprocess.run([esc, "schema", "--embedded"], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert "ESC_WEB_PORT='abc'" in done.stderr and "Traceback" not in done.stderr
