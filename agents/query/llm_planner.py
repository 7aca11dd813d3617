"""LLM mode: an OpenAI-compatible model plans with the grounding tools and the schema card; its plan is validated
exactly like the deterministic planner's, and the final answer is phrased from the evidence.

Protocol (JSON only, one object per turn):

* ``{"tool": "search", "text": "..."}`` -> entity search results come back (does not count as an attempt);
* ``{"tool": "expand", "type": "...", "match": {...}}`` -> the entity's neighbourhood comes back;
* ``{"plan": <QueryPlan JSON>, "answer": ["alias", ...], "scalar": true}`` -> validated against the contract,
  run read-only; an invalid, failing or empty plan gets a structured failure summary and another attempt
  (at most ``MAX_RETRIES`` retries);
* ``{"extend": <schema proposal>}`` -> a type the contract lacks, for this question only (agents/query/extension.py:
  closed-world validation, FieldValidity must be 1.0; a view over nodes already in the graph); at most one per
  question; the contract itself never changes;
* ``{"derive": {"op", "fields": [two field ids], "plan"}}`` -> a computed expression for this question only
  (agents/query/computed.py: the ids are checked against the closed-world catalog and the types against the
  contract; an invented id is rejected with a failure summary);
* ``{"abstain": "reason"}``.

Then one more call phrases the answer from the rows (``{"text": "..."}``); values and citations come from the rows,
never from the model. The model never writes Cypher: the IR has no write operations, and names it uses must exist.

One question is one operation for the limits of ``agents.llm_client`` (per-call timeout and retries, at most
``ESC_LLM_MAX_CALLS`` calls, ``ESC_LLM_DEADLINE`` seconds): past them, or when the endpoint fails (timeout, 429 or
5xx after the retries, a broken body), the planner abstains with the reason and, in ``auto`` mode, the
deterministic planner answers. An unreadable reply (not JSON, truncated) is a failed attempt like an invalid plan.

What the calls send: the system message (the protocol above, the schema card: types with counts, keys, names,
attributes with types and two example values, relationships; the field catalog cut to 4,000 characters), the
question, and per turn the tool results (entity search hits and neighbourhoods: values from the graph, at most
6,000 characters) or the failure summary; the phrasing call sends the question, the answer values and the number of
citations.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from pydantic import ValidationError

from esc.agents.llm import LLMConfig, catalog_summary, extract_json
from esc.agents.llm_client import LLMBudgetExceeded, LLMSession
from esc.agents.query.answer import Answer, compose
from esc.agents.query.computed import llm_derive
from esc.agents.query.extension import ScopedExtension, scoped_extension
from esc.agents.query.grounding import Grounding
from esc.agents.query.plan import QueryPlan
from esc.agents.query.validate import problems
from esc.agents.stores.base import GraphStore

log = logging.getLogger(__name__)

MAX_RETRIES = 2
MAX_TOOL_CALLS = 6
MAX_ROWS_SHOWN = 20
MAX_CATALOG_CHARS = 4000

SYSTEM = """You answer questions over a property graph whose schema is given below (a versioned contract).
Reply with ONE JSON object and nothing else. Options:
{"tool": "search", "text": "<name or value>"}  -- find entities by name/value
{"tool": "expand", "type": "<Type>", "match": {"<attr>": <value>}}  -- an entity's neighbours
{"plan": <plan>, "answer": ["<alias>", ...], "scalar": true|false}  -- a query plan to run
{"extend": {"entities": [{"name": "<NewType>", "source": "<source>", "attributes": ["<field id>", ...]}]}}
   -- only when the question needs a type the schema lacks: a view over a source's existing records, for this
   question only; reference fields by their catalog ids (CATALOG below), nothing else
{"derive": {"op": "sub|add|mul|div|duration", "fields": ["<field id>", "<field id>"], "unit": "days|hours|...",
 "plan": <plan whose start node is the one entity>}}
   -- a value the schema lacks that two fields of one type give (difference, sum, product, ratio, time between);
   fields by their catalog ids; computed for this question only
{"abstain": "<reason>"}  -- when the schema or data cannot answer
A plan: {"kind": "lookup|list|count|aggregate|superlative|traverse",
 "start": {"var": "n0", "label": "<Type>", "filters": [{"prop": "<attr>", "op": "eq|ieq|contains|gt|gte|lt|lte|in|startswith", "value": ...}]},
 "hops": [{"rel_type": "<REL>", "direction": "out|in", "target": {"var": "n1", "label": "<Type>", "filters": []}}],
 "returns": [{"var": "n1", "prop": "<attr>", "agg": null|"count"|"sum"|"avg"|"min"|"max", "alias": "<alias>"}],
 "order_by": {"var": "n1", "prop": "<attr>", "desc": true} or {"alias": "<aggregate alias>", "desc": true},
 "limit": null|<int>, "group_by": ["n0"], "cite": ["n0", "n1"]}
"out" follows (a)-[:REL]->(b) from the previous node; "in" follows (a)<-[:REL]-(b).
Use only types, attributes and relationships from the schema. Values go in filters, never in names."""


class LLMPlanner:
    def __init__(self, config: LLMConfig, client: Any | None = None) -> None:
        self.config = config
        self._client = client if client is not None else config.client()

    def _chat(self, session: LLMSession, messages: list[dict[str, str]]) -> Any:
        return extract_json(session.chat(messages))

    @staticmethod
    def _system(grounding: Grounding) -> str:
        catalog = catalog_summary(grounding.contract)[:MAX_CATALOG_CHARS]
        return SYSTEM + "\n\nSCHEMA:\n" + grounding.card_text() + "\n\nCATALOG:\n" + catalog

    def ask(self, question: str, grounding: Grounding, graph: GraphStore) -> Answer:
        version = grounding.version
        messages = [
            {"role": "system", "content": self._system(grounding)},
            {"role": "user", "content": question},
        ]
        failures: list[dict[str, Any]] = []
        tools = 0
        extension: ScopedExtension | None = None
        session = self.config.session(self._client)  # one question: one budget and deadline
        while True:
            try:
                reply = self._chat(session, messages)
            except LLMBudgetExceeded as exc:
                return Answer.abstain(f"LLM planner stopped: {exc}", version)
            except ValueError as exc:  # not JSON: a failed attempt like any other
                reply = None
                messages.append({"role": "assistant", "content": "(unreadable reply)"})
                log.debug("LLM reply unreadable: %s", exc)
            except Exception as exc:  # the openai client raises many kinds (HTTP, timeouts, refused): abstain
                return Answer.abstain(f"LLM planner unavailable: {type(exc).__name__}: {exc}"[:300], version)
            else:
                messages.append({"role": "assistant", "content": json.dumps(reply, default=str)})
            if not isinstance(reply, dict):
                failure = {"attempt": len(failures) + 1, "error": "reply is not a JSON object"}
            elif "abstain" in reply:
                return Answer.abstain(f"LLM: {reply['abstain']}", version)
            elif "extend" in reply and extension is None:
                scoped = scoped_extension(grounding.contract, reply["extend"])
                if isinstance(scoped, ScopedExtension):
                    extension = scoped
                    log.info("query-scoped extension (LLM): %s for %r; reverted after the question",
                             scoped.summary(), question[:200])  # fmt: skip
                    grounding = Grounding(scoped.contract, graph)  # this question only; the agent's stays as it is
                    extended = {"tool_result": {"extended": scoped.summary()}}
                    messages.append({"role": "user", "content": json.dumps(extended, default=str)})
                    continue
                failure = {"attempt": len(failures) + 1, **scoped}
            elif "derive" in reply:  # an expression over two catalog fields (agents/query/computed.py)
                derived = llm_derive(reply["derive"], grounding, graph)
                if isinstance(derived, Answer):
                    derived.text = self._phrase(session, question, derived)
                    return derived
                failure = {"attempt": len(failures) + 1, **derived}
            elif reply.get("tool") in ("search", "expand") and tools < MAX_TOOL_CALLS:
                tools += 1
                result: Any
                if reply["tool"] == "search":
                    result = grounding.entity_search(str(reply.get("text", "")))
                else:
                    raw_match = reply.get("match")
                    match: dict[str, Any] = raw_match if isinstance(raw_match, dict) else {}
                    result = grounding.neighbourhood(str(reply.get("type", "")), match)
                messages.append({"role": "user", "content": json.dumps({"tool_result": result}, default=str)[:6000]})
                continue
            else:
                outcome = self._try_plan(reply, grounding, graph, extension)
                if isinstance(outcome, Answer):
                    outcome.text = self._phrase(session, question, outcome)
                    if extension is not None:
                        outcome.extension = extension.summary()
                    return outcome
                failure = {"attempt": len(failures) + 1, **outcome}
            failures.append(failure)
            if len(failures) > MAX_RETRIES:
                return Answer.abstain(
                    f"LLM planner failed {len(failures)} times; last: {failure.get('error')}", version
                )
            messages.append(
                {"role": "user", "content": json.dumps({"failure_summary": failures, "instruction": "revise"})}
            )

    def _try_plan(
        self, reply: dict[str, Any], grounding: Grounding, graph: GraphStore, extension: ScopedExtension | None = None
    ) -> Answer | dict[str, Any]:
        try:
            plan = QueryPlan.model_validate(reply.get("plan"))
        except ValidationError as exc:
            return {"error": "plan does not fit the plan schema", "details": str(exc)[:500]}
        found = problems(plan, grounding.contract)
        if found:
            return {"error": "plan does not match the contract", "problems": found[:10]}
        if not plan.cite:
            plan.cite = [plan.start.var, *(h.target.var for h in plan.hops[-1:])]
        aliases = [a for a in reply.get("answer") or [] if isinstance(a, str)]
        aliases = [a for a in aliases if a in {r.alias for r in plan.returns}] or [plan.returns[0].alias]
        try:
            rows = graph.run_plan(extension.rewrite(plan) if extension is not None else plan)
        except Exception as exc:  # any store error goes back to the LLM as the plan's result
            return {"error": f"plan failed to run: {exc}"[:500]}
        route = "aggregate" if any(r.agg for r in plan.returns) else ("traverse" if plan.hops else "lookup")
        answer = compose(rows, aliases, bool(reply.get("scalar", True)), route, 0.9, grounding.version)  # type: ignore[arg-type]
        if answer.route == "abstain":
            return {"error": "plan ran but returned no rows with values", "rows": len(rows)}
        answer.plan = plan.model_dump(exclude_defaults=True)
        return answer

    def _phrase(self, session: LLMSession, question: str, answer: Answer) -> str | None:
        evidence = {"question": question, "answer": answer.answer, "citations": len(answer.citations)}
        try:
            reply = self._chat(
                session,
                [
                    {"role": "system", "content": 'Phrase the answer from the evidence only. Reply {"text": "..."}.'},
                    {"role": "user", "content": json.dumps(evidence, default=str)},
                ]
            )
        except Exception:  # phrasing is optional: any client or format error leaves the plain answer
            return None
        return str(reply.get("text")) if isinstance(reply, dict) and reply.get("text") else None
