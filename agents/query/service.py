"""QueryService: the one object every question surface uses (HTTP ``POST /v1/ask`` and ``GET /v1/schema``, the
``esc.queries`` -> ``esc.answers`` agent, ``esc ask``).

It holds a :class:`QueryAgent`, follows the contract (``on_contract``: a newer version swaps the grounding, which is
cached per version; an older or identical one is ignored), and turns a :class:`QueryRequest` into an
:class:`AnswerEnvelope` with the same ``id``. Store clients are created lazily on the first question (a worker
starts even when Neo4j is still coming up; a failed connection is retried on the next question). The value
dictionary is rebuilt at most every ``values_ttl_s`` seconds so names that arrived under the same contract
version are found. Every answer is counted in ``esc_query_latency_seconds{route}``, ``esc_query_confidence`` and
``esc_query_abstentions_total``.

Wiring into a runtime (all store calls are blocking; an async runtime calls ``answer_async``)::

    service = query_service(settings)             # esc.streams.runtime.stores: over the stack stores
    service.on_contract(contract)                 # on every contract message
    envelope = await service.answer_async(raw)    # raw: QueryRequest | dict | JSON bytes
    card = service.schema_card()
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from esc.agents import metrics
from esc.agents.embedding import Embedder
from esc.agents.query.agent import QueryAgent
from esc.agents.query.answer import Answer
from esc.agents.query.llm_planner import LLMPlanner
from esc.agents.stores.base import GraphStore, VectorStore
from esc.contract.model import Contract
from esc.streams.events import AnswerEnvelope, QueryOptions, QueryRequest

log = logging.getLogger(__name__)

VALUES_TTL_S = 120.0
RETRY_STORES_S = 15.0


class LazyEmbedder(Embedder):
    """Builds the real embedder on first use (loading a model is slow and only the vector route needs it)."""

    def __init__(self, factory: Callable[[], Embedder], dim: int = 384) -> None:
        self._factory = factory
        self._real: Embedder | None = None
        self._dim = dim
        self._lock = threading.Lock()

    def _get(self) -> Embedder:
        with self._lock:
            if self._real is None:
                self._real = self._factory()
            return self._real

    @property
    def dim(self) -> int:
        return self._real.dim if self._real is not None else self._dim

    def _embed_batch(self, texts: list[str]) -> Any:
        return self._get()._embed_batch(texts)


def _envelope(request_id: str, answer: Answer, reply_to: str | None = None) -> AnswerEnvelope:
    return AnswerEnvelope.model_validate({**answer.model_dump(), "id": request_id, "reply_to": reply_to})


def _observe(answer: Answer) -> None:
    metrics.QUERY_LATENCY.labels(answer.route).observe((answer.latency_ms or 0.0) / 1000.0)
    if answer.route == "abstain":
        metrics.QUERY_ABSTENTIONS.inc()
    else:
        metrics.QUERY_CONFIDENCE.observe(answer.confidence)


class QueryService:
    def __init__(
        self,
        graph: Callable[[], GraphStore | None],
        vectors: Callable[[], VectorStore | None] | None = None,
        embedder: Embedder | None = None,
        collection: str | None = None,
        llm: LLMPlanner | None = None,
        values_ttl_s: float = VALUES_TTL_S,
        cache_dir: Path | None = None,
    ) -> None:
        self._cache_dir = cache_dir
        self._graph_factory = graph
        self._vectors_factory = vectors
        self._embedder = embedder
        self._collection = collection
        self._llm = llm
        self.values_ttl_s = values_ttl_s
        self._contract: Contract | None = None
        self._agent: QueryAgent | None = None
        self._opened: list[GraphStore | VectorStore] = []
        self._lock = threading.Lock()
        self._values_at = 0.0
        self._vectors_tried = 0.0

    # -- construction -----------------------------------------------------------------------------------------
    # -- contract ---------------------------------------------------------------------------------------------
    @property
    def contract(self) -> Contract | None:
        return self._contract

    def on_contract(self, contract: Contract) -> bool:
        """Use ``contract`` from now on if it is newer (or the first); True when it was swapped in."""
        with self._lock:
            old = self._contract
            if old is not None and (
                contract.version < old.version
                or (contract.version == old.version and contract.content_hash == old.content_hash)
            ):
                return False
            self._contract = contract
            if self._agent is not None:
                self._agent.set_contract(contract)
                self._values_at = time.monotonic()
        log.info("query service: contract v%s", contract.version)
        return True

    def refresh_values(self) -> None:
        """Rebuild the value dictionary now (new records landed under the same contract version)."""
        with self._lock:
            if self._agent is not None:
                self._agent.refresh_values()
                self._values_at = time.monotonic()

    # -- stores -----------------------------------------------------------------------------------------------
    def _ready_agent(self) -> QueryAgent | str:
        """The agent (created on first use, with its stores), or why there is none yet."""
        with self._lock:
            contract = self._contract
            if contract is None:
                return "no contract has been published yet (ingest some data first)"
            agent = self._agent
            if agent is None:
                try:
                    graph = self._graph_factory()
                except Exception as exc:  # any client error while connecting: the question says so
                    return f"the graph store is unavailable: {exc}"[:300]
                if graph is not None:
                    self._opened.append(graph)
                agent = QueryAgent(
                    contract, graph, None, self._embedder, self._collection, self._llm, cache_dir=self._cache_dir
                )
                self._agent = agent
                self._values_at = time.monotonic()
            self._attach_vectors(agent)
            if self.values_ttl_s >= 0 and time.monotonic() - self._values_at > self.values_ttl_s:
                agent.refresh_values()
                self._values_at = time.monotonic()
            return agent

    def _attach_vectors(self, agent: QueryAgent) -> None:
        if agent.vectors is not None or self._vectors_factory is None or self._embedder is None:
            return
        if time.monotonic() - self._vectors_tried < RETRY_STORES_S and self._vectors_tried:
            return
        self._vectors_tried = time.monotonic()
        try:
            vectors = self._vectors_factory()
        except Exception as exc:  # any client error while connecting: retried after RETRY_STORES_S
            log.warning("vector store unavailable (%s); descriptive questions abstain until it is back", exc)
            return
        if vectors is not None:
            self._opened.append(vectors)
            agent.vectors = vectors

    # -- answering --------------------------------------------------------------------------------------------
    def ask(self, question: str, options: QueryOptions | None = None) -> Answer:
        started = time.perf_counter()
        agent = self._ready_agent()
        if isinstance(agent, str):
            version = self._contract.version if self._contract is not None else 0
            answer = Answer.abstain(agent, version)
            answer.latency_ms = round((time.perf_counter() - started) * 1000, 2)
        else:
            opts = options if options is not None else QueryOptions()
            version = self._contract.version if self._contract is not None else 0
            try:
                answer = agent.ask(question, opts)
            except Exception as exc:  # a bug or a store failure must not take the worker down
                log.exception("question failed")
                answer = Answer.abstain(f"internal error: {type(exc).__name__}: {exc}"[:300], version)
                answer.latency_ms = round((time.perf_counter() - started) * 1000, 2)
        _observe(answer)
        return answer

    def answer(self, request: QueryRequest | Mapping[str, Any] | bytes | str) -> AnswerEnvelope:
        """The answer to one request, with the same ``id``; a malformed request gets an abstention that says why
        (with its ``id`` when one could be read)."""
        parsed = parse_request(request)
        if isinstance(parsed, AnswerEnvelope):
            metrics.QUERY_ABSTENTIONS.inc()
            return parsed
        answer = self.ask(parsed.question, parsed.options)
        return _envelope(parsed.id, answer, parsed.reply_to)

    async def answer_async(self, request: QueryRequest | Mapping[str, Any] | bytes | str) -> AnswerEnvelope:
        return await asyncio.to_thread(self.answer, request)

    def schema_card(self) -> dict[str, Any]:
        """What ``GET /v1/schema`` returns: the contract version and hash, and the live schema card (types with
        counts, attributes with examples, relationships, example queries that returned rows)."""
        agent = self._ready_agent()
        if isinstance(agent, str):
            return {"contract_version": None, "content_hash": None, "card": None, "reason": agent}
        g = agent.grounding()
        return {
            "contract_version": g.version,
            "content_hash": g.contract.content_hash,
            "card": g.schema_card(),
        }

    def close(self) -> None:
        with self._lock:
            for store in self._opened:
                try:
                    store.close()
                except Exception:  # closing is best effort: the other stores still close
                    log.debug("closing a store failed", exc_info=True)
            self._opened = []
            self._agent = None


def parse_request(raw: QueryRequest | Mapping[str, Any] | bytes | str) -> QueryRequest | AnswerEnvelope:
    """A validated request, or the abstention envelope explaining why it is not one."""
    if isinstance(raw, QueryRequest):
        return raw
    request_id = ""
    try:
        data: Any = raw
        if isinstance(raw, bytes | bytearray):
            data = json.loads(bytes(raw).decode("utf-8"))
        elif isinstance(raw, str):
            data = json.loads(raw)
        if isinstance(data, Mapping):
            request_id = str(data.get("id") or "")[:200]
        return QueryRequest.model_validate(data)
    except (ValueError, ValidationError) as exc:
        reason = f"bad request: {exc}".replace("\n", " ")[:300]
        return AnswerEnvelope(id=request_id, route="abstain", reason=reason)
