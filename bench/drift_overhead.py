"""What the numeric histograms of field profiles (contract/histogram.py, for data drift) cost the profiler.

    .venv/bin/python bench/drift_overhead.py                 # the eval packs (record path) + TPC-H SF 0.01 lineitem
    .venv/bin/python bench/drift_overhead.py --tpch 1        # lineitem of SF 1 (columnar path), slower

Each workload is profiled with the histograms as shipped and, as the baseline in the same run, with the histogram
functions replaced by no-ops (what the profiler did before); the two are run in turns, ``--repeat`` times, and the best of each is printed.
Record path: every record of the Chinook, Northwind and Sakila packs, profiled per source (``SourceProfile.of_rows``
as the streaming profiler does). Columnar path: TPC-H lineitem read with pyarrow and profiled by
``contract.profile_arrow.profile_batch`` (what ``esc discover`` does per byte range).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from esc.contract import histogram  # noqa: E402
from esc.contract.profile import SourceProfile  # noqa: E402
from esc.contract.profile_arrow import profile_batch  # noqa: E402


def pack_rows() -> dict[str, list[dict[str, Any]]]:
    from esc.contract.records import Record
    from esc.streams.readers import read, scan_with_errors
    from tests.paths import RELATIONAL

    out: dict[str, list[dict[str, Any]]] = {}
    for pack in sorted(p for p in RELATIONAL.iterdir() if (p / "drop").is_dir()):
        files, _ = scan_with_errors(pack / "drop")
        for sf in files:
            for item in read(sf):
                if isinstance(item, Record):
                    out.setdefault(f"{pack.name}/{item.source}", []).append(item.values)
    return out


def best_of_both(fn: Callable[[], Any], repeat: int) -> tuple[float, float]:
    """(best time with histograms, best time without), the two measured in turns so load on the machine hits both."""
    ours, base = [], []
    for _ in range(repeat):
        for times, run in ((base, without_histograms(fn)), (ours, fn)):
            t0 = time.perf_counter()
            run()
            times.append(time.perf_counter() - t0)
    return min(ours), min(base)


def without_histograms(fn: Callable[[], Any]) -> Callable[[], Any]:
    def run() -> Any:
        of_pairs, of_array = histogram.of_pairs, histogram.of_array
        histogram.of_pairs = lambda pairs: {}  # type: ignore[assignment]
        histogram.of_array = lambda values, weights=None: {}  # type: ignore[assignment]
        try:
            return fn()
        finally:
            histogram.of_pairs, histogram.of_array = of_pairs, of_array

    return run


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tpch", default="0.01", help="TPC-H scale factor for the columnar workload ('' to skip)")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()

    rows = pack_rows()
    n = sum(len(r) for r in rows.values())

    def records() -> None:
        for name, rs in rows.items():
            SourceProfile.of_rows(name, rs)

    ours, base = best_of_both(records, args.repeat)
    print(f"record path, {n:,} records of {len(rows)} sources: with histograms {ours:.2f} s, "
          f"baseline (none) {base:.2f} s, x{ours / base:.3f}")
    if args.tpch:
        import pyarrow.csv as pcsv

        from bench._tpch import tpch_dir

        table = pcsv.read_csv(tpch_dir(args.tpch) / "lineitem.csv")
        kinds: dict[str, Any] = {}
        for col, typ in zip(table.schema.names, table.schema.types, strict=True):
            kinds[col] = "int" if str(typ).startswith("int") else "decimal" if str(typ) == "double" else "string"
        table = table.cast(__import__("pyarrow").schema(
            [(c, "int64" if k == "int" else "string") for c, k in kinds.items()]))

        def columnar() -> None:
            profile_batch("lineitem", table, kinds)

        ours, base = best_of_both(columnar, args.repeat)
        print(f"columnar path, TPC-H SF {args.tpch} lineitem ({table.num_rows:,} rows): with histograms {ours:.2f} s, "
              f"baseline (none) {base:.2f} s, x{ours / base:.3f}")


if __name__ == "__main__":
    main()
