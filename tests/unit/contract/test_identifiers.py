"""esc.contract.identifiers: identifier words, shorthand and glued names."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from esc.contract.identifiers import (
    ABBREVIATIONS,
    MAX_VARIANTS,
    expand,
    split_glued,
    split_identifier,
)
from esc.contract.lexicon_data import COMMON_WORDS, KEY_WORDS

# ---------------------------------------------------------------- split_identifier


@pytest.mark.parametrize(
    ("name", "words"),
    [
        ("CustomerID", ["customer", "id"]),
        ("lgID", ["lg", "id"]),
        ("acct_bal", ["acct", "bal"]),
        ("UnitsInStock", ["units", "in", "stock"]),
        ("address2", ["address", "2"]),
        ("HTTPServer", ["http", "server"]),
        ("customerId", ["customer", "id"]),
        ("order-details", ["order", "details"]),
        ("Orders.Order Details", ["orders", "order", "details"]),
        ("l_extendedprice", ["l", "extendedprice"]),
        ("SHIP_DATE", ["ship", "date"]),
        ("IDs", ["ids"]),
        ("customerIDs", ["customer", "ids"]),
        ("getHTTPResponseCode", ["get", "http", "response", "code"]),
        ("Q3Revenue2020", ["q", "3", "revenue", "2020"]),
        ("  spaced   out  ", ["spaced", "out"]),
        ("ÑandúCount", ["ñandú", "count"]),
        ("", []),
        ("___", []),
    ],
)
def test_split_identifier(name: str, words: list[str]) -> None:
    assert split_identifier(name) == words


identifiers = st.text(
    alphabet=st.sampled_from("abcxyzABCXYZ019_-. "),
    min_size=0,
    max_size=24,
)


@given(identifiers)
@settings(max_examples=300, deadline=None)
def test_split_identifier_is_idempotent_on_its_output(name: str) -> None:
    words = split_identifier(name)
    assert split_identifier(" ".join(words)) == words
    assert split_identifier("_".join(words)) == words
    assert all(w and w == w.lower() for w in words)


# ---------------------------------------------------------------- abbreviations


def test_abbreviation_table_is_broad_and_well_formed() -> None:
    assert len(ABBREVIATIONS) >= 120
    for key, readings in ABBREVIATIONS.items():
        assert key == key.lower() and key.isalpha(), key
        assert readings and isinstance(readings, tuple), key
        assert all(r == r.strip().lower() and r for r in readings), key


@pytest.mark.parametrize(
    ("short", "full"),
    [
        ("acct", "account"),
        ("bal", "balance"),
        ("qty", "quantity"),
        ("amt", "amount"),
        ("ext", "extended"),
        ("desc", "description"),
        ("descr", "description"),
        ("num", "number"),
        ("no", "number"),
        ("nbr", "number"),
        ("nr", "number"),
        ("dt", "date"),
        ("ts", "timestamp"),
        ("addr", "address"),
        ("cust", "customer"),
        ("emp", "employee"),
        ("mgr", "manager"),
        ("dept", "department"),
        ("cat", "category"),
        ("prod", "product"),
        ("dob", "date of birth"),
        ("tel", "phone"),
        ("ph", "phone"),
        ("fname", "first name"),
        ("lname", "last name"),
        ("st", "street"),
        ("st", "state"),
        ("cnt", "count"),
        ("pct", "percent"),
        ("avg", "average"),
        ("min", "minimum"),
        ("min", "minute"),
        ("max", "maximum"),
        ("yr", "year"),
        ("mo", "month"),
        ("dep", "departure"),
        ("arr", "arrival"),
        ("dest", "destination"),
        ("orig", "origin"),
        ("lat", "latitude"),
        ("lon", "longitude"),
        ("lng", "longitude"),
        ("alt", "altitude"),
        ("tz", "time zone"),
        ("dst", "daylight saving time"),
        ("loc", "location"),
        ("org", "organization"),
        ("inv", "invoice"),
        ("txn", "transaction"),
        ("trx", "transaction"),
        ("pmt", "payment"),
        ("ord", "order"),
        ("uom", "unit of measure"),
        ("wt", "weight"),
        ("ht", "height"),
        ("dim", "dimension"),
        ("vol", "volume"),
        ("temp", "temperature"),
        ("sched", "scheduled"),
        ("est", "estimated"),
        ("act", "actual"),
        ("seq", "sequence"),
        ("ref", "reference"),
        ("stat", "status"),
        ("cd", "code"),
        ("typ", "type"),
        ("grp", "group"),
        ("div", "division"),
        ("reg", "region"),
        ("terr", "territory"),
        ("ctry", "country"),
        ("cntry", "country"),
        ("prov", "province"),
        ("zip", "zip code"),
        ("mfr", "manufacturer"),
        ("mfg", "manufacturer"),
        ("mdl", "model"),
        ("hr", "hour"),
        ("sec", "second"),
        ("ms", "milliseconds"),
        ("dur", "duration"),
        ("len", "length"),
        ("lang", "language"),
        ("msg", "message"),
        ("img", "image"),
        ("pic", "picture"),
        ("sku", "stock keeping unit"),
    ],
)
def test_abbreviation_readings(short: str, full: str) -> None:
    assert full in ABBREVIATIONS[short]


def test_word_tables_name_no_particular_data_set() -> None:
    domain = {"album", "artist_id", "track", "film", "actor", "rental", "invoice_line", "genre", "playlist"}
    assert not (domain - {"artist", "rental", "genre"}) & set(ABBREVIATIONS)
    assert "lineitem" not in COMMON_WORDS and "partsupp" not in COMMON_WORDS
    assert {"id", "key"} <= KEY_WORDS


# ---------------------------------------------------------------- expand


@pytest.mark.parametrize(
    ("words", "variants"),
    [
        (["acct", "bal"], [["acct", "bal"], ["account", "balance"]]),
        (["dob"], [["dob"], ["date", "of", "birth"]]),
        (["customer", "name"], [["customer", "name"]]),
        (["st", "name"], [["st", "name"], ["street", "name"], ["state", "name"]]),
        (["tailnum"], [["tailnum"], ["tail", "num"], ["tail", "number"]]),
        (["firstname"], [["firstname"], ["first", "name"]]),
        (["lastname"], [["lastname"], ["last", "name"]]),
        (["postalcode"], [["postalcode"], ["postal", "code"]]),
        (["birthdate"], [["birthdate"], ["birth", "date"]]),
        (["unitprice"], [["unitprice"], ["unit", "price"]]),
        (["zipcode"], [["zipcode"], ["zip", "code"], ["postal", "code"]]),
        (["qtys"], [["qtys"], ["quantities"]]),
    ],
)
def test_expand(words: list[str], variants: list[list[str]]) -> None:
    assert expand(words) == variants


def test_expand_reads_glued_shorthand() -> None:
    assert ["customer", "key"] in expand(["custkey"])
    assert ["market", "segment"] in expand(["mktsegment"])
    assert ["account", "balance"] in expand(["acctbal"])
    assert ["extended", "price"] in expand(["extendedprice"])
    assert ["time", "stamp"] not in expand(["timestamp"])


def test_expand_is_bounded() -> None:
    out = expand(["st", "min", "ext", "dep", "temp", "sched", "act"])
    assert len(out) <= MAX_VARIANTS
    assert out[0] == ["st", "min", "ext", "dep", "temp", "sched", "act"]
    assert len({tuple(v) for v in out}) == len(out)
    assert len(expand(["st", "min"], limit=2)) == 2


@given(
    st.lists(
        st.sampled_from([*list(ABBREVIATIONS)[:60], "name", "tailnum", "unitprice", "x", "7"]), max_size=5
    )
)
@settings(max_examples=200, deadline=None)
def test_expand_never_loses_the_original(words: list[str]) -> None:
    out = expand(words)
    assert out[0] == words
    assert 1 <= len(out) <= MAX_VARIANTS
    assert all(v and all(w == w.lower() for w in v) for v in out if words)


@pytest.mark.parametrize(
    "word", ["address", "category", "customer", "mandate", "season", "password", "company"]
)
def test_real_words_are_not_split(word: str) -> None:
    assert split_glued(word) == (word,)


def test_split_glued_leaves_short_mixed_and_unknown_tokens() -> None:
    assert split_glued("abc") == ("abc",)
    assert split_glued("UnitPrice") == ("UnitPrice",)
    assert split_glued("unit2price") == ("unit2price",)
    assert split_glued("qwxzvbnm") == ("qwxzvbnm",)
    assert split_glued("orderpriority") == ("order", "priority")


# ---------------------------------------------------------------- lemma / plural / inflections
