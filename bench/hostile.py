"""Time of every hostile-corpus group through the embedded runtime, against the 30 s goal (issue 14, point 8).

    .venv/bin/python bench/hostile.py              # every group, as tests/unit/test_hostile_corpus.py forms them
    .venv/bin/python bench/hostile.py --kind wide  # only groups holding a case of that kind
    .venv/bin/python bench/hostile.py --json
    .venv/bin/python bench/hostile.py --per-case 5   # ... then each case of the 5 slowest groups alone
    .venv/bin/python bench/hostile.py --runtime faust --per-case 3   # the heavy cases (and the cases of the 3
                                                     # slowest embedded groups) alone through a Kafka worker

The test checks what each case comes to and fails a group that hung; this script measures the speed: one line
per group (its cases, seconds, problems found), then the slowest groups and how many are over the goal. The
baseline printed beside it is one good 10-row CSV file ingested the same way, in the same run (the fixed cost of
an ingest). The goal is per case: ``--per-case N`` then runs every case of the N slowest groups alone (its own
drop folder with its good file, as a group of one) and prints its time beside the baseline; CPU seconds of this
process (the embedded runtime runs in it) are printed beside wall seconds, since the machine may be shared. Exit 0
unless a group has problems (then 1): a benchmark, not a test. ``--runtime faust`` (the stack must be up) also runs
the heavy cases, and the cases ``--per-case`` picked, each alone through an ``esc up`` worker
(``bench/_hostile_faust.py``: from the worker's start until the good file beside the case is in Neo4j, beside the
same time for a folder of one good file); the corpus's checks of what the Kafka runtime made of each case are
``tests/integration/test_hostile_stack.py``'s.
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.hostile import Case, corpus
from tests.hostile.model import csv_text, write
from tests.hostile.runner import CASE_SECONDS, _ingest, check_group, run_group

GROUP = 10


def groups(kind: str | None) -> list[list[Case]]:
    cases = corpus()
    light = [c for c in cases if not c.heavy]
    out = [light[i : i + GROUP] for i in range(0, len(light), GROUP)] + [[c] for c in cases if c.heavy]
    return [g for g in out if kind is None or any(c.kind == kind for c in g)]


def cpu() -> float:
    """CPU seconds of this process (the embedded runtime and its threads run in it) and its finished children."""
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def timed(cases: list[Case]) -> dict[str, object]:
    """One group's run: its time (wall and CPU) and problems."""
    with tempfile.TemporaryDirectory(prefix="hostile-") as tmp:
        c0 = cpu()
        out = run_group(cases, Path(tmp))
        return {"group": f"{cases[0].id}-{cases[-1].id}", "kinds": sorted({c.kind for c in cases}),
                "seconds": round(out.seconds, 2), "cpu": round(cpu() - c0, 1),
                "problems": check_group(cases, out)}  # fmt: skip


def baseline() -> float:
    """Seconds to ingest a folder holding one good 10-row CSV file the same way (the fixed cost of an ingest)."""
    with tempfile.TemporaryDirectory(prefix="hostile-base-") as tmp:
        drop = Path(tmp) / "drop"
        drop.mkdir()
        write(drop, "good.csv", csv_text("good", 10))
        t0 = time.perf_counter()
        _ingest(Path(tmp), drop)
        return time.perf_counter() - t0


def run_faust(cases: list[Case], quiet: bool) -> list[dict[str, Any]]:
    """Each case alone through a Kafka worker, after the one-good-file baseline timed the same way."""
    from neo4j import GraphDatabase

    from bench._hostile_faust import run_case
    from esc.settings import load

    settings = load()
    driver = GraphDatabase.driver(settings.neo4j_uri, auth=None, notifications_min_severity="OFF")
    out: list[dict[str, Any]] = []
    try:
        if not quiet:
            print("\nfaust: each case alone through a worker (from its start until the good file is in Neo4j):")
        for case in [None, *cases]:
            r = {"group": case.id if case else "baseline", "kinds": [case.kind] if case else ["one good file"],
                 "title": case.title if case else "", "problems": [],
                 **run_case(case, driver, settings.kafka_bootstrap)}  # fmt: skip
            if "error" in r:
                r["problems"] = [r.pop("error")]
                r["seconds"], r["cpu"] = float("nan"), float("nan")
            out.append(r)
            if not quiet:
                show(r)
    finally:
        driver.close()
    return out


def show(r: dict[str, Any]) -> None:
    flag = " OVER" if r["seconds"] > CASE_SECONDS else ""
    title = f"  {r['title'][:50]}" if "title" in r else ""
    print(f"{r['group']:12s} {r['seconds']:6.1f} s{flag} (cpu {r['cpu']:5.1f} s)  {','.join(r['kinds'])[:60]}{title}"
          + (f"  PROBLEMS: {r['problems'][:2]}" if r["problems"] else ""), flush=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kind", help="only groups with a case of this kind (wide, zip-bomb, many-files, ...)")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--runtime", choices=["embedded", "faust"], default="embedded",
                    help="faust: then each heavy case (and each --per-case case) alone through a Kafka worker")
    ap.add_argument("--per-case", type=int, default=0, metavar="N",
                    help="then time each case of the N slowest groups (of several cases) alone")
    args = ap.parse_args(argv)
    base = baseline()
    rows: list[dict[str, Any]] = []
    by_group: dict[str, list[Case]] = {}
    for g in groups(args.kind):
        rows.append(timed(g))
        by_group[rows[-1]["group"]] = g
        if not args.json:
            show(rows[-1])
    cases: list[dict[str, Any]] = []
    if args.per_case:
        slow = [r for r in sorted(rows, key=lambda r: -r["seconds"]) if len(by_group[r["group"]]) > 1]
        if not args.json:
            print(f"\neach case of the {args.per_case} slowest groups of several cases, alone:")
        for r in slow[: args.per_case]:
            for case in by_group[r["group"]]:
                cases.append({**timed([case]), "kinds": [case.kind], "title": case.title})
                if not args.json:
                    show(cases[-1])
    faust: list[dict[str, Any]] = []
    if args.runtime == "faust":
        picked = {r["group"].split("-")[0] for r in cases}
        faust = run_faust([c for g in groups(args.kind) for c in g if c.heavy or c.id in picked], args.json)
    over = [r for r in rows + cases + faust if r["seconds"] > CASE_SECONDS]
    summary = {"groups": len(rows), "goal_s": CASE_SECONDS, "over_goal": len(over), "baseline_s": round(base, 2),
               "max_s": max((r["seconds"] for r in rows), default=0.0), "cpu_s": round(sum(r["cpu"] for r in rows), 1),
               "max_case_s": max((r["seconds"] for r in cases), default=None),
               "faust_max_s": max((r["seconds"] for r in faust if r["group"] != "baseline"), default=None),
               "with_problems": sum(1 for r in rows + faust if r["problems"])}  # fmt: skip
    if args.json:
        print(json.dumps({"summary": summary, "groups": rows, "cases": cases, "faust": faust}))
    else:
        slow = sorted(rows, key=lambda r: -r["seconds"])[:5]
        print(f"\n{summary['groups']} groups ({summary['cpu_s']} CPU s); slowest: "
              + ", ".join(f"{r['group']} {r['seconds']} s (cpu {r['cpu']} s)" for r in slow))
        if cases:
            top = max(cases, key=lambda r: r["seconds"])
            print(f"slowest case alone: {top['group']} {top['seconds']} s (cpu {top['cpu']} s)")
        if faust:
            top = max(faust[1:] or faust, key=lambda r: r["seconds"])
            print(f"faust, slowest case alone: {top['group']} {top['seconds']} s (worker cpu {top['cpu']} s); "
                  f"baseline (one good file, worker start included) {faust[0]['seconds']} s")
        print(f"over the {CASE_SECONDS:.0f} s goal: {summary['over_goal']}; baseline (one good file) "
              f"{summary['baseline_s']} s; groups with problems: {summary['with_problems']}")
    return 1 if summary["with_problems"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
