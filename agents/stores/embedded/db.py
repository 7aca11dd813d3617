"""One DuckDB database file per store, one connection, one lock.

DuckDB lets one process write a database file; inside the process every call goes through this connection under
an ``RLock``, so agents on several threads share a store safely. Writes run in a transaction that commits or rolls
back as a whole; reads run in a transaction that is always rolled back, so a read can never change the store.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import duckdb

from esc.contract.errors import StoreLocked

MEMORY = ":memory:"


class Database:
    def __init__(self, path: str | Path = MEMORY) -> None:
        self.path = str(path)
        if self.path != MEMORY:
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        try:
            self.con = duckdb.connect(self.path)
        except duckdb.IOException as exc:
            if "lock" in str(exc).lower():
                raise StoreLocked(
                    f"the embedded store {self.path} is open in another process (DuckDB allows one writer); "
                    "stop that process or point ESC_STATE_DIR elsewhere"
                ) from exc
            raise
        self.lock = threading.RLock()
        self._closed = False

    @contextmanager
    def write(self) -> Iterator[duckdb.DuckDBPyConnection]:
        with self.lock:
            self._check_open()
            self.con.begin()
            try:
                yield self.con
            except BaseException:
                self.con.rollback()
                raise
            self.con.commit()

    @contextmanager
    def read(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """A transaction that is always rolled back: whatever the statement does, nothing persists."""
        with self.lock:
            self._check_open()
            self.con.begin()
            try:
                yield self.con
            finally:
                self.con.rollback()

    def _check_open(self) -> None:
        if self._closed:
            raise RuntimeError(f"the embedded store {self.path} is closed")

    def close(self) -> None:
        with self.lock:
            if not self._closed:
                self._closed = True
                self.con.close()


def scalar(
    con: duckdb.DuckDBPyConnection, sql: str, params: Sequence[Any] | dict[str, Any] | None = None
) -> Any:
    """First column of the first row (None without rows); reads the whole result so the connection is free."""
    rows = con.execute(sql, params or []).fetchall()
    return rows[0][0] if rows else None
