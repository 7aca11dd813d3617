"""Embeddings from an OpenAI-compatible ``/v1/embeddings`` endpoint (see agents/embedding.py)."""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

from esc.agents.embedding_base import Embedder, normalise_rows
from esc.contract.errors import EmbedderUnavailable, EmbeddingError
from esc.settings import load


class OpenAICompatibleEmbedder(Embedder):
    """Embeddings from an OpenAI-compatible ``/v1/embeddings`` endpoint, via the ``openai`` package.

    ``dim`` comes from the argument or ``ESC_EMBED_DIM``; if neither is set, the first access embeds a probe
    text to learn it. Vectors are re-normalised (not every server returns unit vectors). Empty texts are sent
    as a single space, since the OpenAI API rejects empty strings.
    """

    def __init__(
        self,
        base_url: str | None = None,
        model: str | None = None,
        api_key: str | None = None,
        dim: int | None = None,
        batch_size: int = 64,
        timeout: float = 60.0,
    ) -> None:
        settings = load()
        self.base_url = base_url or settings.embed_base_url
        self.model = model or settings.embed_model
        if not self.base_url or not self.model:
            raise EmbedderUnavailable("openai embedder needs ESC_EMBED_BASE_URL and ESC_EMBED_MODEL")
        self._dim = dim if dim is not None else settings.embed_dim
        self.batch_size = max(1, batch_size)
        self.name = f"openai:{self.model}"
        self._api_key = api_key or settings.embed_api_key or "none"
        self._timeout = timeout
        self._client: Any = None
        self._lock = threading.Lock()

    def _get_client(self) -> Any:
        with self._lock:
            if self._client is None:
                try:
                    import openai
                except ImportError as exc:
                    raise EmbedderUnavailable("openai embedder needs the 'openai' package") from exc
                self._client = openai.OpenAI(
                    base_url=self.base_url, api_key=self._api_key, timeout=self._timeout, max_retries=2
                )
            return self._client

    @property
    def dim(self) -> int:
        if self._dim is None:
            probe = self._request(["dimension probe"])
            self._dim = int(probe.shape[1])
        return self._dim

    def _request(self, texts: list[str]) -> np.ndarray:
        client = self._get_client()
        try:
            response = client.embeddings.create(
                model=self.model, input=[t or " " for t in texts], encoding_format="float"
            )
        except Exception as exc:  # the openai package raises many types; callers get one with the reason
            raise EmbeddingError(f"{self.name} at {self.base_url}: {type(exc).__name__}: {exc}") from exc
        data = sorted(response.data, key=lambda d: d.index)
        if len(data) != len(texts):
            raise EmbeddingError(f"{self.name}: asked for {len(texts)} vectors, got {len(data)}")
        lengths = {len(d.embedding) for d in data}
        if len(lengths) != 1:
            raise EmbeddingError(f"{self.name}: vectors of mixed lengths {sorted(lengths)}")
        matrix = np.asarray([d.embedding for d in data], dtype=np.float32)
        if not np.isfinite(matrix).all():
            raise EmbeddingError(f"{self.name}: server returned non-finite values")
        return normalise_rows(matrix)

    def _embed_batch(self, texts: list[str]) -> np.ndarray:
        parts = [self._request(texts[i : i + self.batch_size]) for i in range(0, len(texts), self.batch_size)]
        matrix = np.concatenate(parts, axis=0)
        if matrix.shape[1] != self.dim:
            raise EmbeddingError(f"{self.name}: expected {self.dim} dimensions, server returned {matrix.shape[1]}")
        return matrix

