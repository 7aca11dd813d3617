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
        self._words: dict[str, tuple[list[int], list[float]]] = {}  # word -> its features' slots and ±weights
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

    def _word(self, word: str) -> tuple[list[int], list[float]]:
        """The slots and signed weights of a word's features, in order; memoised: a pure function of the word, and
        texts repeat their words."""
        got = self._words.get(word)
        if got is None:
            if len(self._words) >= WORD_MEMO:
                self._words.clear()
            got = ([], [])
            for feature, weight in self._word_features(word):
                slot, sign = self._slot(feature)
                got[0].append(slot)
                got[1].append(sign * weight)
            self._words[word] = got
        return got

    def _embed_batch(self, texts: list[str]) -> np.ndarray:
        dim = self._dim
        empty, empty_sign = self._slot("<empty>")
        slots: list[int] = []  # the slot of every feature of every text, in _features' order
        weights: list[float] = []
        counts: list[int] = []  # features per text
        for text in texts:
            start = len(slots)
            for word in _WORD.findall(text.lower()):
                ws, vs = self._word(word)
                slots.extend(ws)
                weights.extend(vs)
            if len(slots) == start:  # no word at all: the one feature "<empty>", as _features gives it
                slots.append(empty)
                weights.append(empty_sign * 1.0)
            counts.append(len(slots) - start)
        cells = np.asarray(slots, dtype=np.intp) + np.repeat(np.arange(len(texts), dtype=np.intp) * dim, counts)
        # bincount adds the weights in their order, as a sum per slot would: the same float64 sums
        acc = np.bincount(cells, weights=np.asarray(weights, dtype=np.float64), minlength=len(texts) * dim)
        acc = acc.reshape(len(texts), dim)
        out = np.sign(acc) * np.log1p(np.abs(acc))
        out[~out.any(axis=1), empty] = empty_sign  # every feature cancelled out: the empty vector
        return normalise_rows(out)
