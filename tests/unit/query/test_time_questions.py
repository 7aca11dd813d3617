"""Time questions over dates, datetimes and year-month text, on a small library data set written here (a domain no
pack uses): a category before its own type ("lost loans", "overdue loans of X"), the date field a verb names
("returned" -> returned_at, "joined" -> joined), "first" / "last" after a verb, a field spelled by the cue and the
words after it ("last visit" -> last_visit), latest by an update time, and a date asked more finely than the field
records (the contract's time mark: months) answered for the month with low confidence."""

from __future__ import annotations

import csv
import io
import random
from datetime import date, datetime, timedelta
from pathlib import Path

import pytest

import bench.qa as qa
from esc.agents.query.agent import QueryAgent
from esc.agents.query.memstore import MemoryGraphStore

FIRST = ["Ada", "Grace", "Alan", "Edsger", "Barbara", "Donald", "Frances", "John", "Karen", "Niklaus", "Radia", "Tony"]
LAST = ["Byron", "Hopper", "Turing", "Dijkstra", "Liskov", "Knuth", "Allen", "Backus", "Jones", "Wirth", "Perlman",
        "Hoare"]  # fmt: skip


def _csv(rows: list[dict[str, object]]) -> str:
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=list(rows[0]), lineterminator="\n")
    w.writeheader()
    w.writerows(rows)
    return buf.getvalue()


def _library(folder: Path) -> tuple[list[dict[str, object]], list[dict[str, object]]]:
    rng = random.Random(7)
    members = []
    for i, (first, last) in enumerate(zip(FIRST, LAST, strict=True)):
        updated = datetime(2023, 1, 1) + timedelta(days=rng.randrange(400), minutes=rng.randrange(1440))
        members.append({"member_id": f"M-{i + 1:02d}", "first_name": first, "last_name": last,
                        "email": f"{first.lower()}.{last.lower()}@example.org",
                        "joined": f"{2019 + i % 5}-{(i * 5) % 12 + 1:02d}",
                        "updated_at": updated.isoformat(timespec="seconds"),
                        "last_visit": (updated + timedelta(days=rng.randrange(1, 90))).isoformat(timespec="seconds")})  # fmt: skip
    loans = []
    for k in range(48):
        borrowed = date(2022, 1, 1) + timedelta(days=rng.randrange(700))
        status = rng.choice(["returned", "returned", "overdue", "lost"])
        back = datetime.combine(borrowed, datetime.min.time()) + timedelta(days=rng.randrange(3, 60), hours=rng.randrange(9, 18))
        loans.append({"loan_id": f"L-{k + 1:03d}", "member_id": rng.choice(members)["member_id"],
                      "borrowed_on": borrowed.isoformat(),
                      "returned_at": back.isoformat(timespec="seconds") if status == "returned" else "",
                      "status": status, "fee": round(rng.uniform(0, 12), 2)})  # fmt: skip
    (folder / "members.csv").write_text(_csv(members), "utf-8")
    (folder / "loans.csv").write_text(_csv(loans), "utf-8")
    return members, loans


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory) -> tuple[QueryAgent, list[dict[str, object]], list[dict[str, object]]]:
    folder = tmp_path_factory.mktemp("library")
    members, loans = _library(folder)
    graph = MemoryGraphStore()
    contract, _, _ = qa.load(folder, graph)
    return QueryAgent(contract, graph), members, loans


def _name(m: dict[str, object]) -> str:
    return f"{m['first_name']} {m['last_name']}"


def test_category_values_before_their_type(library: tuple[QueryAgent, list, list]) -> None:  # type: ignore[type-arg]
    agent, members, loans = library
    assert agent.ask("How many lost loans are there?").answer == sum(x["status"] == "lost" for x in loans)
    who = next(m for m in members if any(x["member_id"] == m["member_id"] and x["status"] == "overdue" for x in loans))
    want = sum(x["member_id"] == who["member_id"] and x["status"] == "overdue" for x in loans)
    assert agent.ask(f"How many overdue loans does {_name(who)} have?").answer == want


def test_the_date_a_verb_names(library: tuple[QueryAgent, list, list]) -> None:  # type: ignore[type-arg]
    agent, members, loans = library
    returned = [str(x["returned_at"]) for x in loans if x["returned_at"]]
    assert agent.ask("When was the earliest loan returned?").answer == min(returned)
    assert agent.ask("How many loans were returned in 2023?").answer == sum(r.startswith("2023") for r in returned)
    a = agent.ask("How many members joined before 2022?")
    assert a.answer == sum(str(m["joined"]) < "2022" for m in members), a


def test_first_and_last_after_a_verb_and_a_field_the_cue_spells(library: tuple[QueryAgent, list, list]) -> None:  # type: ignore[type-arg]
    agent, members, _loans = library
    first = min(members, key=lambda m: str(m["joined"]))
    assert sum(m["joined"] == first["joined"] for m in members) == 1
    assert agent.ask("Which member joined first?").answer == _name(first)
    newest = max(members, key=lambda m: str(m["updated_at"]))
    assert agent.ask("Which member was updated most recently?").answer == _name(newest)
    m = members[4]
    a = agent.ask(f"When did {_name(m)} last visit?")
    assert a.answer == m["last_visit"] and a.route != "abstain", a


def test_a_date_finer_than_the_field_records_is_cut_to_its_granularity(library: tuple[QueryAgent, list, list]) -> None:  # type: ignore[type-arg]
    agent, members, _loans = library
    month = str(members[3]["joined"])
    a = agent.ask(f"How many members joined on {month}-15?")
    assert a.answer == sum(m["joined"] == month for m in members)
    assert a.confidence < 0.8  # the field records months: the day was dropped, and that is said by the confidence
    assert agent.ask(f"How many members joined in {month}?").confidence >= 0.8
