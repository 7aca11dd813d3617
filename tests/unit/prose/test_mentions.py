"""Mentions: the automaton finds the planted mentions of the generated pack (precision >= 0.95, recall >= 0.9),
ambiguous surnames are resolved by the note or kept with a split score, and the links do not depend on whether the
notes or the tables came first."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from esc.agents.mentions import EntityRef, MentionAutomaton, Surface
from tests.unit.prose.conftest import PACK, Ingested, ingest_pack

ASSERTED = 0.4
"""A link with at least this score is asserted (an ambiguous surname left unresolved is below it)."""


def found_links(pack: Ingested) -> set[tuple[str, int, int, str, str]]:
    out = set()
    rows = pack.graph.chunk_rows("", 10_000)
    by_id = {r.id: r for r in rows}
    for m in pack.graph.mentions_in(list(by_id)):
        if m.score < ASSERTED:
            continue
        chunk = by_id[m.chunk_id]
        out.add((chunk.file, chunk.start + m.start, chunk.start + m.end, m.label, m.key))
    return out


def planted_links(pack: Ingested) -> set[tuple[str, int, int, str, str]]:
    return {
        (note, m["start"], m["end"], pack.label(m["source"]), json.dumps(m["key"], sort_keys=True))
        for note, ms in pack.truth["mentions"].items()
        for m in ms
    }


def test_precision_and_recall_against_planted_truth(mentions_pack: Ingested) -> None:
    found, planted = found_links(mentions_pack), planted_links(mentions_pack)
    assert len(planted) > 200
    true_pos = found & planted
    precision, recall = len(true_pos) / len(found), len(true_pos) / len(planted)
    print(f"mentions: precision {precision:.3f} recall {recall:.3f} ({len(found)} found, {len(planted)} planted)")
    assert precision >= 0.95, sorted(found - planted)[:10]
    assert recall >= 0.9, sorted(planted - found)[:10]


def test_links_do_not_depend_on_arrival_order(mentions_pack: Ingested, tmp_path: Path) -> None:
    shutil.copytree(PACK / "drop", tmp_path / "drop")
    late = ingest_pack(tmp_path / "drop", notes_first=True)
    try:
        assert found_links(late) == found_links(mentions_pack)
    finally:
        late.graph.close()
        late.vectors.close()


def test_mentioning_lists_the_chunks_that_name_an_entity(mentions_pack: Ingested) -> None:
    note, m = next((n, m) for n, ms in mentions_pack.truth["mentions"].items() for m in ms if m["source"] == "people")
    label = mentions_pack.label("people")
    rows = mentions_pack.graph.mentioning(label, json.dumps(m["key"], sort_keys=True), 50)
    assert any(r["file"] == note for r in rows)
    assert all({"m_start", "m_end", "surface", "score", "text", "start"} <= set(r) for r in rows)


def test_ambiguous_surfaces_are_resolved_by_the_text_or_split() -> None:
    maria, tom = EntityRef("Person", '{"id": 1}'), EntityRef("Person", '{"id": 2}')
    auto = MentionAutomaton([
        Surface("Maria Keller", maria, "first+last", "Maria Keller"),
        Surface("Keller", maria, "first+last", "Maria Keller", 0.5, variant=True),
        Surface("Tom Keller", tom, "first+last", "Tom Keller"),
        Surface("Keller", tom, "first+last", "Tom Keller", 0.5, variant=True),
    ])  # fmt: skip
    resolved = auto.find("Spoke to MARIA KELLER today. Later Keller called back.")
    assert [(m.surface, m.entity) for m in resolved] == [("MARIA KELLER", maria), ("Keller", maria)]
    split = auto.find("Keller called back; the keller door was locked.")
    assert {(m.entity, m.score, m.candidates) for m in split} == {(maria, 0.125, 2), (tom, 0.125, 2)}  # unbacked bare word: half, then split


def test_folding_keeps_offsets_into_the_original_text() -> None:
    ref = EntityRef("Person", '{"id": 3}')
    auto = MentionAutomaton([Surface("Ana Gonçalves-Müller", ref, "name", "Ana Gonçalves-Müller")])
    text = "Straße: ANA GONCALVES-MULLER, ﬁne."
    [m] = auto.find(text)
    assert text[m.start : m.end] == "ANA GONCALVES-MULLER"
    assert auto.find("xAna Gonçalves-Müllerx") == []  # word boundaries
