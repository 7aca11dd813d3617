"""Entity resolution: normalization, the pairwise rules, incremental clusters (merge when a record links two,
split when it goes, the same clusters in any order), and the numbers on the people pack and the public packs."""

from __future__ import annotations

import json
import random

import pytest

from bench.reconcile import PEOPLE, PUBLIC, pack_members, pairs_of, prf, run_esc, truth_of
from esc.agents.reconcile.model import Member
from esc.agents.reconcile.resolver import Resolver
from esc.contract.er_fields import ResolutionSpec, TypeSpec
from esc.contract.er_match import Norm, compare, name_level, name_words, norm_phone

PERSON = TypeSpec(
    label="Person", source="people", roles={"name": "name", "email": "email", "phone": "phone", "city": "city"},
    time_field="updated", canon={"name": "name", "email": "email", "phone": "phone", "city": "city", "updated": "updated"},
)  # fmt: skip
SPEC = ResolutionSpec({"Person": PERSON})


def member(rid: str, **values: object) -> Member:
    return Member(sid=f"people\x1f{rid}", label="Person", key=(("id", rid),), values=tuple(sorted(values.items())),
                  source="people", record_id=rid)  # fmt: skip


def test_names_phones_and_levels() -> None:
    assert name_words("Keller, María") == ("maria", "keller")
    assert name_level(name_words("KELLER María"), name_words("maria keller")) == "exact"
    assert name_level(name_words("M. Keller"), name_words("María Keller")) == "initials"
    assert name_level(name_words("Maria Kelle"), name_words("María Keller")) == "high"
    assert name_level(name_words("Anna Keller"), name_words("Maria Keller")) == "diff"
    assert norm_phone("+49 30 1234567") == norm_phone("030 1234567") == "301234567"
    assert norm_phone("(617) 555-0123") == norm_phone("+1 617 555 0123")


def test_rules_and_score() -> None:
    maria = Norm(email="m.k@x.de", phone="301234567", names=("maria", "keller"), others=(("city", "berlin"),))
    assert compare(maria, Norm(email="M.K@x.de".casefold(), names=("m", "keller"))).rule == "email"
    assert compare(maria, Norm(phone="301234567", names=("keller", "maria"))).rule == "phone"
    # a namesake in the same city with other contacts: not the same person
    namesake = Norm(email="mk2@y.de", phone="309999999", names=("maria", "keller"), others=(("city", "berlin"),))
    assert not compare(maria, namesake).matched
    # a shared e-mail of two people with different names links nobody
    assert not compare(maria, Norm(email="m.k@x.de", names=("anna", "schmidt"))).matched
    # a name and a city alone are never enough
    assert not compare(maria, Norm(names=("maria", "keller"), others=(("city", "berlin"),))).matched


def test_a_record_linking_two_clusters_merges_them_and_its_deletion_splits_them() -> None:
    a = member("1", name="Maria Keller", email="maria@x.de")
    b = member("2", name="M. Keller", phone="+49 30 1234567")
    bridge = member("3", name="Keller, Maria", email="MARIA@x.de", phone="030 1234567")
    r = Resolver(SPEC)
    first = r.upsert([a, b])
    assert len(r.clusters) == 2 and not first.events and not first.upserts  # no duplicates: nothing written
    merged = r.upsert([bridge])
    assert [e.kind for e in merged.events] == ["merge"] and len(r.clusters) == 1
    assert len(merged.upserts) == 1 and merged.upserts[0].props["_members"] == 3
    assert r.upsert([bridge]).events == []  # a re-delivery changes nothing
    split = r.remove([bridge.sid])
    assert [e.kind for e in split.events] == ["split"] and len(r.clusters) == 2
    assert set(split.deletes) == {merged.upserts[0].cid} and not split.upserts


def test_clusters_do_not_depend_on_arrival_order() -> None:
    contract, members, _ = pack_members(PEOPLE / "drop")
    want, _, _ = run_esc(contract, members)
    for seed in (1, 2, 3):
        shuffled = members[:]
        random.Random(seed).shuffle(shuffled)
        r = Resolver(run_esc(contract, [])[2].spec)
        for i in range(0, len(shuffled), 7):
            r.upsert(shuffled[i : i + 7])
        assert r.cluster_of == want


def test_people_pack_linking_reaches_the_goal() -> None:
    contract, members, _ = pack_members(PEOPLE / "drop")
    truth = json.loads((PEOPLE / "truth.json").read_text("utf-8"))
    clusters, _, _ = run_esc(contract, members)
    got = prf(pairs_of(clusters), pairs_of(truth_of(members, truth)))
    assert got["f1"] >= 0.95 and got["precision"] >= 0.98, got


@pytest.mark.parametrize("pack", sorted(PUBLIC))
def test_public_packs_have_no_false_merges(pack: str) -> None:
    contract, members, rows = pack_members(PUBLIC[pack])
    _, _, r = run_esc(contract, members)
    assert members, "the pack has identifying types"
    assert all(c.nodes == 1 for c in r.clusters.values())
    assert {lab: n for lab, n in r.clusters_by_label().items()} == {lab: rows[lab] for lab in r.clusters_by_label()}
