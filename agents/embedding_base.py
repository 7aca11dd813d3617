"""The embedder interface: unit-length ``float32`` vectors of a fixed dimension (see agents/embedding.py)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence

import numpy as np

from esc.contract.errors import EmbeddingError


def normalise_rows(matrix: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return (matrix / np.clip(norms, 1e-12, None)).astype(np.float32, copy=False)


class Embedder(ABC):
    """Turns texts into unit-length ``float32`` vectors of a fixed dimension.

    ``embed(texts)`` returns an array of shape ``(len(texts), dim)`` (``(0, dim)`` for no texts);
    ``embed_one(text)`` returns shape ``(dim,)``. Implementations are thread-safe.
    """

    name: str

    @property
    @abstractmethod
    def dim(self) -> int: ...

    @abstractmethod
    def _embed_batch(self, texts: list[str]) -> np.ndarray:
        """Vectors for a non-empty list of strings, shape (n, dim), rows normalised."""

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if isinstance(texts, str):
            raise TypeError("embed() takes a sequence of strings, not one string: use embed_one()")
        items = list(texts)
        for i, text in enumerate(items):
            if not isinstance(text, str):
                raise TypeError(f"embed(): item {i} is {type(text).__name__}, expected str")
        if not items:
            return np.zeros((0, self.dim), dtype=np.float32)
        vectors = self._embed_batch(items)
        if vectors.shape != (len(items), self.dim):
            raise EmbeddingError(
                f"{self.name}: expected vectors of shape {(len(items), self.dim)}, got {vectors.shape}"
            )
        return vectors

    def embed_one(self, text: str) -> np.ndarray:
        vectors: np.ndarray = self.embed([text])
        return vectors[0]

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r})"


