"""bench/qa.py --tpch: ask latency on a large TPC-H state, with questions built from its contract alone."""

from __future__ import annotations

import csv
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._qa_packs import open_state
from bench._qa_score import TPCH_WARM_PASSES, _lat
from esc.agents.query.answer import Answer
from esc.contract.model import Contract

# -- TPC-H: latency on a large state ----------------------------------------------------------------------------

TPCH_COLUMNS = {
    "region": "r_regionkey r_name r_comment",
    "nation": "n_nationkey n_name n_regionkey n_comment",
    "supplier": "s_suppkey s_name s_address s_nationkey s_phone s_acctbal s_comment",
    "customer": "c_custkey c_name c_address c_nationkey c_phone c_acctbal c_mktsegment c_comment",
    "part": "p_partkey p_name p_mfgr p_brand p_type p_size p_container p_retailprice p_comment",
    "partsupp": "ps_partkey ps_suppkey ps_availqty ps_supplycost ps_comment",
    "orders": "o_orderkey o_custkey o_orderstatus o_totalprice o_orderdate o_orderpriority o_clerk o_shippriority "
    "o_comment",
    "lineitem": "l_orderkey l_partkey l_suppkey l_linenumber l_quantity l_extendedprice l_discount l_tax "
    "l_returnflag l_linestatus l_shipdate l_commitdate l_receiptdate l_shipinstruct l_shipmode l_comment",
}


def tpch_folder(src: Path, out: Path | None = None) -> Path:
    """A folder of headed CSV files for ``src``: itself when it has no ``.tbl`` files, else ``out`` (default a new
    temporary folder) with each ``<table>.tbl`` (pipe-delimited, no header, a trailing ``|``) as ``<table>.csv``."""
    tbls = sorted(src.glob("*.tbl"))
    if not tbls:
        return src
    out = out or Path(tempfile.mkdtemp(prefix="qa-tpch-"))
    out.mkdir(parents=True, exist_ok=True)
    for tbl in tbls:
        cols = TPCH_COLUMNS.get(tbl.stem)
        if cols is None:
            print(f"tpch: skipping {tbl.name} (not a TPC-H table)", file=sys.stderr)
            continue
        with (
            tbl.open(encoding="utf-8", newline="") as fh,
            (out / f"{tbl.stem}.csv").open("w", encoding="utf-8", newline="") as dst,
        ):
            w = csv.writer(dst)
            w.writerow(cols.split())
            for line in fh:
                line = line.rstrip("\r\n")
                if line:
                    w.writerow(line[:-1].split("|") if line.endswith("|") else line.split("|"))
    for f in src.glob("*.csv"):  # headed CSV files beside the .tbl ones
        if not (out / f.name).exists():
            (out / f.name).write_bytes(f.read_bytes())
    return out


def _words(name: str, prefix: str | None) -> str:
    import re

    parts = [p for p in re.split(r"[_\W]+|(?<=[a-z])(?=[A-Z])", name) if p]
    if prefix and len(parts) > 1 and parts[0].lower() == prefix:
        parts = parts[1:]
    return " ".join(p.lower() for p in parts)


def _plural(words: str) -> str:
    if words.endswith("y") and not words.endswith(("ay", "ey", "oy", "uy")):
        return words[:-1] + "ies"
    if words.endswith(("s", "x", "ch", "sh")):
        return words + "es"
    return words + "s"


def contract_questions(contract: Contract, limit: int = 12) -> list[str]:
    """Generic questions built from a contract alone: how many of each entity type (largest first), an attribute
    of an entity named by an example value of its name-like attribute, and a list filtered by a frequent value."""
    counts, lookups, lists = [], [], []
    ents = sorted(
        contract.entities,
        key=lambda e: -(contract.sources[e.source].records if e.source in contract.sources else 0),
    )
    for e in ents:
        spec = contract.sources.get(e.source)
        if spec is None or not spec.records:
            continue
        firsts = {_words(a.name, None).split(" ")[0] for a in e.attributes}
        prefix = next(iter(firsts)) if len(firsts) == 1 and len(e.attributes) > 1 else None
        ent = _words(e.name, None)
        counts.append(f"How many {_plural(ent)} are there?")
        strings = [
            (a, f) for a in e.attributes if a.type == "string" and (f := spec.field(a.name)) and f.examples
        ]
        names = [(a, f) for a, f in strings if "name" in _words(a.name, prefix).split()]
        names = names or [(a, f) for a, f in strings if f.uniqueness >= 0.9 and (f.max_length or 99) <= 40]
        if names:
            a, f = names[0]
            refs = {n for fk in contract.foreign_keys if fk.from_.source == e.source for n in fk.from_.fields}
            others = [  # a plain attribute: not the name, the identity key, a reference or free text
                b
                for b in e.attributes
                if b.name != a.name
                and b.field_id not in e.key
                and b.name not in refs
                and "comment" not in b.name
            ]
            if others:
                lookups.append(f"What is the {_words(others[0].name, prefix)} of the {ent} {f.examples[0]}?")
        cats = [(a, f) for a, f in strings if f.top_values and 1 < f.distinct <= 50]
        if cats:
            a, f = cats[0]
            lists.append(f"List the {_plural(ent)} with {_words(a.name, prefix)} {f.top_values[0][0]}.")
    out: list[str] = []  # round-robin, so every kind of question is among the first ``limit``
    while len(out) < limit and (counts or lookups or lists):
        for group in (counts, lookups, lists):
            if group and len(out) < limit:
                out.append(group.pop(0))
    return out


def run_tpch(src: Path, label: str, backend: str, reset: bool, verbose: bool) -> dict[str, Any]:
    drop = tpch_folder(src)
    try:
        state = open_state("tpch", drop, backend, reset)
    finally:
        if drop != src:  # the converted copy was only needed for the ingest
            import shutil

            shutil.rmtree(drop, ignore_errors=True)
    try:
        assert state.contract is not None
        questions = contract_questions(state.contract)
        cold = [state.ask(q)[0].latency_ms or 0.0 for q in questions]
        warm: list[Answer] = []
        for _ in range(TPCH_WARM_PASSES):
            warm.extend(state.ask(q)[0] for q in questions)
    finally:
        state.close()
    lat = [a.latency_ms or 0.0 for a in warm]
    p50, p95 = _lat(lat)
    cold50, cold95 = _lat(cold)
    routes: dict[str, int] = {}
    for a in warm[: len(questions)]:
        routes[a.route] = routes.get(a.route, 0) + 1
    report: dict[str, Any] = {
        "pack": f"tpch {label}",
        "set": "latency",
        "backend": backend,
        "ingest": state.ingest,
        "folder": str(src),
        "records": state.records,
        "questions": len(questions),
        "routes": routes,
        "latency_ms": {"p50": p50, "p95": p95, "max": round(max(lat), 2) if lat else None,
                       "cold_p50": cold50, "cold_p95": cold95, "samples": len(lat)},
        "load_s": round(state.load_s or 0.0, 2),
        "grounding_s": round(state.grounding_s or 0.0, 3),
    }  # fmt: skip
    if verbose:
        report["asked"] = [
            {"question": q, "route": a.route, "confidence": round(a.confidence, 3),
             "answer": str(a.answer)[:120] if a.answer is not None else None, "reason": a.reason,
             "latency_ms": a.latency_ms}
            for q, a in zip(questions, warm[: len(questions)], strict=True)
        ]  # fmt: skip
    return report


# -- output -----------------------------------------------------------------------------------------------------
