"""Organisations' names compare without their legal form ("Müller Metals GmbH" = "MULLER METALS" = "Müller Metals
S.A."), and the suppliers pack (tests/data/suppliers, a second test set) links with precision 1."""

from __future__ import annotations

import json

from bench.reconcile import SUPPLIERS, pack_members, pairs_of, prf, run_esc, truth_of
from esc.contract.er_match import Norm, compare, name_level, name_words


def test_a_trailing_legal_form_is_no_part_of_the_name() -> None:
    assert name_words("Müller Metals GmbH") == name_words("MULLER METALS") == ("muller", "metals")
    assert name_words("Lefèvre Paper S.A.") == name_words("Lefevre Paper, SA") == ("lefevre", "paper")
    assert name_words("Keller Logistik AG & Co. KG") == ("keller", "logistik")
    assert name_words("Acme, Inc.") == ("acme", "inc")  # two words stay: a one-word name compares too weakly
    assert name_words("Keller, Maria") == ("maria", "keller")  # a person's "Last, First" is still turned around
    assert name_words("J.R. Smith") == ("j", "r", "smith")  # initials before a name are no legal form
    assert name_level(name_words("Thornton Tools GmbH"), name_words("THORNTON TOOLS")) == "exact"


def test_companies_that_share_a_word_stay_apart_and_a_legal_form_alone_never_links() -> None:
    a = Norm(email="sales@lindgren-logistics.fr", phone="375324780", names=name_words("Lindgren Logistics SA"),
             others=(("city", "lille"),))  # fmt: skip
    b = Norm(email="office@lindgren-glass.com", phone="3124183794", names=name_words("Lindgren Glass LLC"),
             others=(("city", "chicago"),))  # fmt: skip
    assert not compare(a, b).matched
    same_phone = Norm(phone="375324780", names=name_words("LINDGREN LOGISTICS"), others=(("city", "lille"),))
    assert compare(a, same_phone).rule == "phone"
    name_and_city = Norm(names=name_words("Lindgren Logistics S.A."), others=(("city", "lille"),))
    assert not compare(a.__class__(names=a.names, others=a.others), name_and_city).matched


def test_the_suppliers_pack_links_with_precision_one() -> None:
    contract, members, _ = pack_members(SUPPLIERS / "drop")
    truth = json.loads((SUPPLIERS / "truth.json").read_text("utf-8"))
    gold = truth_of(members, truth)
    clusters, _secs, _r = run_esc(contract, members)
    got = prf(pairs_of(clusters), pairs_of(gold))
    assert got["precision"] == 1.0, got
    assert got["f1"] >= 0.95, got
