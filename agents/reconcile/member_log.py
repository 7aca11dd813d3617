"""The resolver's records, kept in SQLite so a restarted worker rebuilds the same clusters (without a path: memory
only). Values keep their type: dates and datetimes are tagged in the JSON."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import date, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

from esc.agents.reconcile.model import Member
from esc.agents.stores.local_sqlite import open_local


def _enc(v: Any) -> Any:
    if isinstance(v, datetime):
        return {"$dt": v.isoformat()}
    if isinstance(v, date):
        return {"$d": v.isoformat()}
    if isinstance(v, Decimal):
        return {"$dec": str(v)}
    return v


def _dec(v: Any) -> Any:
    if isinstance(v, dict) and len(v) == 1:
        if "$dt" in v:
            return datetime.fromisoformat(v["$dt"])
        if "$d" in v:
            return date.fromisoformat(v["$d"])
        if "$dec" in v:
            return Decimal(v["$dec"])
    return v


def encode(m: Member) -> str:
    return json.dumps(
        {"label": m.label, "key": [[k, _enc(v)] for k, v in m.key], "values": [[k, _enc(v)] for k, v in m.values],
         "source": m.source, "record_id": m.record_id, "location": m.location},
        ensure_ascii=False, default=str,
    )  # fmt: skip


def decode(sid: str, text: str) -> Member:
    d = json.loads(text)
    return Member(
        sid=sid,
        label=d["label"],
        key=tuple((k, _dec(v)) for k, v in d["key"]),
        values=tuple((k, _dec(v)) for k, v in d["values"]),
        source=d["source"],
        record_id=d["record_id"],
        location=d.get("location", ""),
    )


class MemberLog:
    def __init__(self, path: Path | None = None) -> None:
        self._db = open_local(path) if path is not None else None
        if self._db is not None:
            self._db.execute("CREATE TABLE IF NOT EXISTS er_members (sid TEXT PRIMARY KEY, member TEXT NOT NULL)")

    def put(self, members: Sequence[Member]) -> None:
        if self._db is None or not members:
            return
        with self._db:
            self._db.execute("BEGIN")
            self._db.executemany(
                "INSERT INTO er_members VALUES (?, ?) ON CONFLICT (sid) DO UPDATE SET member = excluded.member",
                [(m.sid, encode(m)) for m in members],
            )

    def delete(self, sids: Sequence[str]) -> None:
        if self._db is None or not sids:
            return
        with self._db:
            self._db.execute("BEGIN")
            self._db.executemany("DELETE FROM er_members WHERE sid = ?", [(s,) for s in sids])

    def load(self) -> list[Member]:
        if self._db is None:
            return []
        rows = self._db.execute("SELECT sid, member FROM er_members ORDER BY sid").fetchall()
        return [decode(sid, text) for sid, text in rows]
