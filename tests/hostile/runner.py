"""Running hostile cases through the embedded ingest (the in-process runtime ``esc ingest --embedded`` uses), in
groups, and checking what came out.

A group is one drop folder holding each case's folder (``<drop>/<case id>/``) with a good file beside the case's
files, ingested once. Cases share the run, so one that aborted or hung it would fail every case of its group and
every good file; a case that merely misbehaves fails alone. While the ingest runs, an audit hook records every
file Python opens whose real path is outside the drop folder's reach (the secrets, devices and /proc entries links
point at) or is a FIFO: none may be opened at all. A run that does not finish in time fails, naming its cases.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import sys
import threading
import time
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from esc.agents.embedding import HashingEmbedder
from esc.contract.labels import MAX_SOURCE_LEN
from esc.settings import load
from esc.streams.runtime.inprocess import RunSummary, open_runtime
from tests.hostile.model import Case, Env, csv_text, token, write

CASE_SECONDS = 30.0
"""The goal per group (so per case): ``bench/hostile.py`` prints every group's time against it."""
HANG_SECONDS = 4 * CASE_SECONDS
"""A group still going after this has hung: the test fails it (speed itself is the bench's, not a test's)."""
_UNPRINTABLE = re.compile(r"[\x00-\x1f\x7f\ud800-\udfff]")


class _Opens:
    """Paths Python opened while watching that it never may (an audit hook cannot be removed: it stays idle)."""

    def __init__(self) -> None:
        self.forbidden: set[str] = set()
        self.folders: tuple[str, ...] = ()
        self.hits: list[str] = []
        self.active = False
        sys.addaudithook(self._hook)

    def _hook(self, event: str, args: tuple[Any, ...]) -> None:
        if event != "open" or not self.active or not args or isinstance(args[0], int):
            return
        try:
            real = os.path.realpath(os.fsdecode(args[0]))
        except (TypeError, ValueError, OSError):
            return
        if real in self.forbidden or any(real.startswith(f + os.sep) for f in self.folders):
            self.hits.append(real)


_OPENS: _Opens | None = None


def _watch() -> _Opens:
    global _OPENS
    if _OPENS is None:
        _OPENS = _Opens()
    return _OPENS


def good_rows(case: Case) -> int:
    return 2 + int(case.id[1:]) % 5


@dataclass
class Outcome:
    """What one group's ingest produced, per case."""

    seconds: float
    summary: RunSummary | None
    error: str | None
    records: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # case id -> top-level envelopes
    dead: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # case id -> dead letters
    sources: dict[str, dict[str, Any]] = field(default_factory=dict)  # source -> {records, fields, files, nodes}
    opened: list[str] = field(default_factory=list)
    state_text: str = ""  # everything the run wrote as text (records log, dead letters, contract)


def _case_of(location: str | None) -> str | None:
    m = re.match(r"(c\d{3})/", location or "")
    return m.group(1) if m else None


def _ingest(root: Path, drop: Path) -> tuple[RunSummary | None, str | None, dict[str, dict[str, Any]]]:
    settings = load().replace(state_dir=root / "state", app_id="hostile", topic_prefix="esc")
    runtime, close = open_runtime(settings, drop, embedder=HashingEmbedder(), settle=0.0)
    try:
        summary = asyncio.run(runtime.ingest_once())
        sources: dict[str, dict[str, Any]] = {}
        contract = runtime.contract
        if contract is not None:
            for name, src in contract.sources.items():
                entity = contract.entity_for_source(name)
                nodes = runtime.ingestor.graph.count(entity.name) if entity is not None else None
                sources[name] = {"records": src.records, "fields": len(src.fields), "files": list(src.files),
                                 "nodes": nodes}
        return summary, None, sources
    except BaseException as exc:  # the ingest aborted: that is what this corpus must never see
        return None, f"{type(exc).__name__}: {exc}", {}
    finally:
        close()


def build_drop(cases: list[Case], drop: Path, env: Env) -> None:
    """Each case's files in ``drop/<case id>/``, with the good file beside them."""
    drop.mkdir(parents=True, exist_ok=True)
    env.outside.mkdir(parents=True, exist_ok=True)
    for case in cases:
        folder = drop / case.id
        folder.mkdir()
        case.build(folder, env)
        write(folder, f"good_{case.id}.csv", csv_text(f"good-{case.id}", good_rows(case)))


def run_group(cases: list[Case], root: Path, timeout: float | None = None) -> Outcome:
    drop, env = root / "drop", Env(root / "outside")
    build_drop(cases, drop, env)
    watch = _watch()
    watch.forbidden, watch.folders, watch.hits = set(env.never_open), (str(env.outside.resolve()),), []
    result: list[tuple[RunSummary | None, str | None, dict[str, dict[str, Any]]]] = []
    worker = threading.Thread(target=lambda: result.append(_ingest(root, drop)), daemon=True)
    t0 = time.perf_counter()
    watch.active = True
    worker.start()
    worker.join(timeout if timeout is not None else HANG_SECONDS)
    seconds = time.perf_counter() - t0
    if worker.is_alive():
        _unblock(env)
        worker.join(10)
    watch.active = False
    if not result:
        return Outcome(seconds, None, f"did not finish in {seconds:.0f} s", opened=list(watch.hits))
    summary, error, sources = result[0]
    out = Outcome(seconds, summary, error, sources=sources, opened=list(watch.hits))
    _collect(out, root / "state" / "inprocess")
    return out


def _unblock(env: Env) -> None:
    """Give a reader stuck opening a FIFO its writer, so the thread ends and the failure can be reported."""
    for path in env.never_open:
        with contextlib.suppress(OSError):
            os.close(os.open(path, os.O_RDWR | os.O_NONBLOCK))


def _collect(out: Outcome, state: Path) -> None:
    texts: list[str] = []
    records: list[str] = []
    for log in sorted((state / "records").glob("*.jsonl")):
        text = log.read_text("utf-8")
        texts.append(text)
        records += [item["v"] for item in map(json.loads, text.splitlines()) if item["v"] is not None]
    dlq = state / "dlq.jsonl"
    dead = dlq.read_text("utf-8").splitlines() if dlq.exists() else []
    texts += dead
    contract = state / "contract.json"
    if contract.exists():
        texts.append(contract.read_text("utf-8"))
    gather(out, records, dead)
    out.state_text = "\n".join(texts)


def gather(out: Outcome, records: list[str], dead: list[str]) -> None:
    """File record envelopes (JSON) and dead letters (JSON) under the case they came from."""
    for value in records:
        env = json.loads(value)
        cid = _case_of(env.get("location", {}).get("file"))
        if cid is not None and env.get("parent") is None and "/good_" not in env["location"]["file"]:
            out.records.setdefault(cid, []).append(env)
    for line in dead:
        letter = json.loads(line)
        out.dead.setdefault(_case_of(letter.get("location")) or "?", []).append(letter)


def _strings(value: Any, into: set[str]) -> None:
    if isinstance(value, str):
        into.add(value)
    elif isinstance(value, dict):
        for k, v in value.items():
            into.add(str(k))
            _strings(v, into)
    elif isinstance(value, list):
        for v in value:
            _strings(v, into)


def check(case: Case, out: Outcome) -> list[str]:
    """Everything wrong with one case's outcome (empty: handled as it must be)."""
    if out.error is not None or out.summary is None:
        return [f"the ingest did not complete: {out.error}"]
    e, problems = case.expect, []
    records, dead = out.records.get(case.id, []), out.dead.get(case.id, [])
    n, d = len(records), len(dead)
    reasons = [str(x.get("reason") or "") for x in dead]
    if any(not r.strip() for r in reasons):
        problems.append("a dead letter without a reason")
    if e.records is not None and n != e.records:
        problems.append(f"{n} records, expected {e.records}")
    if n < e.min_records:
        problems.append(f"{n} records, expected at least {e.min_records}")
    if e.rows is not None and n > e.rows:
        problems.append(f"{n} records from {e.rows} rows")
    if e.rows is not None and n < e.rows and d == 0:
        problems.append(f"{n} of {e.rows} rows became records and no dead letter says why")
    if e.all_or_nothing and n not in (0, e.rows):
        problems.append(f"{n} records: expected all {e.rows} or none")
    if e.dead is not None and d != e.dead:
        problems.append(f"{d} dead letters, expected {e.dead}: {reasons[:3]}")
    if d < e.min_dead:
        problems.append(f"{d} dead letters, expected at least {e.min_dead}")
    if e.reason is not None and not any(re.search(e.reason, r, re.IGNORECASE) for r in reasons):
        problems.append(f"no dead letter's reason matches {e.reason!r}: {reasons[:3]}")
    stored: set[str] = set()
    for env in records:
        _strings(env.get("payload", {}), stored)
    problems += [f"{p!r} is not stored verbatim" for p in e.present if p not in stored]
    problems += [f"{a!r} was read into the state" for a in (*e.absent, token(case.id)) if a in out.state_text]
    mine = {s: v for s, v in out.sources.items() if v["files"] and all(f.startswith(f"{case.id}/") for f in v["files"])}
    good = [v for v in mine.values() if any("/good_" in f for f in v["files"])]
    if len(good) != 1 or good[0]["records"] != good_rows(case) or good[0]["nodes"] != good_rows(case):
        problems.append(f"the good file beside it did not land whole: {good}")
    for name, info in mine.items():
        if e.max_fields is not None and info["fields"] > e.max_fields:
            problems.append(f"source {name!r} has {info['fields']} fields (cap {e.max_fields})")
        if e.nodes and info["nodes"] != info["records"]:
            problems.append(f"source {name!r}: {info['nodes']} nodes for {info['records']} records")
    return problems


def check_group(cases: list[Case], out: Outcome) -> list[str]:
    """Problems of the whole group: what was opened, source names, time, then each case's own."""
    problems = [f"opened {p} (outside the folder, or a FIFO)" for p in sorted(set(out.opened))]
    for name in out.sources:
        if _UNPRINTABLE.search(name) or len(name) > MAX_SOURCE_LEN or not unicodedata.is_normalized("NFC", name):
            problems.append(f"source name {name!r} is not printable, NFC and at most {MAX_SOURCE_LEN} characters")
    if out.seconds > HANG_SECONDS:
        problems.append(f"the group took {out.seconds:.1f} s (it hung: over {HANG_SECONDS:.0f} s)")
    problems += [f"a dead letter of no case: {d.get('reason')!r} at {d.get('location')!r}" for d in out.dead.get("?", [])]
    for case in cases:
        problems += [f"{case.id} {case.kind}: {case.title}: {p}" for p in check(case, out)]
    return problems
