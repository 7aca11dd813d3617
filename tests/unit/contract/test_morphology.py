"""esc.contract.morphology: lemmas, plurals and inflections, with suffix rules as the fallback."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from esc.contract.lexicon_data import COMMON_WORDS
from esc.contract.morphology import (
    inflections,
    is_english_word,
    lemma,
    plural,
)


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



def test_suffix_rules_stand_in_when_the_dictionary_is_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    import esc.contract.morphology as lx

    monkeypatch.setattr(lx, "_lib", lambda: None)
    assert lx.lemma.__wrapped__("countries") == "country"
    assert lx.lemma.__wrapped__("addresses") == "address"
    assert lx.lemma.__wrapped__("status") == "status"
    assert lx.plural.__wrapped__("box") == "boxes"
    assert not lx.is_english_word("country")
