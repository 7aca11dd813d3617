"""The embedded ingest leaves the graph and contract the source rows imply (issue 15.3: faster, same graph).

A small TPC-H-shaped set is generated here (eight tables, the specification's column names, keys and foreign
keys, a composite key and a composite reference; seeded, ~2,700 rows) and ingested with ``esc ingest --embedded``'s
code path. The expected values never come from ESC's output: the contract must hold the specification's identity
keys and foreign keys, and the graph's counts are computed by DuckDB from the CSV rows themselves -- one node per
distinct key, one SourceRecord and DERIVED_FROM per row, one edge per distinct (child key, referenced key) of each
foreign key with every column set, a stub per referenced key missing from its table.
"""

from __future__ import annotations

import csv
import random
from pathlib import Path
from typing import Any

import duckdb
import pytest

from esc.agents.embedding import HashingEmbedder
from esc.settings import load
from esc.streams.runtime.inprocess import ingest_embedded

KEYS = {
    "region": ["r_regionkey"],
    "nation": ["n_nationkey"],
    "supplier": ["s_suppkey"],
    "customer": ["c_custkey"],
    "part": ["p_partkey"],
    "partsupp": ["ps_partkey", "ps_suppkey"],
    "orders": ["o_orderkey"],
    "lineitem": ["l_orderkey", "l_linenumber"],
}
FKS = [  # TPC-H clause 1.4.2
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
WORDS = ["furiously", "regular", "deposits", "sleep", "quickly", "final", "packages", "haggle", "carefully",
         "ironic", "requests", "boost"]


def _comment(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


def generate(folder: Path, seed: int = 7) -> None:
    rng = random.Random(seed)
    tables: dict[str, list[dict[str, Any]]] = {}
    tables["region"] = [{"r_regionkey": r, "r_name": f"REGION{r}", "r_comment": _comment(rng, 8)} for r in range(5)]
    tables["nation"] = [{"n_nationkey": n, "n_name": f"NATION{n}", "n_regionkey": n % 5, "n_comment": _comment(rng, 9)}
                        for n in range(25)]  # fmt: skip
    tables["supplier"] = [{"s_suppkey": s, "s_name": f"Supplier#{s:09d}", "s_nationkey": rng.randrange(25),
                           "s_acctbal": round(rng.uniform(-999, 9999), 2), "s_comment": _comment(rng, 10)}
                          for s in range(1, 41)]  # fmt: skip
    tables["customer"] = [{"c_custkey": c, "c_name": f"Customer#{c:09d}", "c_nationkey": rng.randrange(25),
                           "c_acctbal": round(rng.uniform(-999, 9999), 2), "c_mktsegment": rng.choice(["BUILDING", "MACHINERY", "HOUSEHOLD"]),
                           "c_comment": _comment(rng, 12)} for c in range(1, 151)]  # fmt: skip
    tables["part"] = [{"p_partkey": p, "p_name": _comment(rng, 3), "p_size": rng.randrange(1, 50),
                       "p_retailprice": round(900 + p / 10, 2)} for p in range(1, 201)]  # fmt: skip
    partsupp = []
    for p in range(1, 201):
        for s in rng.sample(range(1, 41), 4):
            partsupp.append({"ps_partkey": p, "ps_suppkey": s, "ps_availqty": rng.randrange(1, 9999),
                             "ps_supplycost": round(rng.uniform(1, 1000), 2), "ps_comment": _comment(rng, 14)})  # fmt: skip
    tables["partsupp"] = partsupp
    # customers with a key divisible by 3 place no orders (as in TPC-H): o_custkey covers two thirds of c_custkey
    buyers = [c for c in range(1, 151) if c % 3]
    tables["orders"] = [{"o_orderkey": o, "o_custkey": rng.choice(buyers), "o_orderstatus": rng.choice("FOP"),
                         "o_totalprice": round(rng.uniform(1000, 400000), 2),
                         "o_orderdate": f"199{rng.randrange(2, 9)}-0{rng.randrange(1, 10)}-1{rng.randrange(0, 10)}",
                         "o_comment": _comment(rng, 7)} for o in range(1, 401)]  # fmt: skip
    lines = []
    for o in range(1, 401):
        for ln in range(1, rng.randrange(2, 8)):
            ps = rng.choice(partsupp)
            lines.append({"l_orderkey": o, "l_partkey": ps["ps_partkey"], "l_suppkey": ps["ps_suppkey"],
                          "l_linenumber": ln, "l_quantity": rng.randrange(1, 51),
                          "l_extendedprice": round(rng.uniform(900, 100000), 2),
                          "l_shipdate": f"199{rng.randrange(2, 9)}-1{rng.randrange(0, 3)}-0{rng.randrange(1, 10)}",
                          "l_comment": _comment(rng, 5)})  # fmt: skip
    tables["lineitem"] = lines
    folder.mkdir(parents=True, exist_ok=True)
    for name, rows in tables.items():
        with (folder / f"{name}.csv").open("w", newline="", encoding="utf-8") as fh:
            w = csv.DictWriter(fh, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)


def expected_graph(folder: Path) -> dict[str, Any]:
    """Counts the rows imply, computed by DuckDB from the CSVs (independent of ESC's code)."""
    con = duckdb.connect()
    for t in KEYS:
        con.execute(f"CREATE TABLE {t} AS SELECT * FROM read_csv(?, header = true)", [str(folder / f"{t}.csv")])
    rows = {t: int(con.execute(f"SELECT count(*) FROM {t}").fetchone()[0]) for t in KEYS}  # type: ignore[index]
    nodes = {t: int(con.execute(f"SELECT count(*) FROM (SELECT DISTINCT {', '.join(k)} FROM {t})").fetchone()[0])  # type: ignore[index]
             for t, k in KEYS.items()}  # fmt: skip
    edges, stubs = [], 0
    for child, cols, parent, pcols in FKS:
        set_ = " AND ".join(f"{c} IS NOT NULL" for c in cols)
        edges.append(int(con.execute(
            f"SELECT count(*) FROM (SELECT DISTINCT {', '.join(KEYS[child] + cols)} FROM {child} WHERE {set_})"
        ).fetchone()[0]))  # type: ignore[index]  # fmt: skip
        on = " AND ".join(f"c.{a} = p.{b}" for a, b in zip(cols, pcols, strict=True))
        stubs += int(con.execute(
            f"SELECT count(*) FROM (SELECT DISTINCT {', '.join('c.' + a for a in cols)} FROM {child} c "
            f"WHERE {set_} AND NOT EXISTS (SELECT 1 FROM {parent} p WHERE {on}))"
        ).fetchone()[0])  # type: ignore[index]  # fmt: skip
    return {"rows": sum(rows.values()), "nodes_per_source": nodes, "edges": sorted(edges), "stubs": stubs}


def actual_graph(state: Path) -> dict[str, Any]:
    con = duckdb.connect(str(state / "embedded" / "graph.duckdb"), read_only=True)
    try:
        one = lambda q: int(con.execute(q).fetchone()[0])  # type: ignore[index]  # noqa: E731
        return {
            "nodes": dict(con.execute("SELECT label, count(*) FROM entities WHERE NOT stub GROUP BY 1").fetchall()),
            "stubs": one("SELECT count(*) FROM entities WHERE stub"),
            "source_records": one("SELECT count(*) FROM source_records"),
            "derived_from": one("SELECT count(*) FROM derived_from"),
            "edges": sorted(n for _, n in con.execute("SELECT type, count(*) FROM edges GROUP BY 1").fetchall()),
        }
    finally:
        con.close()


@pytest.fixture(scope="module")
def ingested(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Any]:
    root = tmp_path_factory.mktemp("tpch_like")
    generate(root / "drop")
    settings = load().replace(state_dir=root / "state")
    summary = ingest_embedded(settings, root / "drop", HashingEmbedder())
    return root / "drop", root / "state", summary


def test_contract_holds_the_specifications_keys_and_foreign_keys(ingested: tuple[Path, Path, Any]) -> None:
    from esc.contract.serde import load_json

    _, state, summary = ingested
    contract = load_json((state / "inprocess" / "contract.json").read_text("utf-8"))
    assert summary.dead == 0
    assert {s: contract.sources[s].identity_key for s in KEYS} == KEYS
    found = {fk.signature() for fk in contract.foreign_keys}
    assert found == {(c, tuple(cf), p, tuple(pf)) for c, cf, p, pf in FKS}


def test_graph_counts_are_those_the_rows_imply(ingested: tuple[Path, Path, Any]) -> None:
    drop, state, summary = ingested
    want, got = expected_graph(drop), actual_graph(state)
    assert summary.written + summary.backfilled == want["rows"]
    assert got["source_records"] == want["rows"]
    assert got["derived_from"] == want["rows"]
    assert sorted(got["nodes"].values()) == sorted(want["nodes_per_source"].values())
    assert sum(got["nodes"].values()) == sum(want["nodes_per_source"].values())
    assert got["stubs"] == want["stubs"]
    assert got["edges"] == want["edges"]  # one edge kind per foreign key, each with the rows' distinct references
