"""bench/qa.py scoring helpers on fabricated answers: exact match, out-of-scope questions, confident-wrong answers,
confidence buckets, the release thresholds, pack discovery and the TPC-H .tbl conversion (no ingest, no agent)."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

import pytest

from bench import qa
from esc.agents.query.answer import Answer, Route


def _s(q: dict[str, Any], answer: Any, route: Route = "lookup", confidence: float = 1.0) -> Any:
    return qa.scored(q, Answer(answer=answer, route=route, confidence=confidence))


IN = {"id": "x1", "question": "q?", "answer": "Vancouver", "kind": "lookup"}
OOS = {"id": "x2", "question": "weather?", "answer": None, "kind": "abstain", "category": "out-of-scope",
       "abstain": True}  # fmt: skip


# -- same() -----------------------------------------------------------------------------------------------------


def test_same_strings_fold_case_and_trim() -> None:
    assert qa.same("  vancouver ", "Vancouver")
    assert not qa.same("Vancouver BC", "Vancouver")


def test_same_numbers_within_half_a_cent() -> None:
    assert qa.same(5.434, 5.43)
    assert qa.same("14", 14)
    assert not qa.same(5.44, 5.43)
    assert not qa.same(True, 1)  # a boolean is not a number


def test_same_lists_are_sets_and_one_element_lists_equal_their_element() -> None:
    assert qa.same(["b", "A"], ["a", "B"])
    assert qa.same(["U2"], "U2")
    assert qa.same("U2", ["U2"])
    assert not qa.same(["a", "a"], ["a", "b"])
    assert not qa.same(["a"], ["a", "b"])


def test_same_none_never_matches() -> None:
    assert not qa.same(None, "x")
    assert not qa.same(None, 0)


# -- out-of-scope / abstain logic -------------------------------------------------------------------------------


def test_gold_abstains_on_flag_or_null_answer() -> None:
    assert qa.gold_abstains(OOS)
    assert qa.gold_abstains({"question": "q", "answer": None})
    assert qa.gold_abstains({"question": "q", "answer": "x", "abstain": True})
    assert not qa.gold_abstains(IN)
    assert not qa.gold_abstains({"question": "q", "answer": 0})  # zero is an answer


def test_abstaining_on_an_out_of_scope_question_is_right() -> None:
    s = _s(OOS, None, route="abstain", confidence=0.0)
    assert s.ok and s.abstained and s.out_of_scope and not s.confident_wrong


def test_any_answer_to_an_out_of_scope_question_is_wrong() -> None:
    assert not _s(OOS, "Today", confidence=0.5).ok
    assert not _s(OOS, None, route="vector", confidence=0.1).ok  # a null answer off the abstain route
    confident = _s(OOS, "Today", confidence=0.8)
    assert not confident.ok and confident.confident_wrong


def test_in_scope_answers() -> None:
    assert _s(IN, "vancouver").ok
    wrong = _s(IN, "Toronto", confidence=0.95)
    assert not wrong.ok and wrong.confident_wrong
    assert not _s(IN, "Toronto", confidence=0.79).confident_wrong
    abstained = _s(IN, None, route="abstain", confidence=0.0)
    assert not abstained.ok and not abstained.confident_wrong  # declining is wrong but never confident
    # an abstention that happens to carry an answer is still an abstention
    assert not _s(IN, "Vancouver", route="abstain", confidence=1.0).ok


def test_category_falls_back_to_kind() -> None:
    assert _s(OOS, None, route="abstain").category == "out-of-scope"
    assert _s(IN, "x").category == "lookup"
    assert _s({"question": "q", "answer": 1}, 1).category == "-"


# -- buckets ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("confidence", "label"),
    [(0.0, "[0.0,0.2)"), (0.19, "[0.0,0.2)"), (0.2, "[0.2,0.4)"), (0.59, "[0.4,0.6)"), (0.6, "[0.6,0.8)"),
     (0.8, "[0.8,0.9)"), (0.89, "[0.8,0.9)"), (0.9, "[0.9,1.0]"), (1.0, "[0.9,1.0]"), (1.5, "[0.9,1.0]"),
     (-0.1, "[0.0,0.2)"), (None, "[0.0,0.2)")],
)  # fmt: skip
def test_bucket_edges(confidence: float | None, label: str) -> None:
    assert qa.bucket(confidence, "lookup") == label


def test_abstentions_have_their_own_row() -> None:
    assert qa.bucket(0.95, "abstain") == "abstain"


def test_reliability_counts_and_accuracy() -> None:
    items = [
        _s(IN, "Vancouver", confidence=1.0),
        _s(IN, "Toronto", confidence=0.95),
        _s(IN, "Vancouver", confidence=0.3),
        _s(OOS, None, route="abstain", confidence=0.0),
        _s(IN, None, route="abstain", confidence=0.0),
    ]
    rows = {r["bucket"]: r for r in qa.reliability(items)}
    assert list(rows) == [
        "[0.0,0.2)",
        "[0.2,0.4)",
        "[0.4,0.6)",
        "[0.6,0.8)",
        "[0.8,0.9)",
        "[0.9,1.0]",
        "abstain",
    ]
    assert rows["[0.9,1.0]"] == {"bucket": "[0.9,1.0]", "n": 2, "accuracy": 0.5}
    assert rows["[0.2,0.4)"]["n"] == 1 and rows["[0.2,0.4)"]["accuracy"] == 1.0
    assert rows["abstain"]["n"] == 2 and rows["abstain"]["accuracy"] == 0.5
    assert rows["[0.0,0.2)"] == {"bucket": "[0.0,0.2)", "n": 0, "accuracy": None}


# -- a whole set's score ----------------------------------------------------------------------------------------


def test_score_set() -> None:
    para = {**IN, "category": "paraphrase"}
    items = [
        _s(para, "Vancouver", confidence=1.0),  # right
        _s(para, "Toronto", confidence=0.9),  # confident-wrong
        _s(para, "Toronto", confidence=0.5),  # wrong, not confident
        _s(para, None, route="abstain", confidence=0.0),  # in-scope abstention: wrong
        _s(OOS, None, route="abstain", confidence=0.0),  # right
        _s(OOS, "Today", confidence=1.0),  # answered out of scope: confident-wrong
    ]
    r = qa.score_set(items)
    assert r["questions"] == 6
    assert r["exact_match"] == pytest.approx(2 / 6, abs=1e-4)
    assert r["abstained"] == 2
    assert (r["out_of_scope"], r["out_of_scope_right"], r["out_of_scope_answered"]) == (2, 1, 1)
    assert r["in_scope_abstained"] == 1
    assert r["confident_wrong"] == 2
    assert r["confident_wrong_rate"] == pytest.approx(2 / 6, abs=1e-4)
    assert r["acc_at_conf"] == {"min_confidence": 0.8, "n": 3, "accuracy": pytest.approx(1 / 3, abs=1e-4)}
    assert r["by_category"] == {"out-of-scope": 0.5, "paraphrase": 0.25}
    assert r["by_kind"] == {"abstain": 0.5, "lookup": 0.25}


def test_score_set_empty_and_no_confident_answers() -> None:
    r = qa.score_set([_s(IN, None, route="abstain", confidence=0.0)])
    assert r["acc_at_conf"]["n"] == 0 and r["acc_at_conf"]["accuracy"] is None
    assert qa.score_set([])["exact_match"] == 0.0


# -- release thresholds -----------------------------------------------------------------------------------------


def _report(set_name: str, em: float, answered_oos: int = 0, cw_rate: float = 0.0) -> dict[str, Any]:
    return {"pack": "p", "set": set_name, "exact_match": em, "out_of_scope_answered": answered_oos,
            "confident_wrong_rate": cw_rate, "confident_wrong": 1, "questions": 20}  # fmt: skip


def test_check_thresholds() -> None:
    assert qa.check(_report("questions", 0.95)) == []
    assert qa.check(_report("paraphrases", 0.8, cw_rate=0.05)) == []
    assert qa.check(_report("questions", 0.94)) == ["p questions: EM 0.940 < 0.95"]
    assert len(qa.check(_report("paraphrases", 0.79))) == 1
    assert qa.check(_report("paraphrases", 0.9, answered_oos=1)) == [
        "p paraphrases: 1 out-of-scope question(s) answered"
    ]
    assert "confident-wrong rate" in qa.check(_report("questions", 1.0, cw_rate=0.051))[0]
    assert qa.check(_report("other", 0.1)) == []  # no EM floor for other question files
    assert qa.check({"pack": "p", "set": "questions", "error": "boom"}) == ["p questions: did not run (boom)"]


# -- packs and TPC-H files --------------------------------------------------------------------------------------


def test_question_files_order_and_filter(tmp_path: Path) -> None:
    for name in ("paraphrases", "extra", "questions"):
        (tmp_path / f"{name}.jsonl").write_text("{}\n")
    assert list(qa.question_files(tmp_path, "all")) == ["questions", "paraphrases", "extra"]
    assert list(qa.question_files(tmp_path, "paraphrases")) == ["paraphrases"]


def test_find_pack_reports_what_is_missing(tmp_path: Path) -> None:
    def missing(which: str) -> str:
        found = qa.find_pack("chinook", tmp_path, which)
        assert isinstance(found, str), found  # a pack is found only when everything is there
        return found

    assert "no " in missing("all")
    root = tmp_path / "relational" / "chinook"
    (root / "drop").mkdir(parents=True)
    assert "no question files" in missing("all")
    (root / "questions.jsonl").write_text('{"question": "q", "answer": 1}\n')
    assert "no paraphrases.jsonl" in missing("paraphrases")
    pack = qa.find_pack("chinook", tmp_path, "all")
    assert not isinstance(pack, str), pack
    assert pack.drop == root / "drop" and list(pack.sets) == ["questions"]
    assert qa.read_questions(pack.sets["questions"]) == [{"question": "q", "answer": 1}]


def test_tbl_files_become_headed_csv(tmp_path: Path) -> None:
    (tmp_path / "region.tbl").write_text("0|AFRICA|lar, deposits|\n1|AMERICA|hs use|\n")
    out = qa.tpch_folder(tmp_path, tmp_path / "csv")
    assert out == tmp_path / "csv"
    with (out / "region.csv").open(newline="") as fh:
        rows = list(csv.reader(fh))
    assert rows == [
        ["r_regionkey", "r_name", "r_comment"],
        ["0", "AFRICA", "lar, deposits"],
        ["1", "AMERICA", "hs use"],
    ]


def test_csv_folders_are_used_as_is(tmp_path: Path) -> None:
    (tmp_path / "region.csv").write_text("r_regionkey,r_name\n0,AFRICA\n")
    assert qa.tpch_folder(tmp_path) == tmp_path


def test_words_and_plurals() -> None:
    assert qa._words("c_mktsegment", "c") == "mktsegment"
    assert qa._words("UnitsInStock", None) == "units in stock"
    assert qa._plural("category") == "categories"
    assert qa._plural("box") == "boxes"
    assert qa._plural("day") == "days"
    assert qa._plural("customer") == "customers"
