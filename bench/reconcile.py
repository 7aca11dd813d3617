"""Entity resolution numbers (issue #16): pairwise precision / recall / F1 of linking on the people pack
(tests/data/people) and the suppliers pack (tests/data/suppliers, organisations) against their truth, with time, for ESC's matcher (rules + Fellegi-Sunter with general priors,
rapidfuzz) and, when the ``splink`` package is installed, for splink on DuckDB over the same normalized records;
false merges on the public packs (Chinook, Sakila, Northwind: every entity stays one cluster); and the EM of both
packs' questions.

    python bench/reconcile.py [--splink-python PYTHON] [--no-qa]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from esc.agents.extractors import plan as extract  # noqa: E402
from esc.agents.reconcile.hook import members_from  # noqa: E402
from esc.agents.reconcile.model import Member  # noqa: E402
from esc.agents.reconcile.resolver import Resolver  # noqa: E402
from esc.contract.er_fields import build_spec  # noqa: E402
from esc.contract.evolve import evolve  # noqa: E402
from esc.contract.model import Contract  # noqa: E402

PEOPLE = REPO / "tests" / "data" / "people"
SUPPLIERS = REPO / "tests" / "data" / "suppliers"
PUBLIC = {n: REPO / "tests" / "data" / "eval" / "relational" / n / "drop" for n in ("chinook", "sakila", "northwind")}


def pack_members(drop: Path) -> tuple[Contract, list[Member], dict[str, int]]:
    """The contract of a folder, the resolver's view of its records, and the rows per entity type."""
    from esc.contract.records import Record
    from esc.streams.discover import discover
    from esc.streams.events import envelope_for
    from esc.streams.readers import read, scan_with_errors

    contract, _ = evolve(None, discover(drop).contract)
    spec = build_spec(contract)
    files, _ = scan_with_errors(drop)
    members: list[Member] = []
    rows: dict[str, int] = defaultdict(int)
    for sf in files:
        envs = [envelope_for(item, sf.rel, "bench") for item in read(sf) if isinstance(item, Record)]
        written = extract(envs, contract).entities
        for e in written:
            rows[e.label] += 1
        members.extend(members_from(written, spec))
    return contract, members, dict(rows)


def truth_of(members: list[Member], truth: dict[str, Any]) -> dict[str, int]:
    """sid -> person, from the truth's records (source -> identity key value -> person)."""
    out = {}
    for m in members:
        pid = truth["records"].get(m.source, {}).get(str(m.key[0][1]))
        if pid is not None:
            out[m.sid] = pid
    return out


def pairs_of(groups: dict[str, Any]) -> set[tuple[str, str]]:
    by: dict[Any, list[str]] = defaultdict(list)
    for sid, g in groups.items():
        by[g].append(sid)
    return {(a, b) for sids in by.values() for a in sorted(sids) for b in sorted(sids) if a < b}


def prf(pred: set[tuple[str, str]], gold: set[tuple[str, str]]) -> dict[str, float]:
    tp = len(pred & gold)
    p = tp / len(pred) if pred else 1.0
    r = tp / len(gold) if gold else 1.0
    return {"precision": round(p, 4), "recall": round(r, 4), "f1": round(2 * p * r / (p + r), 4) if p + r else 0.0,
            "pairs_predicted": len(pred), "pairs_true": len(gold), "true_positives": tp}  # fmt: skip


def run_esc(contract: Contract, members: list[Member]) -> tuple[dict[str, str], float, Resolver]:
    started = time.perf_counter()
    r = Resolver(build_spec(contract))
    r.upsert(members)
    return dict(r.cluster_of), time.perf_counter() - started, r


def people_linking(splink_python: str | None, pack: Path = PEOPLE) -> list[dict[str, Any]]:
    contract, members, _ = pack_members(pack / "drop")
    truth = json.loads((pack / "truth.json").read_text("utf-8"))
    gold_map = truth_of(members, truth)
    gold = pairs_of(gold_map)
    clusters, secs, r = run_esc(contract, members)
    out = [{"pack": pack.name, "matcher": "esc (rules + Fellegi-Sunter, rapidfuzz)", **prf(pairs_of(clusters), gold),
            "seconds": round(secs, 3), "records": len(members), "clusters": len(set(clusters.values())),
            "people": len(set(gold_map.values())), "compared": r.compared}]  # fmt: skip
    dups = truth["duplicates"]
    found = sum(1 for d in dups if len({clusters.get(s) for s in _sids(members, d["source"], d["keys"])}) == 1)
    out[0]["in_source_duplicates_found"] = f"{found}/{len(dups)}"
    if splink_python:
        got = run_splink(r, splink_python)
        if "error" in got:
            out.append({"matcher": "splink", **got})
        else:
            out.append({"pack": pack.name, "matcher": "splink 5 (duckdb, EM-trained m, sampled u)", **prf(pairs_of(got["clusters"]), gold),
                        "seconds": got["seconds"], "records": len(members)})  # fmt: skip
    return out


def run_splink(r: Resolver, python: str) -> dict[str, Any]:
    """bench/_splink.py under an interpreter that has splink, on the same normalized records."""
    import subprocess

    rows = []
    for sid, n in sorted(r.norms.items()):
        words = sorted(n.names)
        rows.append({"unique_id": sid, "name": " ".join(words) or None, "email": n.email, "phone": n.phone,
                     "city": n.other("city"), "name_key": (words[-1][:4] if words else None)})  # fmt: skip
    done = subprocess.run([python, str(REPO / "bench" / "_splink.py")], input=json.dumps(rows), text=True,
                          capture_output=True, timeout=600)  # fmt: skip
    if done.returncode != 0:
        return {"error": done.stderr.strip().splitlines()[-1] if done.stderr.strip() else f"exit {done.returncode}"}
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def _sids(members: list[Member], source: str, keys: list[str]) -> list[str]:
    return [m.sid for m in members if m.source == source and str(m.key[0][1]) in keys]


def public_merges() -> list[dict[str, Any]]:
    out = []
    for name, drop in PUBLIC.items():
        contract, members, rows = pack_members(drop)
        _clusters, secs, r = run_esc(contract, members)
        per_label = r.clusters_by_label()
        merged = sum(1 for c in r.clusters.values() if c.nodes > 1)
        out.append({"pack": name, "resolved_types": {lab: f"{per_label.get(lab, 0)} clusters / {rows.get(lab, 0)} rows"
                                                     for lab in sorted(build_spec(contract).types)},
                    "false_merges": merged, "seconds": round(secs, 3)})  # fmt: skip
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--splink-python", default=None, help="an interpreter with splink installed (default: this one "
                    "when it has splink)")
    ap.add_argument("--no-qa", action="store_true")
    args = ap.parse_args(argv)
    splink = args.splink_python
    if splink is None:
        import importlib.util

        splink = sys.executable if importlib.util.find_spec("splink") else None
    linking = people_linking(splink) + people_linking(splink, SUPPLIERS)
    report: dict[str, Any] = {"linking": linking, "public": public_merges()}
    if not args.no_qa:
        from bench._reconcile_qa import people_qa, suppliers_qa

        report["qa"] = {"people": people_qa(), "suppliers": suppliers_qa()}
    print(json.dumps(report, indent=1, default=str))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
