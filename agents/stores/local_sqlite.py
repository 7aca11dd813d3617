"""A worker's own small durable state in SQLite (seen-index, vector outbox)."""

from __future__ import annotations

import sqlite3
from pathlib import Path


def open_local(path: Path | str = ":memory:") -> sqlite3.Connection:
    """Autocommit connection usable from any thread (callers serialise with their own lock), WAL journal with
    ``synchronous=NORMAL``: a committed write survives a process crash (SIGKILL), not necessarily a power cut."""
    if path != ":memory:":
        Path(path).parent.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=NORMAL")
    return db
