"""Discovery benchmark: identity keys, foreign keys and hierarchy against ground truth, with time and memory.

    .venv/bin/python bench/discovery.py                      # the eval packs, flights + TPC-H SF 0.01
    .venv/bin/python bench/discovery.py --tpch 0.01,1 --json
    .venv/bin/python bench/discovery.py --packs chinook --tpch ''
    .venv/bin/python bench/discovery.py --eval <pack>/relational   # the packs from another copy
    .venv/bin/python bench/discovery.py --variants all --tpch ''    # + every dirty variant of every eval pack

Dirty variants (``--variants``) are written by ``tests/data/degrade.py`` into a temporary folder: foreign-key
columns renamed, 10 % of referenced rows deleted, duplicate rows, codes re-cased, a composite key over a new
non-id column pair, shuffled columns (see that script).

Scoring (per dataset):
* identity keys: the set of (source, frozenset(key fields)) pairs, predicted vs true; sources without a predicted
  key count as misses;
* foreign keys: the set of (from.source, from.fields, to.source, to.fields), order-sensitive; truth FKs with
  ``child_nonnull_rows == 0`` are left out of recall (they cannot be seen in the data) but a predicted one still
  counts as a hit;
* hierarchy: (parent, child, path, parent_fields, child_fields).

TPC-H truth is written here from the specification (clause 1.4.1/1.4.2): keys r_regionkey, n_nationkey,
s_suppkey, c_custkey, p_partkey, (ps_partkey, ps_suppkey), o_orderkey, (l_orderkey, l_linenumber); foreign
keys n_regionkey, s_nationkey, c_nationkey, ps_partkey, ps_suppkey, o_custkey, l_orderkey, (l_partkey,
l_suppkey) -> partsupp, and l_partkey -> part, l_suppkey -> supplier, which the spec also lists: 10 in all,
each counted once. Data is generated with ``tpchgen-cli`` and cached under ~/.cache/esc/tpch/sf<N>.

Time: wall seconds and CPU seconds (user + system of the dataset's process and its profiling workers; on a
shared machine the CPU seconds say more than the wall clock). Memory: each dataset runs in a fresh (spawned)
process that reports its own peak RSS (``ru_maxrss``) and the largest peak of its profiling workers (large CSV
files are profiled in one worker process per core), so one dataset's peak does not hide the next one's.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import resource
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench._tpch import TPCH_FKS, TPCH_KEYS, tpch_dir  # noqa: E402

# The eval packs vendored in the repository (tests/data/eval, see its README); --eval reads another copy.
EVAL = REPO / "tests" / "data" / "eval" / "relational"
FLIGHTS = REPO / "tests" / "data" / "flights"  # the second test set: codes named unlike their targets, dangling ones
LAHMAN = REPO / "tests" / "data" / "lahman"  # real data, declared keys: composite keys over codes and years
EXTRA = {"flights": FLIGHTS, "lahman": LAHMAN}


def _degrade() -> Any:
    """tests/data/degrade.py, loaded by path (tests/ is not a package)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("degrade", REPO / "tests" / "data" / "degrade.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules["degrade"] = mod
    spec.loader.exec_module(mod)
    return mod


def prf(pred: set[Any], truth: set[Any], optional: set[Any] | None = None) -> dict[str, Any]:
    optional = optional or set()
    tp = len(pred & (truth | optional))
    p = tp / len(pred) if pred else 1.0
    need = truth - optional
    r = len(pred & need) / len(need) if need else 1.0
    f = 2 * p * r / (p + r) if p + r else 0.0
    return {
        "precision": round(p, 4),
        "recall": round(r, 4),
        "f1": round(f, 4),
        "false_positives": sorted(map(str, pred - truth - optional)),
        "missed": sorted(map(str, need - pred)),
    }


def tpch_truth() -> dict[str, Any]:
    return {
        "sources": {s: {"identity_key": k} for s, k in TPCH_KEYS.items()},
        "foreign_keys": [
            {"from": {"source": a, "fields": af}, "to": {"source": b, "fields": bf}, "child_nonnull_rows": 1}
            for a, af, b, bf in TPCH_FKS
        ],
        "hierarchy": [],
    }


def score(contract: Any, truth: dict[str, Any]) -> dict[str, Any]:
    pk = {(s, frozenset(spec.identity_key)) for s, spec in contract.sources.items() if spec.identity_key}
    tk = {(s, frozenset(v["identity_key"])) for s, v in truth["sources"].items()}
    pf = {
        (fk.from_.source, tuple(fk.from_.fields), fk.to.source, tuple(fk.to.fields))
        for fk in contract.foreign_keys
    }
    tf_all = {
        (f["from"]["source"], tuple(f["from"]["fields"]), f["to"]["source"], tuple(f["to"]["fields"]))
        for f in truth["foreign_keys"]
    }
    unseen = {
        (f["from"]["source"], tuple(f["from"]["fields"]), f["to"]["source"], tuple(f["to"]["fields"]))
        for f in truth["foreign_keys"]
        if f.get("child_nonnull_rows", 1) == 0
    }
    ph = {
        (h.parent, h.child, h.path, tuple(h.parent_fields), tuple(h.child_fields)) for h in contract.hierarchy
    }
    th = {
        (h["parent"], h["child"], h["path"], tuple(h["parent_fields"]), tuple(h["child_fields"]))
        for h in truth.get("hierarchy", [])
    }
    return {"keys": prf(pk, tk), "foreign_keys": prf(pf, tf_all - unseen, unseen), "hierarchy": prf(ph, th)}


def _cpu(who: int) -> float:
    """User + system CPU seconds of this process (or of its finished children: the profiling workers)."""
    r = resource.getrusage(who)
    return r.ru_utime + r.ru_stime


def _run(name: str, root: str, truth: dict[str, Any], out: Any) -> None:
    from esc.streams.discover import discover

    t0 = time.perf_counter()
    res = discover(Path(root))
    secs = time.perf_counter() - t0
    rows = sum(s.records for s in res.contract.sources.values())
    out.put(
        {
            "dataset": name,
            "seconds": round(secs, 2),
            "records": rows,
            "sources": len(res.contract.sources),
            "errors": len(res.errors),
            "columnar_sources": sorted(s for s, m in res.meta.items() if m.get("columnar")),
            "cpu_seconds": round(_cpu(resource.RUSAGE_SELF) + _cpu(resource.RUSAGE_CHILDREN), 1),
            "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
            "worker_peak_rss_mib": round(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024, 1),
            **score(res.contract, truth),
        }
    )


def run_isolated(name: str, root: Path, truth: dict[str, Any]) -> dict[str, Any]:
    """One dataset in a fresh process: its own time and peak RSS."""
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    proc = ctx.Process(target=_run, args=(name, str(root), truth, q))
    proc.start()
    result = q.get()
    proc.join()
    return dict(result)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument(
        "--packs", default="chinook,sakila,northwind,flights,lahman",
        help="comma list of eval packs ('' for none); flights and lahman are tests/data/<name>",
    )
    ap.add_argument(
        "--variants", default="",
        help="comma list of dirty variants of every pack named (tests/data/degrade.py), 'all' for every one",
    )
    ap.add_argument(
        "--eval",
        type=Path,
        default=EVAL,
        help=f"folder holding <pack>/truth.json and <pack>/drop (default {EVAL})",
    )
    ap.add_argument("--tpch", default="0.01", help="comma list of TPC-H scale factors ('' for none)")
    ap.add_argument("--json", action="store_true", help="print one JSON document instead of a table")
    args = ap.parse_args()
    results = []
    degrade = _degrade() if args.variants else None
    every = [*degrade.VARIANTS, *degrade.EXTRA_VARIANTS] if degrade else []
    variants = every if args.variants == "all" else [v for v in args.variants.split(",") if v]
    with tempfile.TemporaryDirectory(prefix="esc-degrade-") as tmp:
        for pack in [p for p in args.packs.split(",") if p]:
            root = EXTRA.get(pack, args.eval / pack)
            truth = json.loads((root / "truth.json").read_text())
            results.append(run_isolated(pack, root / "drop", truth))
            for v in variants if all("file" in m for m in truth["sources"].values()) else []:
                out = Path(tmp) / pack / v
                vt = degrade.degrade(root, v, out)
                results.append(run_isolated(f"{pack}/{v}", out / "drop", vt))
    for sf in [s for s in args.tpch.split(",") if s]:
        results.append(run_isolated(f"tpch-sf{sf}", tpch_dir(sf), tpch_truth()))
    if args.json:
        print(json.dumps(results, indent=2))
        return
    head = (
        f"{'dataset':<22}{'records':>10}{'sec':>8}{'CPU s':>8}{'RSS MiB':>9}{'wrk MiB':>9}  "
        f"{'key P/R/F1':<20}{'FK P/R/F1':<20}{'hier P/R/F1':<20}"
    )
    print(head)
    print("-" * len(head))
    for r in results:

        def f(k: str, r: dict[str, Any] = r) -> str:
            return f"{r[k]['precision']:.2f}/{r[k]['recall']:.2f}/{r[k]['f1']:.2f}"

        print(
            f"{r['dataset']:<22}{r['records']:>10}{r['seconds']:>8.2f}{r['cpu_seconds']:>8.1f}{r['peak_rss_mib']:>9.0f}"
            f"{r['worker_peak_rss_mib']:>9.0f}  "
            f"{f('keys'):<20}{f('foreign_keys'):<20}{f('hierarchy'):<20}"
        )
    for r in results:
        for part in ("keys", "foreign_keys", "hierarchy"):
            for kind in ("false_positives", "missed"):
                for item in r[part][kind]:
                    print(f"  {r['dataset']}: {part} {kind[:-1].replace('_', ' ')}: {item}")


if __name__ == "__main__":
    main()
