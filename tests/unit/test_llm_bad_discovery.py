"""`esc discover --llm` against an endpoint that answers badly: malformed or truncated JSON, only invented field ids,
slow answers, 429 and 5xx, a broken body, a budget or deadline used up. In every case the command succeeds, the
contract is the deterministic one (or that plus only what the closed-world check accepts), and the outcome says
what went wrong."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from esc.agents.llm import LLMConfig, LLMDiscovery, config_from_settings
from esc.contract.evolve import check_monotonic, evolve
from esc.contract.model import Contract
from esc.settings import Settings
from tests.fakes.contracts import chinook_like
from tests.fakes.openai_server import Fail, FakeOpenAI, Hang, Raw
from tests.unit.test_cli_discover import run, write_drop

INVENTED = "f_0000000000000bad"
RETRY_NOW = (("Retry-After", "0"),)


def base() -> Contract:
    return evolve(None, chinook_like())[0]


def discovery(server: FakeOpenAI, **kw: Any) -> LLMDiscovery:
    cfg = {"timeout": 5.0, "max_retries": 0, **kw}
    return LLMDiscovery(LLMConfig(base_url=server.base_url, model="fake", **cfg))


def only_invented(request: dict[str, Any]) -> dict[str, Any]:
    return {"entities": [{"name": "Ghost", "source": "Customer", "anchor": [INVENTED],
                          "attributes": [{"field_id": INVENTED, "name": "ghost"}]}]}  # fmt: skip


BAD = {
    "not json": ["I think the schema looks fine!"],
    "truncated json": ['{"entities": [{"name": "Contact", "attributes": ['],
    "invented ids": [only_invented],
    "slow": [Hang(3.0, "{}")],
    "429": [Fail(429, '{"error": {"message": "rate limited"}}', RETRY_NOW)],
    "500": [Fail(500)],
    "broken body": [Raw("<html>bad gateway</html>")],
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_a_bad_endpoint_leaves_the_deterministic_contract(case: str) -> None:
    c = base()
    with FakeOpenAI(BAD[case]) as server:
        outcome = discovery(server, timeout=1.0).discover(c)
    if case == "slow":  # the 1 s timeout ends the request, the 3 s answer is not waited for
        assert "Timeout" in outcome.passes[0].error
    assert outcome.contract == c, case  # nothing added (invented ids are all dropped: nothing left to add)
    assert check_monotonic(c, outcome.contract) == []
    if case == "invented ids":
        report = outcome.passes[0].report
        assert outcome.passes[0].ok and report["field_validity_received"] == 0.0 and report["dropped"]
    else:
        assert not outcome.passes[0].ok and outcome.errors


def test_429_and_500_are_retried_then_the_answer_is_used() -> None:
    c = base()
    name = c.sources["Customer"].field("Email")
    assert name is not None
    good = {"entities": [{"name": "Contact", "source": "Customer", "anchor": [name.id],
                          "attributes": [{"field_id": name.id, "name": "email"}]}]}  # fmt: skip
    with FakeOpenAI([Fail(429, '{"error": {"message": "slow down"}}', RETRY_NOW), Fail(503), good, "{}"]) as server:
        outcome = discovery(server, max_retries=2).discover(c)
        requests = len(server.requests)
    assert [p.ok for p in outcome.passes] == [True, True]
    assert outcome.contract.entity("Contact") is not None and check_monotonic(c, outcome.contract) == []
    assert requests == 4  # two retried, then pass 1 and pass 2


def test_the_call_budget_and_the_deadline_stop_a_run() -> None:
    c = base()
    with FakeOpenAI(["{}"]) as server:
        outcome = discovery(server, max_calls=1).discover(c)
        assert len(server.requests) == 1
    assert outcome.passes[0].ok and "budget" in outcome.passes[1].error
    with FakeOpenAI([Hang(4.0, "{}")]) as server:  # a 30 s timeout would wait; the 1 s deadline cuts it
        outcome = discovery(server, timeout=30.0, deadline=1.0).discover(c)
    assert outcome.contract == c and "Timeout" in outcome.passes[0].error


def test_limits_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ESC_LLM_BASE_URL", "http://127.0.0.1:9/v1")
    for name, value in (("ESC_LLM_TIMEOUT", "7.5"), ("ESC_LLM_RETRIES", "4"), ("ESC_LLM_MAX_CALLS", "3"),
                        ("ESC_LLM_DEADLINE", "42")):  # fmt: skip
        monkeypatch.setenv(name, value)
    cfg = config_from_settings(Settings())
    assert cfg is not None and (cfg.timeout, cfg.max_retries, cfg.max_calls, cfg.deadline) == (7.5, 4, 3, 42.0)
    monkeypatch.setenv("ESC_LLM_TIMEOUT", "soon")
    with pytest.raises(ValueError, match="llm_timeout"):  # pydantic's ValidationError names the field
        config_from_settings(Settings())


@pytest.mark.parametrize("case", sorted(BAD))
def test_esc_discover_llm_keeps_running_and_writes_the_deterministic_contract(
    case: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    drop = write_drop(tmp_path / "drop")
    assert run(str(drop), "--out", str(tmp_path / "plain.yaml"))[0] == 0
    monkeypatch.setenv("ESC_LLM_TIMEOUT", "1")
    monkeypatch.setenv("ESC_LLM_RETRIES", "0")
    with FakeOpenAI(BAD[case]) as server:
        monkeypatch.setenv("ESC_LLM_BASE_URL", server.base_url)
        code, output = run(str(drop), "--llm", "--json", "--out", str(tmp_path / "llm.yaml"))
    assert code == 0, output
    assert (tmp_path / "llm.yaml").read_text() == (tmp_path / "plain.yaml").read_text()
    report = json.loads(output)["llm"]
    assert report["errors"] or report["passes"][0]["report"]["field_validity_received"] == 0.0
