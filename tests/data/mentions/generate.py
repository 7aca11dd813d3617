"""Deterministic generator of the mentions pack: people and organisations in tables, notes that mention them.

    python tests/data/mentions/generate.py   # rewrites drop/ and truth.json beside this file (seeded: same bytes)

drop/people.csv          person_id, first_name, last_name, city, birth_year, email, org_id (some cells left empty)
drop/organisations.csv   org_code, name, country
drop/notes/note_NNN.md   short notes; each names some people/organisations in one of several ways
truth.json               every planted mention: note file, start/end (characters in the file), source and key;
                         the facts the notes state (person, field, value), split by whether the table has the value
                         already; and questions with the answers the notes give

Ways a note names someone: "First Last", "Last, First", "F. Last", the surname alone after the full name in the same
note, "Mr./Ms. Last" after it; organisations by full name or without the legal form. Distractors that are not
mentions: surnames used as ordinary lowercase words, a first name alone, people and organisations not in the tables.
Licence: generated here, CC0.
"""

from __future__ import annotations

import csv
import json
import random
from pathlib import Path

HERE = Path(__file__).parent
SEED = 20261204

FIRST = ["Maria", "Tomas", "Aiko", "Lena", "Omar", "Priya", "Jonas", "Chloé", "Mateus", "Ingrid", "Kwame", "Sofia",
         "Henrik", "Yara", "Luis", "Mei", "Farid", "Zoë", "Anton", "Beatriz", "Ravi", "Elif", "Nils", "Amara",
         "Dmitri", "Hana", "Pablo", "Greta", "Tariq", "Vera", "Emil", "Noor", "Jakub", "Ines", "Kofi", "Alma"]
LAST = ["Keller", "Gonçalves", "Tanaka", "Lindqvist", "Haddad", "Raman", "Brandt", "Dubois", "Okafor", "Nuñez",
        "Müller", "Sato", "Ferreira", "Novak", "Achebe", "Castillo", "Holm", "Petrov", "Dvořák", "Mensah",
        "Moreau", "Varga", "Idowu", "Kovač", "Strand", "Bauer", "Ueda", "Quispe", "Laurent", "Osei", "Rossi",
        "Hartmann", "Silva", "Yilmaz", "Baker", "Long", "Young", "Field"]
COMMON = {"Baker": "the baker down the road", "Long": "a long afternoon", "Young": "the young interns",
          "Field": "the field trip"}  # surnames that are also ordinary words: used lowercase as distractors
ORGS = [("NRD-01", "Northline Robotics", "GmbH", "Germany"), ("AQS-02", "Aquasol Systems", "Ltd", "Ireland"),
        ("BLV-03", "Bellavista Foods", "S.p.A.", "Italy"), ("KRM-04", "Karmen Logistics", "AG", "Switzerland"),
        ("TDW-05", "Tidewater Analytics", "Inc.", "Canada"), ("OSL-06", "Osloff Maritime", "AS", "Norway"),
        ("PRM-07", "Paramo Energia", "SA", "Colombia"), ("HIK-08", "Hikari Optics", "", "Japan"),
        ("VRD-09", "Verdant Textiles", "Ltd", "Kenya"), ("CPS-10", "Copperstone Mining", "Plc", "Zambia")]
CITIES = ["Basel", "Porto", "Kyoto", "Uppsala", "Beirut", "Chennai", "Leipzig", "Lyon", "Lagos", "Valencia",
          "Graz", "Accra", "Cusco", "Tromsø", "Izmir", "Brno"]
OUTSIDERS = ["Quentin Abara", "Sigrid Fallon", "Marta Ilves"]  # named in notes, in no table
FILLER = ["The meeting ran over by twenty minutes.", "Minutes were circulated the next morning.",
          "Nothing else was decided.", "The budget review moves to next quarter.", "Coffee was, again, cold.",
          "A follow-up call is pencilled in.", "Everyone agreed the timeline was tight.",
          "The slides are in the shared folder."]
STATED: dict[tuple[object, str], object] = {}
EXTRA_FACTS = ("shoe size", "badge number")  # in no table: a query-scoped extension can read them from the notes


def people(rng: random.Random) -> list[dict[str, object]]:
    out: list[dict[str, object]] = []
    names: set[tuple[str, str]] = set()
    lasts = LAST[:]
    while len(out) < 48:
        first, last = rng.choice(FIRST), rng.choice(lasts)
        if (first, last) in names:
            continue
        names.add((first, last))
        pid = len(out) + 1
        out.append({"person_id": pid, "first_name": first, "last_name": last, "city": rng.choice(CITIES),
                    "birth_year": rng.randint(1955, 2001), "email": f"{first[0].lower()}.{pid}@example.org",
                    "org_id": rng.choice(ORGS)[0]})  # fmt: skip
    for p in out[::5]:  # some cells the notes will fill in
        p["email"] = ""
    for p in out[2::7]:
        p["birth_year"] = ""
    return out


class Note:
    def __init__(self) -> None:
        self.text = ""
        self.mentions: list[dict[str, object]] = []

    def add(self, s: str) -> None:
        self.text += s

    def mention(self, surface: str, source: str, key: dict[str, object]) -> None:
        start = len(self.text)
        self.text += surface
        self.mentions.append({"start": start, "end": len(self.text), "surface": surface, "source": source, "key": key})


def org_name(o: tuple[str, str, str, str]) -> str:
    return f"{o[1]} {o[2]}".strip()


def write_note(rng: random.Random, folks: list[dict[str, object]], n: int, facts: list[dict[str, object]],
               questions: list[dict[str, object]]) -> Note:  # fmt: skip
    note = Note()
    note.add(f"# Note {n}\n\n")
    stated: dict[tuple[object, str], object] = STATED
    shown = rng.sample(folks, rng.randint(1, 3))
    by_last: dict[object, int] = {}
    for p in folks:
        by_last[p["last_name"]] = by_last.get(p["last_name"], 0) + 1
    for p in shown:
        key = {"person_id": p["person_id"]}
        first, last = str(p["first_name"]), str(p["last_name"])
        form = rng.choice(["full", "full", "comma", "initial"])
        surface = {"full": f"{first} {last}", "comma": f"{last}, {first}", "initial": f"{first[0]}. {last}"}[form]
        if form == "initial" and sum(1 for q in folks if q["last_name"] == last and str(q["first_name"])[0] == first[0]) > 1:
            surface = f"{first} {last}"
        note.add(rng.choice(["Met with ", "Call with ", "Spoke to ", "Lunch with "]))
        note.mention(surface, "people", key)
        o = next(o for o in ORGS if o[0] == p["org_id"])
        note.add(" of ")
        short = rng.random() < 0.4 and o[2]
        note.mention(o[1] if short else org_name(o), "organisations", {"org_code": o[0]})
        note.add(("" if note.text.endswith(".") else ".") + " " + rng.choice(FILLER) + " ")
        kind = rng.random()
        if kind < 0.35:
            note.add(rng.choice(["Later ", "Afterwards "]))
            note.mention(last, "people", key)
            note.add(" asked for the draft again. ")
        elif kind < 0.55:
            note.add(rng.choice(["Mr. ", "Ms. ", "Dr. "]))
            note.mention(last, "people", key)
            note.add(" will send the figures. ")
        if rng.random() < 0.45:
            field, value = rng.choice([("email", f"{first[0].lower()}.{p['person_id']}@example.org"),
                                       ("birth year", p["birth_year"] or rng.randint(1960, 1999)),
                                       ("city", p["city"]), *[(f, rng.randint(30, 48) if f == "shoe size" else
                                                              rng.randint(1000, 9999)) for f in EXTRA_FACTS]])  # fmt: skip
            value = stated.setdefault((p["person_id"], str(field)), value)  # one value per person and field
            note.add("For the record, the " + str(field) + " of ")
            note.mention(f"{first} {last}", "people", key)
            note.add(f" is {value}. ")
            column = {"birth year": "birth_year"}.get(str(field), str(field))
            known = column in p and str(p[column]) != ""
            facts.append({"note": f"notes/note_{n:03d}.md", "key": key, "field": field, "value": value,
                          "in_table": known})  # fmt: skip
            if not known and not any(q["question"] == f"What is the {field} of {first} {last}?" for q in questions):
                questions.append({"question": f"What is the {field} of {first} {last}?", "answer": value,
                                  "source": f"notes/note_{n:03d}.md"})  # fmt: skip
    if rng.random() < 0.5:
        word = rng.choice(list(COMMON))
        note.add(f"Someone mentioned {COMMON[word]}. ")
    if rng.random() < 0.3:  # a surname-word at the start of a sentence, capitalised but nobody's name
        note.add(rng.choice(["Long meetings are tiring. ", "Young teams learn fast. ", "Field notes follow. "]))
    if rng.random() < 0.3:
        note.add(f"{rng.choice(OUTSIDERS)} may join next time. ")
    if rng.random() < 0.3:
        note.add(f"{rng.choice(FIRST)} sends regards. ")
    note.add("\n")
    return note


def main() -> None:
    rng = random.Random(SEED)
    drop = HERE / "drop"
    (drop / "notes").mkdir(parents=True, exist_ok=True)
    folks = people(rng)
    with (drop / "people.csv").open("w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=list(folks[0]))
        w.writeheader()
        w.writerows(folks)
    with (drop / "organisations.csv").open("w", newline="", encoding="utf-8") as f:
        w2 = csv.writer(f)
        w2.writerow(["org_code", "name", "country"])
        w2.writerows([o[0], org_name(o), o[3]] for o in ORGS)
    truth: dict[str, object] = {"seed": SEED, "mentions": {}, "facts": [], "questions": []}
    facts: list[dict[str, object]] = []
    questions: list[dict[str, object]] = []
    for old in (drop / "notes").glob("*.md"):
        old.unlink()
    for n in range(1, 61):  # 60 notes: a corpus (one source) at the scanner's 50-file threshold
        note = write_note(rng, folks, n, facts, questions)
        name = f"notes/note_{n:03d}.md"
        (drop / name).write_text(note.text, encoding="utf-8")
        truth["mentions"][name] = note.mentions  # type: ignore[index]
    truth["facts"], truth["questions"] = facts, questions
    (HERE / "truth.json").write_text(json.dumps(truth, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
