"""Optional LLM schema discovery over an OpenAI-compatible endpoint, validated closed-world.

Two passes (ESC paper §2.6): a *discovery* pass that may propose entity types and relationships beyond the
deterministic ones, then an add-only *validation / gap-finding* pass that sees the schema so far and may only
add. Every answer goes through :func:`contract.proposals.apply_proposal`: references to fields outside the
catalog are repaired or dropped and reported (FieldValidity), and nothing existing is changed.

The LLM never blocks the deterministic contract: a missing configuration turns it off, and a failure (timeout,
HTTP error, server down, non-JSON answer) is recorded in the outcome while the contract so far is kept.

Configuration (``esc.settings``): ``ESC_LLM_BASE_URL`` (empty = off), ``ESC_LLM_MODEL``, ``ESC_LLM_API_KEY``;
``ESC_LLM_TIMEOUT``, ``ESC_LLM_RETRIES``, ``ESC_LLM_MAX_CALLS``, ``ESC_LLM_DEADLINE`` bound the calls
(``agents.llm_client``).

What a discovery call sends: a system message (the closed-world rules), then one user message with the task, the
answer's JSON shape, the field catalog (per field: id, source, name, type, semantic type, null rate, distinct count
and three example values cut to 60 characters; at most 600 fields) and the schema so far (sources with record
counts and keys, entity types, relationships). Two calls per run (discovery, validation), ``temperature`` 0,
``response_format`` JSON object where the server takes it.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass
from typing import Any, Protocol

from pydantic import BaseModel, Field

from esc.agents.llm_client import LLMBudgetExceeded, LLMSession
from esc.contract.model import Contract
from esc.contract.proposals import ProposalFormatError, ValidationReport, apply_proposal, parse_proposal

MAX_CATALOG_FIELDS = 600
MAX_EXAMPLE_CHARS = 60

_SYSTEM = (
    "You design knowledge-graph schemas from a FIELD CATALOG. The catalog is authoritative and closed-world: "
    "reference fields ONLY by their exact `id` from the catalog. DO NOT invent fields, entities or relationships "
    "that are not evidenced by the catalog and its example values. Answer with ONE JSON object and nothing else."
)

_SHAPE = """Answer with this JSON shape:
{"entities": [{"name": "PascalCaseLabel", "source": "<source name>", "description": "...",
               "anchor": ["<field id of its natural key>"],
               "attributes": [{"field_id": "<field id>", "name": "<property>", "type_guess": "<type>"}],
               "confidence": 0.0-1.0}],
 "relationships": [{"name": "UPPER_SNAKE", "from_entity": "<label>", "to_entity": "<label>",
                    "from_fields": ["<field id on the from side>"], "to_fields": ["<field id on the to side>"],
                    "description": "...", "confidence": 0.0-1.0}],
 "notes": ["issues you noticed"]}"""

_DISCOVER = """TASK (pass 1, discovery): model the entity types and relationships of this data.
The EXISTING SCHEMA was derived statistically (one entity type per source, relationships from proven foreign keys
and nesting); it is authoritative and must be preserved. Propose what it misses:
1. INSTANCE-BASED entity types: the same specific thing recurring in a field (a person, a country, a company...),
   anchored on the field that names it.
2. CONCEPTUAL / CATEGORICAL entity types: categories recorded in a field (a genre, a status, a product type...).
3. Relationships between entity types that are linked by equal values in catalog fields.
Only reference field ids from the catalog. Return an empty list when nothing is missing."""

_VALIDATE = """TASK (pass 2, validation and gap-finding). Rules:
1. Preserve the existing schema by default.
2. Add NEW entities for any distinct uncaptured concepts.
3. Add NEW relationships for any clear connections.
4. Add NEW attributes for existing entities if found (repeat the entity name with only the new attributes).
5. Note issues in "notes" but do not remove existing elements.
Step 1: check the field catalog for fields no entity covers. Only reference field ids from the catalog."""


SYSTEM_PROMPT, ANSWER_SHAPE, DISCOVER_TASK, VALIDATE_TASK = _SYSTEM, _SHAPE, _DISCOVER, _VALIDATE
"""The prompts, public for the stream pass (``agents.llm_stream``), which sends the same rules per new source."""


class SettingsLike(Protocol):
    @property
    def llm_base_url(self) -> str: ...
    @property
    def llm_model(self) -> str: ...
    @property
    def llm_api_key(self) -> str: ...
    @property
    def llm_timeout(self) -> float: ...
    @property
    def llm_retries(self) -> int: ...
    @property
    def llm_max_calls(self) -> int: ...
    @property
    def llm_deadline(self) -> float: ...


@dataclass(frozen=True)
class LLMConfig:
    base_url: str
    model: str
    api_key: str = "none"
    timeout: float = 60.0  # ESC_LLM_TIMEOUT: one request
    max_retries: int = 2  # ESC_LLM_RETRIES: of one request (timeouts, connection errors, 408/409/429/5xx)
    temperature: float = 0.0
    max_calls: int = 12  # ESC_LLM_MAX_CALLS: chat calls per operation (a discovery run, a question)
    deadline: float = 300.0  # ESC_LLM_DEADLINE: seconds per operation

    def client(self) -> Any:
        import openai

        return openai.OpenAI(base_url=self.base_url, api_key=self.api_key, timeout=self.timeout,
                             max_retries=self.max_retries)  # fmt: skip

    def session(self, client: Any) -> LLMSession:
        return LLMSession(client, self.model, self.temperature, self.timeout, self.max_calls, self.deadline)


def config_from_settings(settings: SettingsLike, timeout: float | None = None) -> LLMConfig | None:
    """The LLM configuration, or None when ``ESC_LLM_BASE_URL`` is empty (LLM off). Limits from ``ESC_LLM_TIMEOUT``,
    ``ESC_LLM_RETRIES``, ``ESC_LLM_MAX_CALLS`` and ``ESC_LLM_DEADLINE`` (``agents/llm_client.py``)."""
    if not settings.llm_base_url.strip():
        return None
    return LLMConfig(
        base_url=settings.llm_base_url.strip(),
        model=settings.llm_model,
        api_key=settings.llm_api_key or "none",
        timeout=timeout if timeout is not None else settings.llm_timeout,
        max_retries=settings.llm_retries,
        max_calls=settings.llm_max_calls,
        deadline=settings.llm_deadline,
    )


class PassResult(BaseModel):
    name: str  # "discover" | "validate"
    ok: bool
    seconds: float
    error: str = ""
    problems: list[str] = Field(default_factory=list)  # malformed items skipped
    report: dict[str, Any] = Field(default_factory=dict)  # ValidationReport.summary()


class LLMOutcome(BaseModel):
    contract: Contract
    passes: list[PassResult] = Field(default_factory=list)

    @property
    def errors(self) -> list[str]:
        return [f"{p.name}: {p.error}" for p in self.passes if p.error]

    def summary(self) -> dict[str, Any]:
        return {"passes": [p.model_dump() for p in self.passes], "errors": self.errors}


# ---------------------------------------------------------------------------------------------------- prompts


def _short(value: Any) -> Any:
    if isinstance(value, str) and len(value) > MAX_EXAMPLE_CHARS:
        return value[: MAX_EXAMPLE_CHARS - 1] + "…"
    return value


def catalog_summary(contract: Contract) -> str:
    """One JSON line per field: the closed-world catalog the model may reference."""
    lines = []
    for sname in sorted(contract.sources):
        src = contract.sources[sname]
        for f in src.fields:
            entry = {
                "id": f.id,
                "source": sname,
                "name": f.name,
                "type": f.type,
                "semantic": f.semantic,
                "null_rate": round(f.null_rate, 3),
                "distinct": f.distinct,
                "examples": [_short(x) for x in f.examples[:3]],
            }
            lines.append(json.dumps(entry, ensure_ascii=False, default=str))
    if len(lines) > MAX_CATALOG_FIELDS:
        omitted = len(lines) - MAX_CATALOG_FIELDS
        lines = [*lines[:MAX_CATALOG_FIELDS], f"... {omitted} more fields omitted"]
    return "\n".join(lines)


def schema_summary(contract: Contract) -> str:
    out: dict[str, Any] = {
        "sources": {
            name: {"records": s.records, "identity_key": s.identity_key, "parent": s.parent}
            for name, s in sorted(contract.sources.items())
        },
        "entities": [
            {"name": e.name, "source": e.source, "key": e.key, "attributes": [a.name for a in e.attributes]}
            for e in contract.entities
        ],
        "relationships": [
            {"name": r.name, "from_entity": r.from_entity, "to_entity": r.to_entity, "kind": r.kind}
            for r in contract.relationships
        ],
    }
    return json.dumps(out, ensure_ascii=False, indent=1)


def build_messages(contract: Contract, task: str) -> list[dict[str, str]]:
    user = (
        f"{task}\n\n{_SHAPE}\n\nFIELD CATALOG (authoritative list of fields, one JSON per line):\n"
        f"{catalog_summary(contract)}\n\nEXISTING SCHEMA (authoritative; must be preserved):\n"
        f"{schema_summary(contract)}"
    )
    return [{"role": "system", "content": _SYSTEM}, {"role": "user", "content": user}]


_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL)


def extract_json(text: str) -> Any:
    """The JSON object in a model answer (bare, fenced in ```json, or surrounded by prose)."""
    text = text.strip()
    fenced = _FENCE.search(text)
    if fenced:
        text = fenced.group(1).strip()
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        start, end = text.find("{"), text.rfind("}")
        if start >= 0 and end > start:
            return json.loads(text[start : end + 1])
        raise


# ----------------------------------------------------------------------------------------------------- client


class LLMDiscovery:
    """Runs the two passes against an OpenAI-compatible ``/v1/chat/completions`` endpoint."""

    def __init__(self, config: LLMConfig, client: Any | None = None) -> None:
        self.config = config
        self._client = client if client is not None else config.client()
        self._session = config.session(self._client)

    def _ask(self, messages: list[dict[str, str]]) -> str:
        return self._session.chat(messages, json_mode=True)

    def run_pass(self, name: str, contract: Contract, task: str) -> tuple[Contract, PassResult]:
        started = time.perf_counter()
        try:
            answer = self._ask(build_messages(contract, task))
            proposal, problems = parse_proposal(extract_json(answer))
        except LLMBudgetExceeded as exc:
            return contract, PassResult(name=name, ok=False, seconds=time.perf_counter() - started,
                                        error=f"budget: {exc}")  # fmt: skip
        except (json.JSONDecodeError, ProposalFormatError, ValueError) as exc:
            return contract, PassResult(
                name=name, ok=False, seconds=time.perf_counter() - started, error=f"unusable answer: {exc}"
            )
        except Exception as exc:  # openai.APIError, timeouts, connection refused: never block the contract
            return contract, PassResult(
                name=name,
                ok=False,
                seconds=time.perf_counter() - started,
                error=f"{type(exc).__name__}: {exc}",
            )
        updated, report = apply_proposal(contract, proposal)
        return updated, PassResult(
            name=name,
            ok=True,
            seconds=time.perf_counter() - started,
            problems=problems,
            report=report.summary(),
        )

    def discover(self, contract: Contract) -> LLMOutcome:
        """Pass 1 (discovery) then pass 2 (add-only validation). Returns the extended contract and what happened.
        One run is one operation for the call budget and the deadline."""
        self._session = self.config.session(self._client)
        current, first = self.run_pass("discover", contract, _DISCOVER)
        if not first.ok and not first.error.startswith("unusable answer"):
            skipped = PassResult(
                name="validate", ok=False, seconds=0.0, error="skipped: the endpoint failed in pass 1"
            )
            return LLMOutcome(contract=current, passes=[first, skipped])
        current, second = self.run_pass("validate", current, _VALIDATE)
        return LLMOutcome(contract=current, passes=[first, second])


__all__ = [
    "LLMConfig",
    "LLMDiscovery",
    "LLMOutcome",
    "PassResult",
    "ValidationReport",
    "build_messages",
    "catalog_summary",
    "config_from_settings",
    "extract_json",
]
