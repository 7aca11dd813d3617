"""QueryAgent: question -> validated plan -> read-only run -> answer with citations.

``QueryAgent(contract, graph, vectors=None, embedder=None, collection=None, llm=None)``;
``ask(question, options) -> Answer``. Grounding (vocabulary, value dictionary, schema card) is cached per
contract version; ``set_contract`` swaps it when a new version arrives (a question already running keeps the
version it started with). The contract is never modified by asking.

Routes: deterministic planner first (default) -> ``lookup`` / ``traverse`` / ``aggregate``; a question nothing
structured grounds goes to the vector index when one is configured (``vector``, flagged below 0.3 similarity);
otherwise ``abstain`` with the reason. With ``mode="llm"`` (and an LLM configured) the LLM plans with the
grounding tools, validated the same way; on failure the deterministic planner still answers.
"""

from __future__ import annotations

import logging
import threading
import time
import unicodedata
from pathlib import Path

from esc.agents.embedding import Embedder
from esc.agents.query.answer import Answer, compose
from esc.agents.query.computed import answer as computed_answer
from esc.agents.query.cypher import compile_plan
from esc.agents.query.grounding import Grounding
from esc.agents.query.interpret import Abstain, Interpreter
from esc.agents.query.llm_planner import LLMPlanner
from esc.agents.query.prose import ProseRoute
from esc.agents.query.retrieval import Evidence, RowIndex, Scope, Unit, retrieve
from esc.agents.query.validate import problems
from esc.agents.query.vector import answer_from_hits, content_words, mention_refs, search
from esc.agents.reconcile.answers import annotate, apply_as_of, split_as_of
from esc.agents.reconcile.rewrite import rewrite
from esc.agents.reconcile.rewrite import run as run_rewritten
from esc.agents.reconcile.view import ClusterView, build_view
from esc.agents.stores.base import GraphStore, VectorStore
from esc.contract.model import Contract
from esc.streams.events import QueryOptions

log = logging.getLogger(__name__)

MAX_QUESTION_CHARS = 2000


def clean_question(text: str) -> str:
    """Printable text only, bounded: control characters become spaces."""
    text = "".join(" " if unicodedata.category(c)[0] == "C" else c for c in str(text))
    return " ".join(text.split())[:MAX_QUESTION_CHARS]


class QueryAgent:
    def __init__(
        self,
        contract: Contract,
        graph: GraphStore | None,
        vectors: VectorStore | None = None,
        embedder: Embedder | None = None,
        collection: str | None = None,
        llm: LLMPlanner | None = None,
        cache_dir: Path | None = None,
    ) -> None:
        self.cache_dir = cache_dir  # where the grounding of a contract version may be kept across processes
        self.graph = graph
        self.vectors = vectors
        self.embedder = embedder
        self.collection = collection
        self.llm = llm
        self._lock = threading.Lock()
        self._grounding: Grounding | None = None
        self._contract = contract
        self._rows: tuple[Grounding, RowIndex] | None = None
        self._view: ClusterView | None = None  # entity resolution as questions see it, per grounding
        self._prose: tuple[Grounding, ProseRoute] | None = None

    # -- grounding, cached per contract version ---------------------------------------------------------------
    def set_contract(self, contract: Contract) -> None:
        with self._lock:
            g = self._grounding
            if (
                g is not None
                and contract.version == g.version
                and contract.content_hash == g.contract.content_hash
            ):
                return
            self._contract = contract
            self._grounding = None

    def grounding(self) -> Grounding:
        with self._lock:
            if self._grounding is None:
                self._view = build_view(self._contract, self.graph)
                contract = self._view.contract_for_questions(self._contract)
                self._grounding = Grounding.cached(contract, self.graph, self.cache_dir)
            return self._grounding

    def refresh_values(self) -> None:
        """Rebuild the value dictionary (after new records landed under the same contract version)."""
        with self._lock:
            self._grounding = None

    def row_index(self) -> RowIndex:
        """Term index over the rows of tabular types, built once per grounding (contract version + values)."""
        g = self.grounding()
        cached = self._rows
        if cached is None or cached[0] is not g:
            cached = self._rows = (g, RowIndex.build(g))
        return cached[1]

    def prose(self) -> ProseRoute:
        """Mentions and facts in prose (agents/query/prose.py), per grounding."""
        g = self.grounding()
        cached = self._prose
        if cached is None or cached[0] is not g:
            cached = self._prose = (g, ProseRoute(g))
        return cached[1]

    def retrieve(
        self, question: str, k: int = 5, scope: Scope | None = None, pool: int = 50, unit: Unit = "record"
    ) -> list[Evidence]:
        """Schema-routed evidence for a question: matching rows, routed sources, vector hits, fused
        (agents/query/retrieval.py). ``scope`` limits every signal to some (source, file) pairs; ``pool`` is how
        many vector hits are fetched before the scope filter and the fusion."""
        q = clean_question(question)
        if not q:
            return []
        return retrieve(
            q, self.row_index(), self.vectors, self.embedder, self.collection, k=k, scope=scope, pool=pool, unit=unit
        )

    # -- asking -----------------------------------------------------------------------------------------------
    def ask(self, question: str, options: QueryOptions | None = None) -> Answer:
        opts = options or QueryOptions()
        started = time.perf_counter()
        g = self.grounding()  # pinned for the whole question
        q, when = split_as_of(clean_question(question))
        answer = self._answer(q, g, opts) if q else Answer.abstain("empty question", g.version)
        if when is not None:
            apply_as_of(answer, when)
        answer.contract_version = g.version
        answer.latency_ms = round((time.perf_counter() - started) * 1000, 2)
        return answer

    def _answer(self, q: str, g: Grounding, opts: QueryOptions) -> Answer:
        if opts.mode in ("llm", "auto") and self.llm is not None and self.graph is not None:
            llm_answer = self.llm.ask(q, g, self.graph)
            if llm_answer.route != "abstain" or opts.mode == "llm":
                return llm_answer
            log.info("LLM planner abstained (%s); the deterministic planner answers", llm_answer.reason)
        interpreter = Interpreter(g.vocab, g.values, g.phrases, g.semantic)
        computed = computed_answer(q, g, self.graph, interpreter.plan)  # an expression over two fields (computed.py)
        if computed is not None:
            return computed
        planned = interpreter.plan(q)
        if isinstance(planned, Abstain):
            answer = self._fallback(q, g, opts, planned.reason, planned.descriptive, planned.names, planned.unmatched)
            if answer.route == "abstain" and planned.unmatched:
                answer.unmatched = planned.unmatched
            return answer
        found = problems(planned.plan, g.contract)
        if found:
            return Answer.abstain("plan does not match the contract: " + "; ".join(found), g.version)
        if self.graph is None:
            return Answer.abstain("no graph store configured", g.version)
        view = self._view
        rw = rewrite(planned.plan, view, self.graph, g.vocab) if view is not None and view.active else None
        try:
            rows = run_rewritten(rw, self.graph) if rw is not None else self.graph.run_plan(planned.plan)
        except Exception as exc:  # any store client error (driver, DuckDB, an outage past its retries): answered, never raised
            log.warning("plan failed: %s", exc)
            return Answer.abstain(f"the graph store could not run the query: {exc}"[:300], g.version)
        answer = compose(
            rows, planned.answer, planned.scalar, planned.route, planned.confidence, g.version,  # type: ignore[arg-type]
            ties=planned.ties, top=planned.top,
        )
        if planned.unmatched:
            answer.unmatched = planned.unmatched
        if rw is not None:
            annotate(answer, rw, rows, view, planned.answer)  # type: ignore[arg-type]
        if answer.route == "abstain":
            return self._fallback(q, g, opts, answer.reason or "no rows", False)
        if opts.explain:
            answer.plan = planned.plan.model_dump(exclude_defaults=True)
            try:
                answer.query = compile_plan(planned.plan)[0]
            except ValueError:  # UnsafeQuery / UnsafeIdentifier: the answer stands without its query text
                answer.query = None
        return answer

    def _fallback(
        self,
        q: str,
        g: Grounding,
        opts: QueryOptions,
        reason: str,
        descriptive: bool,
        names: list[str] | None = None,
        unmatched: list[str] | None = None,
    ) -> Answer:
        """Prose, then the vector route, for what no structured plan answers. Prose first: an entity the question
        names and text mentions (agents/query/prose.py: a value only the text gives, or what the text says about
        it). A passage counts as evidence only when it is near enough (``vector.LOW_SIMILARITY``) and mentions the
        question: every name the data lacks and at least one of the words the plan could not use (else of the
        question's content words); hits in chunks that mention what the question names go first."""
        try:
            route = self.prose()
            prose = route.answer(q, unmatched) if opts.vector_fallback else None
        except Exception as exc:  # prose is an extra: a failure there never costs the answer
            log.warning("prose route failed: %s", exc)
            route, prose = None, None
        if prose is not None and prose.route != "abstain":
            return prose
        vectors, embedder, collection = self.vectors, self.embedder, self.collection
        if (
            opts.vector_fallback
            and descriptive
            and vectors is not None
            and embedder is not None
            and collection
        ):
            try:
                refs = mention_refs(route, q)  # entities the question names: search the chunks mentioning them
                hits = search(vectors, embedder, collection, q, mentioning=refs)
            except Exception as exc:  # any vector store or embedder error: the question abstains with it
                return Answer.abstain(f"{reason}; vector search failed: {exc}"[:300], g.version)
            words = [w for w in (unmatched or []) if w not in (names or [])] or content_words(q)
            ids = route.mention_ids(q) if route is not None else set()
            answer = answer_from_hits(hits, g.version, keep=(lambda h: str(h.get("id")) in ids) if ids else None,
                                      names=names or [], words=words)  # fmt: skip
            if answer.route == "abstain":
                answer.reason = f"{reason}; {answer.reason}"
            return answer
        return Answer.abstain(reason, g.version)
