"""The flights question bank (tests/data/flights/build.py computes the answers): written from the schema
(column names and a look at the values) before the question answering was run on this data."""

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
