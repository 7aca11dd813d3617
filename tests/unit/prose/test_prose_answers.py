"""Questions answered from prose through mentions: values only the notes give (a query-scoped extension, reverted),
what the notes say about someone, candidate facts that never replace a stored value."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from esc.agents.mention_dictionary import build_surfaces
from esc.agents.mentions import MentionAutomaton
from esc.agents.prose_facts import FieldForm, extract, sentences
from esc.agents.query.agent import QueryAgent
from tests.unit.prose.conftest import COLLECTION, PACK, Ingested, ingest_pack


@pytest.fixture(scope="module")
def agent(mentions_pack: Ingested) -> QueryAgent:
    p = mentions_pack
    return QueryAgent(p.contract, p.graph, p.vectors, p.ingestor.embedder, COLLECTION)


def test_values_only_the_notes_give_are_answered_with_the_note_cited(agent: QueryAgent, mentions_pack: Ingested) -> None:
    questions = mentions_pack.truth["questions"]
    assert len(questions) >= 15
    hash_before = agent.grounding().contract.content_hash
    right = 0
    for q in questions:
        a = agent.ask(q["question"])
        if a.answer == q["answer"] and any(c.location.startswith(q["source"]) for c in a.citations):
            right += 1
            assert a.confidence < 0.8  # a candidate read from text, never a confident structured answer
            assert a.extension is not None and a.extension["derived_from"] == "prose" and a.extension["reverted"]
    assert right / len(questions) >= 0.9, f"{right}/{len(questions)}"
    assert agent.grounding().contract.content_hash == hash_before  # the extension was for the question only
    assert agent.grounding().contract.entity_for_source("people") is not None
    people = agent.grounding().contract.entity_for_source("people")
    assert people is not None and "shoe size" not in {a.name for a in people.attributes}


def test_what_the_notes_say_about_someone(agent: QueryAgent, mentions_pack: Ingested) -> None:
    note, m = next((n, m) for n, ms in mentions_pack.truth["mentions"].items() for m in ms
                   if m["source"] == "people" and " " in m["surface"] and "," not in m["surface"])  # fmt: skip
    a = agent.ask(f"What do the notes say about {m['surface']}?")
    assert a.route == "vector" and isinstance(a.answer, list) and a.answer
    last = m["surface"].split()[-1]
    assert all(last in s for s in a.answer)
    assert any(c.location.startswith(note + ":chars=") for c in a.citations)
    text = (PACK / "drop" / note).read_text(encoding="utf-8")
    for c in a.citations:  # every citation points at the sentence it quotes
        if c.location.startswith(note):
            lo, hi = map(int, c.location.rsplit("chars=", 1)[1].split("-"))
            assert text[lo:hi].strip().endswith(".")


def test_nobody_the_notes_mention_is_not_answered_from_them(agent: QueryAgent) -> None:
    a = agent.ask("What do the notes say about Quentin Abara?")  # named in notes, in no table
    assert a.route == "abstain" or a.confidence < 0.8


def test_a_stored_value_is_never_replaced_by_a_note(tmp_path: Path) -> None:
    shutil.copytree(PACK / "drop", tmp_path / "drop")
    people = (tmp_path / "drop" / "people.csv").read_text(encoding="utf-8").splitlines()
    first = people[1].split(",")
    name, city = f"{first[1]} {first[2]}", first[3]
    (tmp_path / "drop" / "notes" / "note_999.md").write_text(
        f"# Note 999\n\nFor the record, the city of {name} is Reykjavik.\n", encoding="utf-8"
    )
    pack = ingest_pack(tmp_path / "drop")
    try:
        agent = QueryAgent(pack.contract, pack.graph, pack.vectors, pack.ingestor.embedder, COLLECTION)
        a = agent.ask(f"What is the city of {name}?")
        assert a.answer == city and a.route == "lookup"
    finally:
        pack.graph.close()
        pack.vectors.close()


def test_candidate_facts_from_all_notes_match_what_was_planted(mentions_pack: Ingested) -> None:
    """Deterministic extraction over every chunk for the people's fields and the two phrases no table has."""
    p = mentions_pack
    automaton = MentionAutomaton(build_surfaces(p.contract, p.graph))
    label = p.label("people")
    forms = [FieldForm("birth_year", ("birth", "year"), "int", "year", label),
             FieldForm("email", ("email",), "string", "email", label),
             FieldForm("city", ("city",), "string", None, label),
             FieldForm("shoe size", ("shoe", "size"), "float"), FieldForm("badge number", ("badge", "number"), "float")]  # fmt: skip
    got = set()
    for row in p.graph.chunk_rows("", 10_000):
        for f in extract(row.text, automaton.find(row.text), forms):
            value = int(f.value) if isinstance(f.value, float) and f.value.is_integer() else f.value
            got.add((row.file, f.entity.key, f.field.replace("_", " "), value))
    planted = {(f["note"], json.dumps(f["key"], sort_keys=True), f["field"], f["value"]) for f in p.truth["facts"]}
    assert len(planted & got) / len(planted) >= 0.9
    assert len(planted & got) / len(got) >= 0.95, sorted(got - planted)[:5]


def test_sentences_do_not_end_at_initials_or_abbreviations() -> None:
    t = "Lunch with B. Achebe of Hikari Optics. Dr. Okafor, e.g. by phone, agreed! It cost 4.5 million."
    assert [t[a:b].strip() for a, b in sentences(t)] == [
        "Lunch with B. Achebe of Hikari Optics.", "Dr. Okafor, e.g. by phone, agreed!", "It cost 4.5 million."]  # fmt: skip
