"""Many small sources in one drop folder (issue 14: "500 small files finish in <= 60 s"), on both runtimes.

    .venv/bin/python bench/many_sources.py                         # 500 files, embedded, this checkout
    .venv/bin/python bench/many_sources.py --baseline ns           # ... and the same on git ref `ns`, same run
    .venv/bin/python bench/many_sources.py --runtime faust --baseline ns   # the Faust worker (stack must be up)
    .venv/bin/python bench/many_sources.py --files 30 100 200 500  # a series: how the time grows

Each file is a distinct small source (its own column names, 4 rows; CSV, JSON lines and JSON in turn), so no two
are a corpus. ``embedded`` times ``esc ingest DIR --embedded`` (the in-process runtime, to contract, graph and the
query grounding); ``faust`` starts ``esc up --data DIR`` (own app id, topics, state and web port), drops the files
into its folder and times drop -> every record's SourceRecord in Neo4j (records of a source are written once it
settled, so that is also the contract covering all of them). ``--baseline REF`` runs the same measurement on a
checkout of REF (a temporary ``git worktree``, imported first through PYTHONPATH) in the same run. Every
measurement runs in its own process; the hashing embedder is used (the files hold no prose). Beside wall seconds
each line prints the CPU seconds the run cost (embedded: this process; faust: the worker's process group, and the
Neo4j server's own CPU when ``ss`` names it), since the machine may be shared. ``--py-spy OUT.svg`` records a
flame graph of this checkout's Faust worker.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # tests.integration.worker (the graph wipe)
ROWS = 4


def make_drop(folder: Path, files: int) -> int:
    """``files`` distinct small sources; returns the number of records."""
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(files):
        cols = [f"s{i}_code", f"s{i}_label", f"s{i}_qty"]
        rows = [{f"s{i}_id": j, cols[0]: f"k{i}-{j}", cols[1]: f"item {j} of {i}", cols[2]: j * (i + 1)}
                for j in range(1, ROWS + 1)]  # fmt: skip
        kind = i % 3
        if kind == 0:
            head = ",".join(rows[0])
            body = "".join(",".join(str(v) for v in r.values()) + "\n" for r in rows)
            (folder / f"src{i:04d}.csv").write_text(head + "\n" + body, "utf-8")
        elif kind == 1:
            (folder / f"src{i:04d}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")
        else:
            (folder / f"src{i:04d}.json").write_text(json.dumps(rows), "utf-8")
    return files * ROWS


# ----------------------------------------------------------------------------------------- one measurement


def child_embedded(files: int) -> dict[str, Any]:

    from esc.agents.embedding import HashingEmbedder
    from esc.settings import load
    from esc.streams.runtime.inprocess import ingest_embedded

    root = Path(tempfile.mkdtemp(prefix="esc-many-"))
    try:
        records = make_drop(root / "drop", files)
        settings = load().replace(state_dir=root / "state")
        c0, t0 = _self_cpu(), time.perf_counter()
        summary = ingest_embedded(settings, root / "drop", HashingEmbedder())
        seconds = time.perf_counter() - t0
        cpu = _self_cpu() - c0  # children that are still running (a profiling pool) are not counted
        return {"seconds": round(seconds, 2), "cpu": round(cpu, 1), "records": records, "written": summary.written + summary.backfilled,
                "contract_version": summary.contract_version, "sources": files}
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _group_cpu(pgid: int) -> float:
    """CPU seconds (user + system) so far of every live process in process group ``pgid`` (the worker and the
    children it started, e.g. the profiling process): what the run cost, whatever else the machine was doing."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid:  # pgrp; utime, stime are fields 14 and 15 of stat (11 and 12 after the name)
            total += int(fields[11]) + int(fields[12])
    return total / tick


def _pid_cpu(pid: int | None) -> float:
    """CPU seconds so far of one process (0 when unknown)."""
    if pid is None:
        return 0.0
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _listener_pid(port: int) -> int | None:
    """The process listening on a local TCP port (the Neo4j server: its CPU is the graph writes' cost), if ``ss``
    can tell."""
    try:
        out = subprocess.run(["ss", "-ltnpH", f"sport = :{port}"], capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    for part in out.split("pid=")[1:]:
        digits = part.split(",", 1)[0]
        if digits.isdigit():
            return int(digits)
    return None


def _self_cpu() -> float:
    """CPU seconds of this process and its finished children."""
    import resource

    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def _source_records(driver: Any, label: str) -> int:
    return int(driver.execute_query(f"MATCH (s:`{label}`) RETURN count(s) AS c").records[0]["c"])


def child_faust(files: int, timeout: float, spy: str | None = None) -> dict[str, Any]:
    import asyncio

    from neo4j import GraphDatabase

    from esc.settings import load
    from tests.integration.worker import wipe_graph

    settings = load()
    run = f"many{uuid.uuid4().hex[:8]}"
    root = Path(tempfile.mkdtemp(prefix="esc-many-"))
    data = root / "drop"
    data.mkdir()
    port = _free_port()
    env = dict(os.environ, ESC_APP_ID=run, ESC_TOPIC_PREFIX=run, ESC_STATE_DIR=str(root / "state"),
               ESC_WEB_PORT=str(port), ESC_EMBEDDER="hashing")  # fmt: skip
    log = root / "worker.log"
    proc = subprocess.Popen([sys.executable, "-m", "esc.cli", "up", "--data", str(data)], env=env,
                            stdout=log.open("wb"), stderr=subprocess.STDOUT, start_new_session=True)  # fmt: skip
    label = f"{run}__SourceRecord"
    driver = GraphDatabase.driver(settings.neo4j_uri, auth=None, notifications_min_severity="OFF")
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=3):
                    break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"worker did not start:\n{log.read_text('utf-8', 'replace')[-3000:]}") from None
                time.sleep(0.5)
        staging = root / "staging"
        records = make_drop(staging, files)
        spying = _spy(proc.pid, spy)
        neo4j_pid = _listener_pid(settings.neo4j_port)
        c0, n0, t0 = _group_cpu(proc.pid), _pid_cpu(neo4j_pid), time.perf_counter()
        for f in sorted(staging.iterdir()):
            f.rename(data / f.name)
        n = 0
        while n < records:
            if time.perf_counter() - t0 > timeout:
                raise RuntimeError(f"{n} of {records} records after {timeout} s:\n"
                                   f"{log.read_text('utf-8', 'replace')[-3000:]}")  # fmt: skip
            time.sleep(0.5)
            n = _source_records(driver, label)
        seconds = time.perf_counter() - t0
        cpu, neo4j_cpu = _group_cpu(proc.pid) - c0, _pid_cpu(neo4j_pid) - n0
        if spying is not None:
            spying.send_signal(signal.SIGINT)
            spying.wait(60)
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=5) as resp:
            version = json.load(resp).get("contract_version")
        return {"seconds": round(seconds, 2), "cpu": round(cpu, 1), "neo4j_cpu": round(neo4j_cpu, 1) if neo4j_pid else None,
                "records": records, "written": n, "contract_version": version, "sources": files}
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        wipe_graph(driver, f"{run}__")  # nodes and constraints: leftovers slow the next run's constraints
        driver.close()
        asyncio.run(_drop_topics(settings.kafka_bootstrap, run))
        shutil.rmtree(root, ignore_errors=True)


def _spy(pid: int, out: str | None) -> subprocess.Popen[bytes] | None:
    """``py-spy record`` of the worker and its children until stopped (``--py-spy OUT.svg``)."""
    if out is None:
        return None
    spy = shutil.which("py-spy") or str(Path(sys.executable).parent / "py-spy")
    return subprocess.Popen([spy, "record", "--pid", str(pid), "--subprocesses", "--rate", "50", "-o", out],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip


async def _drop_topics(bootstrap: str, prefix: str) -> None:
    from aiokafka.admin import AIOKafkaAdminClient

    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=15000)
    await admin.start()
    try:
        mine = [t for t in await admin.list_topics() if t.startswith(prefix)]
        if mine:
            await admin.delete_topics(mine)
    finally:
        await admin.close()


# ------------------------------------------------------------------------------------------------- driver


def measure(checkout: Path, runtime: str, files: int, timeout: float, spy: str | None = None) -> dict[str, Any]:
    """One measurement in a new process importing ESC from ``checkout``."""
    env = dict(os.environ, PYTHONPATH=str(checkout))
    cmd = [sys.executable, str(REPO / "bench" / "many_sources.py"), "--child", runtime, "--files", str(files),
           "--timeout", str(timeout), *(["--py-spy", spy] if spy else [])]  # fmt: skip
    try:
        out = subprocess.run(cmd, env=env, cwd=checkout, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"error": f"did not finish within {timeout:.0f} s"}
    if out.returncode != 0:
        return {"error": (out.stderr or out.stdout)[-2000:]}
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def worktree(ref: str) -> Path:
    path = Path(tempfile.mkdtemp(prefix="esc-many-base-")) / "checkout"
    subprocess.run(["git", "-C", str(REPO), "worktree", "add", "--detach", str(path), ref], check=True,
                   capture_output=True)  # fmt: skip
    return path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--files", type=int, nargs="+", default=[500], help="folder sizes to measure (default 500)")
    ap.add_argument("--runtime", choices=["embedded", "faust", "both"], default="embedded")
    ap.add_argument("--baseline", metavar="REF", help="also measure git ref REF (e.g. the branch point) in this run")
    ap.add_argument("--timeout", type=float, default=900.0, help="seconds allowed per measurement")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--py-spy", metavar="SVG", help="faust: write a py-spy flame graph of this checkout's worker")
    ap.add_argument("--child", choices=["embedded", "faust"], help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        result = child_embedded(args.files[0]) if args.child == "embedded" else child_faust(args.files[0], args.timeout, args.py_spy)
        print(json.dumps(result))
        return
    runtimes = ["embedded", "faust"] if args.runtime == "both" else [args.runtime]
    checkouts = {"this checkout": REPO}
    base = worktree(args.baseline) if args.baseline else None
    if base is not None:
        checkouts = {f"baseline {args.baseline}": base, **checkouts}
    results: list[dict[str, Any]] = []
    try:
        for runtime in runtimes:
            for files in args.files:
                for name, path in checkouts.items():
                    r = {"runtime": runtime, "files": files, "code": name, **measure(path, runtime, files, args.timeout, args.py_spy if path == REPO else None)}
                    results.append(r)
                    if not args.json:
                        neo = f" + neo4j {r['neo4j_cpu']} s" if r.get("neo4j_cpu") is not None else ""
                        shown = f"{r['seconds']:8.2f} s  cpu {r.get('cpu', '?')} s{neo}  v{r['contract_version']}  {r['written']}/{r['records']} records" \
                            if "seconds" in r else f"FAILED {r['error'][-400:]}"
                        print(f"{runtime:9s} {files:5d} files  {name:24s} {shown}", flush=True)
    finally:
        if base is not None:
            subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force", str(base)], capture_output=True)
    if args.json:
        print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
