"""TPC-H data for the benches: generated with ``tpchgen-cli`` (CSV, with headers) and cached under
~/.cache/esc/tpch/sf<N>; the identity keys and foreign keys of the specification (clause 1.4.1/1.4.2)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

CACHE = Path.home() / ".cache" / "esc" / "tpch"

TABLES = ("region", "nation", "supplier", "customer", "part", "partsupp", "orders", "lineitem")
TPCH_KEYS = {
    "region": ["r_regionkey"],
    "nation": ["n_nationkey"],
    "supplier": ["s_suppkey"],
    "customer": ["c_custkey"],
    "part": ["p_partkey"],
    "partsupp": ["ps_partkey", "ps_suppkey"],
    "orders": ["o_orderkey"],
    "lineitem": ["l_orderkey", "l_linenumber"],
}
TPCH_FKS = [
    ("nation", ["n_regionkey"], "region", ["r_regionkey"]),
    ("supplier", ["s_nationkey"], "nation", ["n_nationkey"]),
    ("customer", ["c_nationkey"], "nation", ["n_nationkey"]),
    ("partsupp", ["ps_partkey"], "part", ["p_partkey"]),
    ("partsupp", ["ps_suppkey"], "supplier", ["s_suppkey"]),
    ("orders", ["o_custkey"], "customer", ["c_custkey"]),
    ("lineitem", ["l_orderkey"], "orders", ["o_orderkey"]),
    ("lineitem", ["l_partkey", "l_suppkey"], "partsupp", ["ps_partkey", "ps_suppkey"]),
    ("lineitem", ["l_partkey"], "part", ["p_partkey"]),
    ("lineitem", ["l_suppkey"], "supplier", ["s_suppkey"]),
]


def tpch_dir(sf: str) -> Path:
    """The CSV files of scale factor ``sf`` (generated on first use)."""
    d = CACHE / f"sf{sf}"
    if not all((d / f"{t}.csv").exists() for t in TABLES):
        exe = shutil.which("tpchgen-cli") or str(Path(sys.executable).parent / "tpchgen-cli")
        d.mkdir(parents=True, exist_ok=True)
        subprocess.run([exe, "csv", "-s", sf, "-o", str(d), "--overwrite"], check=True)
    return d


def row_counts(d: Path) -> dict[str, int]:
    """Data rows per table (lines minus the header; TPC-H text fields hold no newlines)."""
    out = {}
    for t in TABLES:
        lines = 0
        with (d / f"{t}.csv").open("rb") as fh:
            while buf := fh.read(1 << 20):
                lines += buf.count(b"\n")
        out[t] = lines - 1
    return out
