from __future__ import annotations

import json
import socket
from typing import Any

import pytest

from esc.agents.llm import LLMConfig, LLMDiscovery, config_from_settings, extract_json
from esc.contract.evolve import check_monotonic, evolve
from esc.contract.model import Contract
from esc.settings import Settings
from tests.fakes.contracts import chinook_like
from tests.fakes.openai_server import Fail, FakeOpenAI, Hang

HALLUCINATED = "f_0123456789abcdef"


def base() -> Contract:
    c, _ = evolve(None, chinook_like())
    return c


def fid(c: Contract, source: str, name: str) -> str:
    f = c.sources[source].field(name)
    assert f is not None
    return f.id


def discovery(server: FakeOpenAI, timeout: float = 5.0) -> LLMDiscovery:
    return LLMDiscovery(LLMConfig(base_url=server.base_url, model="fake", timeout=timeout, max_retries=0))


def test_llm_is_off_without_a_base_url(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ESC_LLM_BASE_URL", "")
    assert config_from_settings(Settings()) is None
    monkeypatch.setenv("ESC_LLM_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("ESC_LLM_MODEL", "m")
    cfg = config_from_settings(Settings())
    assert cfg is not None and cfg.base_url == "http://127.0.0.1:9/v1" and cfg.model == "m"


def test_hallucinated_field_is_rejected_and_reported() -> None:
    c = base()
    email = fid(c, "Customer", "Email")
    pass1 = {
        "entities": [
            {
                "name": "Contact",
                "source": "Customer",
                "anchor": [email],
                "attributes": [
                    {"field_id": email, "name": "email"},
                    {"field_id": HALLUCINATED, "name": "phone"},
                ],
            }
        ]
    }
    pass2 = (
        "Here you go:\n```json\n"
        + json.dumps(
            {
                "relationships": [
                    {
                        "name": "CONTACT_OF",
                        "from_entity": "Contact",
                        "to_entity": "Customer",
                        "from_fields": [email],
                        "to_fields": ["Email"],
                    }
                ]
            }
        )
        + "\n```"
    )
    with FakeOpenAI([pass1, pass2]) as server:
        outcome = discovery(server).discover(c)
        requests = list(server.requests)
    assert [p.ok for p in outcome.passes] == [True, True]
    first = outcome.passes[0].report
    assert first["field_validity_received"] == pytest.approx(2 / 3, abs=1e-3)
    assert first["field_validity"] == 1.0
    assert any(HALLUCINATED in d for d in first["dropped"])
    assert outcome.passes[1].report["repaired"] == [f"relationship CONTACT_OF to_fields: Email -> {email}"]
    out = outcome.contract
    contact = out.entity("Contact")
    assert contact is not None and [a.field_id for a in contact.attributes] == [email]
    assert HALLUCINATED not in json.dumps(out.model_dump(mode="json"))
    assert any(r.name == "CONTACT_OF" for r in out.relationships)
    assert check_monotonic(c, out) == []
    # the prompts are grounded in the catalog and the existing schema, and pass 2 sees pass 1's result
    assert len(requests) == 2 and requests[0]["model"] == "fake"
    assert email in requests[0]["messages"][1]["content"]
    assert '"Contact"' in requests[1]["messages"][1]["content"]


def test_catalog_ids_can_be_computed_from_the_request() -> None:
    c = base()

    def answer(request: dict[str, Any]) -> dict[str, Any]:
        prompt = request["messages"][1]["content"]
        genre_like = [json.loads(line) for line in prompt.splitlines() if line.startswith('{"id"')]
        name = next(e["id"] for e in genre_like if e["source"] == "Artist" and e["name"] == "Name")
        return {"entities": [{"name": "Performer", "attributes": [name], "anchor": [name]}]}

    with FakeOpenAI([answer, "{}"]) as server:
        outcome = discovery(server).discover(c)
    assert outcome.contract.entity("Performer") is not None
    assert outcome.passes[0].report["field_validity_received"] == 1.0


@pytest.mark.parametrize(
    ("replies", "error"),
    [
        ([Fail(500)], "InternalServerError"),
        (["this is not json at all"], "unusable answer"),
        (['["a", "list"]'], "unusable answer"),
        ([Hang(3.0)], "Timeout"),
    ],
)
def test_llm_failure_never_blocks_the_contract(replies: list[Any], error: str) -> None:
    c = base()
    with FakeOpenAI(replies) as server:
        outcome = discovery(server, timeout=1.0).discover(c)
    assert outcome.contract == c
    assert outcome.passes[0].ok is False and error in outcome.passes[0].error
    assert outcome.errors


def test_server_down_is_reported_not_raised() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    c = base()
    outcome = LLMDiscovery(
        LLMConfig(base_url=f"http://127.0.0.1:{port}/v1", model="m", timeout=2, max_retries=0)
    ).discover(c)
    assert outcome.contract == c
    assert "Connection" in outcome.passes[0].error
    assert outcome.passes[1].error.startswith("skipped")


def test_the_validation_pass_is_add_only() -> None:
    c = base()
    removal_attempt = {
        "entities": [{"name": "Customer", "anchor": ["Email"], "attributes": ["Email"]}],
        "relationships": [
            {
                "name": "ARTIST",
                "from_entity": "Album",
                "to_entity": "Artist",
                "from_fields": ["Title"],
                "to_fields": ["Name"],
            }
        ],
    }
    with FakeOpenAI(["{}", removal_attempt]) as server:
        outcome = discovery(server).discover(c)
    out = outcome.contract
    assert check_monotonic(c, out) == []
    assert out.entity("Customer") == c.entity("Customer")
    report = outcome.passes[1].report
    assert any("key change ignored" in i for i in report["ignored"])
    assert any("name already used" in i for i in report["ignored"])


def test_extract_json_variants() -> None:
    assert extract_json('{"a": 1}') == {"a": 1}
    assert extract_json('```json\n{"a": 2}\n```') == {"a": 2}
    assert extract_json('Sure! {"a": 3} hope it helps') == {"a": 3}
    with pytest.raises(json.JSONDecodeError):
        extract_json("no json here")
