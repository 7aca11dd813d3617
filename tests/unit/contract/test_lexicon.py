"""contract.lexicon: identifier words, shorthand, inflection and the phrases a user may say."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from esc.contract.lexicon import (
    ABBREVIATIONS,
    MAX_VARIANTS,
    expand,
    inflections,
    is_english_word,
    lemma,
    plural,
    relationship_phrases,
    split_glued,
    split_identifier,
    surface_forms,
)
from esc.contract.lexicon_data import COMMON_WORDS, KEY_WORDS, ROLE_PHRASES, SELF_ROLE_PHRASES


def phrases(pairs: list[tuple[str, float]]) -> dict[str, float]:
    return dict(pairs)


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


@pytest.mark.parametrize(
    ("word", "base"),
    [
        ("countries", "country"),
        ("bought", "buy"),
        ("sold", "sell"),
        ("written", "write"),
        ("employees", "employee"),
        ("addresses", "address"),
        ("status", "status"),
        ("series", "series"),
        ("data", "data"),
        ("analyses", "analysis"),
        ("children", "child"),
        ("ordered", "order"),
        ("categories", "category"),
        ("Customers", "customer"),
        ("news", "news"),
        ("tailnums", "tailnum"),
        ("boxes", "box"),
        ("class", "class"),
    ],
)
def test_lemma(word: str, base: str) -> None:
    assert lemma(word) == base


@pytest.mark.parametrize("word", ["Texas", "Paris", "2009", "us", "id", "x", "IDS", "SKU", "3rd", ""])
def test_lemma_leaves_proper_nouns_numbers_short_words_and_acronyms(word: str) -> None:
    assert lemma(word) == word.lower()


@given(
    st.sampled_from([*sorted(COMMON_WORDS), "countries", "bought", "written", "analyses", "tailnums", "data"])
)
@settings(max_examples=300, deadline=None)
def test_lemma_of_a_lemma_is_stable(word: str) -> None:
    assert lemma(lemma(word)) == lemma(word)


@pytest.mark.parametrize(
    ("word", "form"),
    [
        ("country", "countries"),
        ("countries", "countries"),
        ("employee", "employees"),
        ("address", "addresses"),
        ("status", "statuses"),
        ("series", "series"),
        ("data", "data"),
        ("child", "children"),
        ("id", "ids"),
        ("SKU", "skus"),
        ("unit price", "unit prices"),
        ("tailnum", "tailnums"),
        ("Texas", "texas"),
        ("2009", "2009"),
    ],
)
def test_plural(word: str, form: str) -> None:
    assert plural(word) == form


def test_inflections() -> None:
    assert {"buy", "buys", "bought", "buying"} <= inflections("bought")
    assert {"sell", "sold", "selling"} <= inflections("sell")
    assert {"country", "countries"} <= inflections("countries")
    assert {"write", "wrote", "written", "writing"} <= inflections("write")
    assert inflections("Texas") == {"texas"}
    assert inflections("42") == {"42"}
    for word in ["order", "report", "customer"]:
        forms = inflections(word)
        assert word in forms and all(lemma(f) in forms for f in forms)


def test_is_english_word() -> None:
    assert is_english_word("season") and is_english_word("Customer")
    assert not is_english_word("tailnum") and not is_english_word("") and not is_english_word("a1")


# ---------------------------------------------------------------- surface_forms


def test_surface_forms_of_a_column_on_its_table() -> None:
    got = phrases(surface_forms("CustomerName", owner="Customer"))
    assert got["customer name"] == 1.0
    assert got["name"] == 0.9
    assert "customer names" in got and got["customer names"] < 1.0


def test_surface_forms_expand_and_inflect() -> None:
    got = phrases(surface_forms("acct_bal"))
    assert got["acct bal"] == 1.0
    assert got["account balance"] == 0.95
    assert "account balances" in got
    got = phrases(surface_forms("UnitsInStock"))
    assert got["units in stock"] == 1.0 and "unit in stock" in got
    assert phrases(surface_forms("tailnum"))["tail number"] == 0.95
    assert "date of birth" in phrases(surface_forms("DOB"))


def test_surface_forms_rank_ambiguous_readings_and_skip_verb_plurals() -> None:
    got = phrases(surface_forms("st_name"))
    assert got["street name"] == 0.95 and got["state name"] == 0.92
    got = phrases(surface_forms("Discontinued"))
    assert got == {"discontinued": 1.0, "discontinue": 0.95}


def test_surface_forms_strip_shorthand_and_initials_prefixes() -> None:
    got = phrases(surface_forms("cust_name", owner="Customer"))
    assert got["customer name"] == 0.95 and got["name"] == 0.9
    got = phrases(surface_forms("c_name", owner="customer"))
    assert got["name"] == 1.0 and got["c name"] == 0.8
    got = phrases(surface_forms("o_orderdate", owner="orders"))
    assert got["orderdate"] == 1.0 and got["order date"] == 0.95 and got["date"] == 0.9
    got = phrases(surface_forms("ps_supplycost", owner="partsupp"))
    assert got["supply cost"] == 0.95
    got = phrases(surface_forms("FirstName", owner="Employee"))
    assert "name" not in got and got["first name"] == 1.0


def test_surface_forms_shape() -> None:
    assert surface_forms("") == []
    for name, owner in [("CustomerId", "Customer"), ("l_extendedprice", "lineitem"), ("dep_delay", None)]:
        got = surface_forms(name, owner=owner)
        scores = [s for _, s in got]
        assert scores == sorted(scores, reverse=True)
        assert all(0.0 < s <= 1.0 for s in scores)
        assert len({p for p, _ in got}) == len(got)
        assert all(p == p.lower() and "  " not in p for p, _ in got)


# ---------------------------------------------------------------- relationship_phrases


def test_self_reference_gets_hierarchy_words() -> None:
    got = phrases(relationship_phrases("ReportsTo", ["ReportsTo"], "Employee", "Employee"))
    assert got["reports to"] == 1.0
    for p in ["manager", "boss", "supervisor", "works for", "manager of", "reports", "report to"]:
        assert p in got, p
    other = phrases(relationship_phrases("ReportsTo", ["ReportsTo"], "Employee", "Department"))
    assert "reports to" in other and "manager of" not in other and "subordinate" not in other


def test_fk_column_stem() -> None:
    got = phrases(relationship_phrases("SUPPORT_REP", ["SupportRepId"], "Customer", "Employee"))
    for p in ["support rep", "support representative", "rep"]:
        assert p in got, p
    got = phrases(relationship_phrases("MANAGER", ["manager_staff_id"], "store", "staff"))
    assert "manager" in got and "manager staff" in got
    assert got["manager"] >= got["manager staff"]


def test_generic_fk_names_its_target() -> None:
    got = phrases(relationship_phrases("HAS_CUSTOMER", ["CustomerId"], "Invoice", "Customer"))
    assert "customer" in got and got["has customer"] == 1.0
    got = phrases(relationship_phrases("", ["o_custkey"], "orders", "customer"))
    assert "customer" in got
    got = phrases(relationship_phrases("", ["id"], "a", "Customer"))
    assert "customer" in got


def test_role_table() -> None:
    got = phrases(relationship_phrases("CREATED_BY", ["created_by"], "ticket", "user"))
    assert {"created by", "creator", "author"} <= set(got) and "by" not in got
    got = phrases(relationship_phrases("PARENT", ["parent_id"], "category", "category"))
    assert {"parent", "belongs to"} <= set(got)
    for key in [*ROLE_PHRASES, *SELF_ROLE_PHRASES]:
        assert key == " ".join(lemma(w) for w in key.split()), key


def test_relationship_phrases_shape() -> None:
    assert relationship_phrases("", [], "a", "b") == []
    got = relationship_phrases("SOLD_BY", ["SalesRepId", "sold_by"], "Order", "Employee")
    scores = [s for _, s in got]
    assert scores == sorted(scores, reverse=True) and all(0.0 < s <= 1.0 for s in scores)
    assert {"sold by", "sales rep", "salesperson"} <= {p for p, _ in got}


def test_suffix_rules_stand_in_when_the_dictionary_is_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    import esc.contract.lexicon as lx

    monkeypatch.setattr(lx, "_lib", lambda: None)
    assert lx.lemma.__wrapped__("countries") == "country"
    assert lx.lemma.__wrapped__("addresses") == "address"
    assert lx.lemma.__wrapped__("status") == "status"
    assert lx.plural.__wrapped__("box") == "boxes"
    assert not lx.is_english_word("country")
