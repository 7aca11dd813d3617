"""Time of every hostile-corpus group through the embedded runtime, against the 30 s goal (issue 14, point 8).

    .venv/bin/python bench/hostile.py              # every group, as tests/unit/test_hostile_corpus.py forms them
    .venv/bin/python bench/hostile.py --kind wide  # only groups holding a case of that kind
    .venv/bin/python bench/hostile.py --json

The test checks what each case comes to and fails a group that hung; this script measures the speed: one line
per group (its cases, seconds, problems found), then the slowest groups and how many are over the goal. The
baseline printed beside it is one good 10-row CSV file ingested the same way, in the same run (the fixed cost of
an ingest). Exit 0 unless a group has problems (then 1): a benchmark, not a test.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

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


def baseline() -> float:
    """Seconds to ingest a folder holding one good 10-row CSV file the same way (the fixed cost of an ingest)."""
    with tempfile.TemporaryDirectory(prefix="hostile-base-") as tmp:
        drop = Path(tmp) / "drop"
        drop.mkdir()
        write(drop, "good.csv", csv_text("good", 10))
        t0 = time.perf_counter()
        _ingest(Path(tmp), drop)
        return time.perf_counter() - t0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kind", help="only groups with a case of this kind (wide, zip-bomb, many-files, ...)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    base = baseline()
    rows = []
    for g in groups(args.kind):
        with tempfile.TemporaryDirectory(prefix="hostile-") as tmp:
            out = run_group(g, Path(tmp))
            rows.append({"group": f"{g[0].id}-{g[-1].id}", "kinds": sorted({c.kind for c in g}),
                         "seconds": round(out.seconds, 2), "problems": check_group(g, out)})  # fmt: skip
        r = rows[-1]
        if not args.json:
            flag = " OVER" if r["seconds"] > CASE_SECONDS else ""
            print(f"{r['group']:12s} {r['seconds']:6.1f} s{flag}  {','.join(r['kinds'])[:60]}"
                  + (f"  PROBLEMS: {r['problems'][:2]}" if r["problems"] else ""), flush=True)
    over = [r for r in rows if r["seconds"] > CASE_SECONDS]
    summary = {"groups": len(rows), "goal_s": CASE_SECONDS, "over_goal": len(over), "baseline_s": round(base, 2),
               "max_s": max((r["seconds"] for r in rows), default=0.0),
               "with_problems": sum(1 for r in rows if r["problems"])}  # fmt: skip
    if args.json:
        print(json.dumps({"summary": summary, "groups": rows}))
    else:
        slow = sorted(rows, key=lambda r: -r["seconds"])[:5]
        print(f"\n{summary['groups']} groups; slowest: " + ", ".join(f"{r['group']} {r['seconds']} s" for r in slow))
        print(f"over the {CASE_SECONDS:.0f} s goal: {summary['over_goal']}; baseline (one good file) "
              f"{summary['baseline_s']} s; groups with problems: {summary['with_problems']}")
    return 1 if summary["with_problems"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
