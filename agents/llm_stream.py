"""The LLM two-pass discovery in the stream: new sources' profiles and sample records go to an OpenAI-compatible
endpoint beside ingestion, and what survives the closed-world check becomes a new add-only contract version.

Only when ``ESC_LLM_BASE_URL`` is set (and ``ESC_LLM_STREAM`` is not off). The contract writer
(``agents.pipeline.ContractWriter``, the same code in the Faust and the embedded runtime) calls :meth:`StreamDiscovery.step`
on every batch of profile updates and every tick:

1. the batch's deltas leave a few sample records per source (``agents.llm_samples``) until the source is asked about;
2. the sources that settled for the first time in the batch (the contract agent's ``newly_settled``) become one job:
   a snapshot of the contract, the new sources' names and their samples. The job goes on a bounded queue
   (``ESC_LLM_STREAM_QUEUE``; a full queue drops the job and counts it) and a worker thread runs it: pass 1
   (discovery) then pass 2 (validation / gap-finding, which sees what pass 1 added), the prompts of ``agents.llm``
   with the catalog cut to the new sources' fields plus their sample records. Each call is bounded by
   ``ESC_LLM_TIMEOUT`` and ``ESC_LLM_RETRIES``, a job by ``ESC_LLM_MAX_CALLS`` and ``ESC_LLM_DEADLINE``;
3. when a step has no structural change of its own (so one step writes at most one version), the finished jobs'
   proposals are applied to the *current* contract through ``contract.proposals.apply_proposal`` (field ids
   outside the catalog are dropped and counted, items left without a valid field rejected), evolved into one new
   version (``contract.evolve``) and kept only when ``check_monotonic`` finds nothing taken away. A proposed type
   over a source that already has one gets a foreign key from that type (``contract.type_links``); its nodes are
   written from the source's records, those already written included (``agents.type_nodes``, replayed by the
   backfill like a late foreign key).

Ingestion never waits: a step only moves data between queues; the calls run on the worker thread. Every call and
its outcome, every job and every field reference is counted (``agents.llm_metrics``). What is not kept: the jobs
in flight when the process stops (a source is asked about once, when it first settles).
"""

from __future__ import annotations

import json
import logging
import queue
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from esc.agents import llm_metrics as lm
from esc.agents import metrics
from esc.agents.llm import (
    ANSWER_SHAPE,
    DISCOVER_TASK,
    SYSTEM_PROMPT,
    VALIDATE_TASK,
    LLMConfig,
    catalog_summary,
    config_from_settings,
    extract_json,
    schema_summary,
)
from esc.agents.llm_client import LLMBudgetExceeded
from esc.agents.llm_samples import SAMPLE_RECORDS
from esc.agents.profiler import ProfileDelta
from esc.contract.evolve import check_monotonic, evolve
from esc.contract.model import Contract, ContractDiff
from esc.contract.proposals import ProposalFormatError, SchemaProposal, apply_proposal, parse_proposal
from esc.contract.type_links import link_added_types

if TYPE_CHECKING:
    from esc.agents.contract_agent import ContractAgent

log = logging.getLogger(__name__)

QUEUE_SIZE = 16
MAX_HISTORY = 50
STOP = None


@dataclass
class Job:
    sources: list[str]
    contract: Contract  # the snapshot the passes read (never changed)
    samples: dict[str, list[dict[str, Any]]]


@dataclass
class JobResult:
    sources: list[str]
    proposals: list[SchemaProposal] = field(default_factory=list)
    calls: list[dict[str, Any]] = field(default_factory=list)  # per pass: name, outcome, seconds, error, report

    @property
    def failed(self) -> bool:
        return not self.proposals


def classify(exc: BaseException) -> str:
    """The outcome label of a failed call (bounded set)."""
    if isinstance(exc, LLMBudgetExceeded):
        return "budget"
    if isinstance(exc, json.JSONDecodeError | ProposalFormatError | ValueError):
        return "invalid_answer"
    try:
        import openai
    except ImportError:  # pragma: no cover - openai is a dependency of the LLM path
        return "error"
    if isinstance(exc, openai.APITimeoutError):
        return "timeout"
    if isinstance(exc, openai.RateLimitError):
        return "rate_limited"
    if isinstance(exc, openai.APIStatusError):
        return "http_error"
    if isinstance(exc, openai.APIConnectionError):
        return "connection"
    if isinstance(exc, openai.APIResponseValidationError):
        return "invalid_answer"
    return "error"


def _only(contract: Contract, sources: Sequence[str]) -> Contract:
    """The contract with only ``sources`` in its catalog (what the model is asked about)."""
    cut = contract.model_copy()
    cut.sources = {s: contract.sources[s] for s in sources if s in contract.sources}
    return cut


def build_messages(job: Job, contract: Contract, task: str) -> list[dict[str, str]]:
    """The prompt of one pass: the rules, the task and answer shape of ``agents.llm``, the catalog of the new
    sources, their sample records, and the whole schema so far."""
    samples = "\n".join(
        f"{s}: " + json.dumps(job.samples.get(s, []), ensure_ascii=False, default=str) for s in job.sources
    )
    user = (
        f"{task}\n\nThe NEW SOURCES are {', '.join(job.sources)}; propose what concerns them.\n\n{ANSWER_SHAPE}\n\n"
        f"FIELD CATALOG of the new sources (authoritative, one JSON per line):\n"
        f"{catalog_summary(_only(contract, job.sources))}\n\n"
        f"SAMPLE RECORDS of the new sources (values cut):\n{samples}\n\n"
        f"EXISTING SCHEMA (authoritative; must be preserved):\n{schema_summary(contract)}"
    )
    return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": user}]


def run_job(config: LLMConfig, client: Any, job: Job) -> JobResult:
    """The two passes of one job; every call counted. Never raises for what the endpoint does."""
    session = config.session(client)
    result = JobResult(sources=list(job.sources))
    contract = job.contract
    for name, task in (("discover", DISCOVER_TASK), ("validate", VALIDATE_TASK)):
        started = time.perf_counter()
        call: dict[str, Any] = {"pass": name}
        try:
            answer = session.chat(build_messages(job, contract, task), json_mode=True)
            proposal, problems = parse_proposal(extract_json(answer))
            call.update(outcome="ok", problems=problems)
        except Exception as exc:  # the endpoint's failures (openai errors, timeouts, bad JSON) end in a count
            proposal = None
            call.update(outcome=classify(exc), error=f"{type(exc).__name__}: {exc}"[:300])
        call["seconds"] = round(time.perf_counter() - started, 3)
        lm.LLM_CALLS.labels(name, call["outcome"]).inc()
        lm.LLM_CALL_SECONDS.observe(call["seconds"])
        result.calls.append(call)
        if proposal is None:
            if call["outcome"] != "invalid_answer":
                break  # the endpoint failed (or the budget is used): pass 2 would fail the same way
            continue
        contract, report = apply_proposal(contract, proposal)
        for ref in report.references:
            lm.LLM_FIELD_REFS.labels(ref.status).inc()
        call["report"] = report.summary()
        if report.added_entities or report.added_attributes or report.added_relationships:
            result.proposals.append(proposal)
    return result


class StreamDiscovery:
    """The asynchronous LLM pass of one contract writer. ``client``: an ``openai.OpenAI``-like object (tests);
    by default one is made from ``config`` on the worker thread."""

    def __init__(self, config: LLMConfig, client: Any | None = None, queue_size: int = QUEUE_SIZE) -> None:
        self.config = config
        self._client = client
        self._jobs: queue.Queue[Job | None] = queue.Queue(maxsize=queue_size)
        self._done: queue.SimpleQueue[JobResult] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._busy = 0  # jobs queued or running
        self._idle = threading.Condition(self._lock)
        self._thread: threading.Thread | None = None
        self._samples: dict[str, list[dict[str, Any]]] = {}
        self.asked: set[str] = set()  # sources a job was made for
        self.history: list[dict[str, Any]] = []  # the last jobs' outcomes (newest last)

    # -------------------------------------------------------------------------------------------- the writer
    def step(self, agent: ContractAgent, deltas: Sequence[ProfileDelta], contract: Contract,
             diff: ContractDiff | None) -> tuple[Contract, ContractDiff | None]:  # fmt: skip
        """Take samples, queue a job for the newly settled sources, and (when ``diff`` is None) turn finished
        jobs into a version. Returns the writer's ``(contract, diff)``; the agent's contract follows it."""
        self.observe(deltas)
        if agent.newly_settled:
            self.submit(contract, agent.newly_settled)
        if diff is not None:
            return contract, diff
        extended, llm_diff = self.collect(contract)
        if llm_diff is not None:
            agent.contract = extended
        return (extended, llm_diff) if llm_diff is not None else (contract, diff)

    def observe(self, deltas: Sequence[ProfileDelta]) -> None:
        for d in deltas:
            if d.source in self.asked or not d.samples:
                continue
            have = self._samples.setdefault(d.source, [])
            have.extend(d.samples[: SAMPLE_RECORDS - len(have)])

    def submit(self, contract: Contract, sources: Sequence[str]) -> bool:
        new = sorted(s for s in set(sources) if s not in self.asked and s in contract.sources)
        if not new:
            return False
        self.asked.update(new)
        job = Job(sources=new, contract=contract, samples={s: self._samples.pop(s, []) for s in new})
        with self._lock:
            try:
                self._jobs.put_nowait(job)
            except queue.Full:
                lm.LLM_JOBS.labels("dropped").inc()
                self._record({"sources": new, "outcome": "dropped"})
                log.warning("LLM discovery queue full (ESC_LLM_STREAM_QUEUE): %s not asked about", ", ".join(new))
                return False
            self._busy += 1
            lm.LLM_PENDING.set(self._busy)
        self._start()
        return True

    def collect(self, contract: Contract) -> tuple[Contract, ContractDiff | None]:
        """The finished jobs' proposals applied to ``contract`` as one add-only version, or ``(contract, None)``."""
        results: list[JobResult] = []
        while True:
            try:
                results.append(self._done.get_nowait())
            except queue.Empty:
                break
        if not results:
            return contract, None
        extended = contract
        sources: list[str] = []
        for r in results:
            entry: dict[str, Any] = {"sources": r.sources, "calls": r.calls}
            if r.failed:
                entry["outcome"] = "failed" if any(c["outcome"] != "ok" for c in r.calls) else "nothing"
                lm.LLM_JOBS.labels(entry["outcome"]).inc()
                self._record(entry)
                continue
            for p in r.proposals:
                extended, _ = apply_proposal(extended, p)  # again, over the catalog of now (it only grew)
            sources += r.sources
            entry["outcome"] = "pending"
            self._record(entry)
        if not sources:
            return contract, None
        extended = link_added_types(contract, extended)  # a type over a source with one: reached from its records
        reason = f"LLM discovery (two-pass, {self.config.model}) for new sources {', '.join(sorted(sources))}"
        new, diff = evolve(contract, extended, reason)
        outcome = "nothing" if diff is None else "versioned"
        if diff is not None and check_monotonic(contract, new):
            outcome, diff = "rejected", None
        for entry in self.history[-len(results):]:
            if entry.get("outcome") == "pending":
                entry["outcome"] = outcome
                lm.LLM_JOBS.labels(outcome).inc()
        if diff is None:
            return contract, None
        lm.LLM_VERSIONS.inc()
        metrics.CONTRACT_VERSION.set(new.version)
        metrics.SCHEMA_DIFF_EVENTS.inc()
        for item in diff.added:
            metrics.SCHEMA_DIFFS.labels(item.kind).inc()
        log.info("LLM discovery: contract v%d for %s (%d items added)", new.version, ", ".join(sources),
                 len(diff.added))  # fmt: skip
        return new, diff

    # -------------------------------------------------------------------------------------------- the worker
    def _start(self) -> None:
        with self._lock:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._loop, name="esc-llm-discovery", daemon=True)
                self._thread.start()

    def _loop(self) -> None:
        client = self._client
        while True:
            job = self._jobs.get()
            if job is STOP:
                return
            try:
                if client is None:
                    client = self._client = self.config.client()
                result = run_job(self.config, client, job)
            except Exception as exc:  # a bug or a broken client must not stop the worker thread
                log.warning("LLM discovery job for %s failed: %s", ", ".join(job.sources), exc)
                lm.LLM_CALLS.labels("discover", "error").inc()
                result = JobResult(sources=job.sources, calls=[{"pass": "discover", "outcome": "error",
                                                                 "error": str(exc)[:300]}])  # fmt: skip
            self._done.put(result)
            with self._idle:
                self._busy -= 1
                lm.LLM_PENDING.set(self._busy)
                self._idle.notify_all()

    def pending(self) -> int:
        """Jobs queued or running."""
        with self._lock:
            return self._busy

    def wait(self, timeout: float) -> bool:
        """Block until no job is queued or running (tests, benches, a clean stop); False on timeout."""
        with self._idle:
            return self._idle.wait_for(lambda: self._busy == 0, timeout)

    def close(self, timeout: float = 5.0) -> None:
        thread = self._thread
        if thread is not None and thread.is_alive():
            self._jobs.put(STOP)
            thread.join(timeout)

    def _record(self, entry: dict[str, Any]) -> None:
        self.history.append(entry)
        del self.history[:-MAX_HISTORY]


def from_settings(settings: Any = None) -> StreamDiscovery | None:
    """The stream pass the environment asks for: None unless ``ESC_LLM_BASE_URL`` is set and ``ESC_LLM_STREAM``
    is on."""
    if settings is None:
        from esc.settings import Settings

        settings = Settings()
    if not settings.llm_stream:
        return None
    config = config_from_settings(settings)
    return None if config is None else StreamDiscovery(config, queue_size=settings.llm_stream_queue)
