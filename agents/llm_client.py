"""One operation's calls to an OpenAI-compatible chat endpoint, bounded: per-call timeout, retries, a call budget
and a deadline for the whole operation (one ``esc discover --llm`` run, one question).

Configuration (environment, read by ``agents.llm.config_from_settings``):

* ``ESC_LLM_TIMEOUT`` (seconds, default 60): one HTTP request, connect to last byte;
* ``ESC_LLM_RETRIES`` (default 2): retries of one request on a timeout, a refused connection, 408, 409, 429 and
  5xx, with exponential backoff, honouring ``Retry-After`` (the ``openai`` client's own retry);
* ``ESC_LLM_MAX_CALLS`` (default 12): chat calls one operation may make (retries are not calls);
* ``ESC_LLM_DEADLINE`` (seconds, default 300): wall time of one operation; each call's timeout is cut to what is left.

A call past the budget or the deadline raises :class:`LLMBudgetExceeded`; every other failure raises what the
client raised. Callers turn both into a recorded outcome, never into a crash or a changed contract.
"""

from __future__ import annotations

import time
from typing import Any


class LLMBudgetExceeded(RuntimeError):
    """The operation used its calls or its time (``ESC_LLM_MAX_CALLS`` / ``ESC_LLM_DEADLINE``)."""


class LLMSession:
    """Calls of one operation. ``client`` is an ``openai.OpenAI`` (or anything with ``chat.completions.create``)."""

    def __init__(self, client: Any, model: str, temperature: float, timeout: float, max_calls: int,
                 deadline: float, clock: Any = time.monotonic) -> None:  # fmt: skip
        self.client = client
        self.model = model
        self.temperature = temperature
        self.timeout = timeout
        self.max_calls = max_calls
        self.clock = clock
        self.ends = clock() + deadline
        self.calls = 0
        self.seconds = 0.0

    def remaining(self) -> float:
        return self.ends - self.clock()

    def chat(self, messages: list[dict[str, str]], json_mode: bool = False) -> str:
        """The assistant's message content of one chat completion (``json_mode``: ask for a JSON object, and ask
        again without when the server rejects the option)."""
        left = self.remaining()
        if self.calls >= self.max_calls:
            raise LLMBudgetExceeded(f"call budget used ({self.calls} of ESC_LLM_MAX_CALLS={self.max_calls})")
        if left <= 0:
            raise LLMBudgetExceeded(f"deadline passed (ESC_LLM_DEADLINE, {self.seconds:.1f} s in {self.calls} calls)")
        self.calls += 1
        kwargs: dict[str, Any] = {"model": self.model, "messages": messages, "temperature": self.temperature,
                                  "timeout": max(0.1, min(self.timeout, left))}  # fmt: skip
        started = self.clock()
        try:
            if json_mode:
                import openai

                try:
                    response = self.client.chat.completions.create(**kwargs, response_format={"type": "json_object"})
                except openai.BadRequestError:  # some compatible servers do not support response_format
                    response = self.client.chat.completions.create(**kwargs)
            else:
                response = self.client.chat.completions.create(**kwargs)
        finally:
            self.seconds += self.clock() - started
        choices = getattr(response, "choices", None)
        content = choices[0].message.content if choices else None
        if not content:
            raise ValueError("empty answer")
        return str(content)
