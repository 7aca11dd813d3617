"""The fallback embedder: feature hashing of words and character trigrams (numpy only; see agents/embedding.py)."""

from __future__ import annotations

import hashlib
import re

import numpy as np

from esc.agents.embedding_base import Embedder, normalise_rows

_WORD = re.compile(r"\w+", re.UNICODE)
WORD_MEMO = 1 << 16  # words whose features' slots are remembered (~30 MB at most; cleared when full)


class HashingEmbedder(Embedder):
    """Feature-hashing bag of words plus character trigrams of each word (numpy only).

    A weaker, lexical fallback: similar vectors mean shared words or word pieces, never shared meaning
    ("kitten" and "cat" are unrelated to it). Deterministic across processes and machines (blake2b, not
    Python's salted ``hash``). Each feature adds ``±weight`` at ``hash % dim``; counts are dampened with
    ``log1p`` and the vector is L2-normalised. An empty text maps to a fixed unit vector.
    """

    def __init__(self, dim: int = 384, ngram: int = 3, char_weight: float = 0.5) -> None:
        self._words: dict[str, list[tuple[int, float]]] = {}  # word -> its features' (slot, ±weight): memoised
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
        for word in _WORD.findall(text.lower()):
            feats.extend(self._word_features(word))
        return feats or [("<empty>", 1.0)]

    def _word_features(self, word: str) -> list[tuple[str, float]]:
        """One word's features: the word, then its character n-grams with ``<`` and ``>`` around it."""
        n = self.ngram
        feats = [("w:" + word, 1.0)]
        padded = f"<{word}>"
        if len(padded) > n:
            feats.extend(("c:" + padded[i : i + n], self.char_weight) for i in range(len(padded) - n + 1))
        return feats

    def _word(self, word: str) -> list[tuple[int, float]]:
        """The (slot, signed weight) of a word's features, memoised: a pure function of the word, and texts
        repeat their words."""
        got = self._words.get(word)
        if got is None:
            if len(self._words) >= WORD_MEMO:
                self._words.clear()
            got = []
            for feature, weight in self._word_features(word):
                slot, sign = self._slot(feature)
                got.append((slot, sign * weight))
            self._words[word] = got
        return got

    def _embed_batch(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), self._dim), dtype=np.float64)
        for row, text in enumerate(texts):
            # the features of each word in turn: _features' order, so the same sums
            acc: dict[int, float] = {}
            for word in _WORD.findall(text.lower()):
                for slot, value in self._word(word):
                    acc[slot] = acc.get(slot, 0.0) + value
            if not acc:  # no word at all: the one feature "<empty>", as _features gives it
                slot, sign = self._slot("<empty>")
                acc[slot] = sign * 1.0
            values = np.fromiter(acc.values(), dtype=np.float64, count=len(acc))  # one float64 op per slot, at once
            out[row, np.fromiter(acc.keys(), dtype=np.intp, count=len(acc))] = np.sign(values) * np.log1p(np.abs(values))
            if not out[row].any():  # every feature cancelled out: fall back to the empty vector
                slot, sign = self._slot("<empty>")
                out[row, slot] = sign
        return normalise_rows(out)

