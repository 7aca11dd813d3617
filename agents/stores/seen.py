"""Which records the profiler has already observed: record key -> content hash, durable in a local SQLite file.

Delivery is at-least-once (a connector re-sends a file after a crash, a producer retries), but a profile must
count each record once: the same record delivered twice would make a unique identity key look duplicated. A
record whose content changed is new evidence and is observed again.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path

from esc.agents.stores.local_sqlite import open_local

CHUNK = 500  # SQLite's default limit on host parameters is 999


DELIVERY_FIELDS = ("event_time",)
"""Envelope fields that say when a record was sent, not what it says: a connector re-sending a file after a crash
stamps a new ``event_time``, which does not make a row new evidence. ``file_hash`` stays in: every row of a new
file version is evidence of that version, which replaces the old one whole (agents/source_state.py)."""


def content_hash(value: bytes) -> bytes:
    """Hash of what a record envelope says (source, id, payload, location, parent, file version), canonical JSON;
    bytes that are not a JSON object are hashed as they are (they go to the dead-letter topic anyway)."""
    try:
        doc = json.loads(value)
    except ValueError:
        doc = None
    if isinstance(doc, dict):
        for name in DELIVERY_FIELDS:
            doc.pop(name, None)
        value = json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8", "replace")
    return hashlib.blake2b(value, digest_size=12).digest()


def sightings(
    items: Sequence[tuple[bytes, bytes]], known: Mapping[bytes, bytes | None]
) -> tuple[list[bool], list[tuple[bytes, bytes]]]:
    """For (record key, value) pairs and the content hashes already observed (``known``: key -> hash): True where
    the record is new or its content changed (a record twice in the batch counts once), and the (key, content
    hash) pairs to remember."""
    hashes = [content_hash(v) for _, v in items]
    out = [True] * len(items)
    batch: dict[bytes, bytes] = {}
    for i, (key, _) in enumerate(items):
        if known.get(key) == hashes[i] or batch.get(key) == hashes[i]:
            out[i] = False
        batch[key] = hashes[i]
    return out, [(k, h) for (k, _), h in zip(items, hashes, strict=True)]


Mark = tuple[int, bytes, bytes | None]
"""A seen-mark for a shared index: (records partition, record key, content hash; ``None``: forgotten)."""


class SeenRecords:
    def __init__(self, path: Path | str = ":memory:") -> None:
        self._db = open_local(path)
        self._db.execute("CREATE TABLE IF NOT EXISTS seen (k BLOB PRIMARY KEY, h BLOB NOT NULL) WITHOUT ROWID")
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS staged (id INTEGER PRIMARY KEY AUTOINCREMENT, k BLOB, v BLOB NOT NULL)"
        )
        # Seen-marks bound for an index every worker shares (streams/runtime/seen_table.py), staged with the
        # profile updates they go with.
        self._db.execute("CREATE TABLE IF NOT EXISTS marks (id INTEGER PRIMARY KEY AUTOINCREMENT, p INTEGER, k BLOB, h BLOB)")
        self._lock = threading.Lock()

    def first_sightings(self, items: Sequence[tuple[bytes, bytes]]) -> list[bool]:
        """For (record key, value) pairs: True where the record is new or its content changed. Remembers nothing:
        call ``remember`` once what was derived from them is durable, so a crash in between loses nothing."""
        return self.check(items)[0]

    def check(self, items: Sequence[tuple[bytes, bytes]]) -> tuple[list[bool], list[tuple[bytes, bytes]]]:
        """``first_sightings`` plus the (key, content hash) pairs to hand to ``remember_hashes`` (each value is
        hashed once)."""
        keys = [k for k, _ in items]
        with self._lock:
            known: dict[bytes, bytes] = {}
            for i in range(0, len(keys), CHUNK):
                part = keys[i : i + CHUNK]
                rows = self._db.execute(
                    f"SELECT k, h FROM seen WHERE k IN ({','.join('?' * len(part))})", part
                ).fetchall()
                known.update(rows)
        return sightings(items, known)

    def remember(self, items: Sequence[tuple[bytes, bytes]]) -> None:
        """Remember (record key, value) pairs as observed."""
        self.remember_hashes([(k, content_hash(v)) for k, v in items])

    def remember_hashes(self, pairs: Sequence[tuple[bytes, bytes]]) -> None:
        """Remember (record key, content hash) pairs, as ``check`` returned them."""
        self.stage(pairs, ())

    def stage(
        self,
        pairs: Sequence[tuple[bytes, bytes]],
        messages: Sequence[tuple[bytes, bytes]],
        marks: Sequence[Mark] = (),
    ) -> None:
        """In one transaction: remember (record key, content hash) pairs and stage the (key, value) messages
        derived from them, to be sent (:meth:`staged`) and then dropped (:meth:`sent`); ``marks`` are staged for a
        shared index the same way (:meth:`staged_marks`, :meth:`marks_sent`)."""
        with self._lock:
            self._db.execute("BEGIN")
            try:
                self._db.executemany("INSERT OR REPLACE INTO seen (k, h) VALUES (?, ?)", pairs)
                self._db.executemany("INSERT INTO staged (k, v) VALUES (?, ?)", messages)
                self._db.executemany("INSERT INTO marks (p, k, h) VALUES (?, ?, ?)", marks)
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    def staged(self) -> list[tuple[int, bytes, bytes]]:
        """Staged messages not acknowledged as sent, oldest first: (id, key, value)."""
        with self._lock:
            return [(int(i), k, v) for i, k, v in self._db.execute("SELECT id, k, v FROM staged ORDER BY id")]

    def sent(self, ids: Sequence[int]) -> None:
        """Staged messages that are durable where they were sent."""
        with self._lock:
            self._db.executemany("DELETE FROM staged WHERE id = ?", [(i,) for i in ids])

    def staged_marks(self) -> list[tuple[int, Mark]]:
        """Staged seen-marks not acknowledged as sent, oldest first: (id, mark)."""
        with self._lock:
            rows = self._db.execute("SELECT id, p, k, h FROM marks ORDER BY id").fetchall()
        return [(int(i), (int(p), k, h)) for i, p, k, h in rows]

    def marks_sent(self, ids: Sequence[int]) -> None:
        """Staged seen-marks that are durable in the shared index."""
        with self._lock:
            self._db.executemany("DELETE FROM marks WHERE id = ?", [(i,) for i in ids])

    def forget(self, keys: Sequence[bytes]) -> None:
        """A retracted (tombstoned) record: if it comes back it is new evidence."""
        with self._lock:
            self._db.executemany("DELETE FROM seen WHERE k = ?", [(k,) for k in keys])

    def close(self) -> None:
        self._db.close()
