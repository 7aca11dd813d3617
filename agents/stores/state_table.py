"""A key-value state table with changelog semantics, saved incrementally (the ``StateStore`` port).

A stage keeps its durable state as entries (``agents.agent_state`` for the contract agent); a runtime saves the
entries that changed after each batch. Two implementations: :class:`SqliteStateTable` (the embedded runtime: one
local file, each save one transaction, so a crash leaves the previous save or this one) and the Faust runtime's
changelog-backed table (``streams/runtime/faust_app.py``: one changelog message per entry, written in order).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Protocol

from esc.agents.stores.local_sqlite import open_local


class StateTable(Protocol):
    def load(self) -> dict[str, str]:
        """Every entry."""
        ...

    def save(self, entries: Mapping[str, str | None]) -> None:
        """Write entries (``None`` deletes one), in order."""
        ...


class SqliteStateTable:
    def __init__(self, path: Path | str = ":memory:") -> None:
        self._db = open_local(path)
        self._db.execute("CREATE TABLE IF NOT EXISTS entries (k TEXT PRIMARY KEY, v TEXT NOT NULL) WITHOUT ROWID")
        self._lock = threading.Lock()
        # What the table holds, as this writer last loaded or wrote it: an entry saved again unchanged is not
        # written (a runtime saves after every pump; most saves change nothing or one offset).
        self._held: dict[str, str] = {}

    def load(self) -> dict[str, str]:
        with self._lock:
            self._held = {str(k): str(v) for k, v in self._db.execute("SELECT k, v FROM entries")}
            return dict(self._held)

    def save(self, entries: Mapping[str, str | None]) -> None:
        with self._lock:
            entries = {k: v for k, v in entries.items() if v is None or self._held.get(k) != v}
            if not entries:
                return
            self._db.execute("BEGIN")
            try:
                for k, v in entries.items():
                    if v is None:
                        self._db.execute("DELETE FROM entries WHERE k = ?", (k,))
                    else:
                        self._db.execute("INSERT OR REPLACE INTO entries (k, v) VALUES (?, ?)", (k, v))
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")
            for k, v in entries.items():
                if v is None:
                    self._held.pop(k, None)
                else:
                    self._held[k] = v

    def close(self) -> None:
        self._db.close()
