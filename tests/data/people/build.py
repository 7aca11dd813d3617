"""Build tests/data/people: a deterministic multi-source pack about the same people (reconciliation, issue #16).

Run ``python tests/data/people/build.py`` (no dependency beyond the standard library; two runs give identical
bytes). The tests only read what it writes:

  drop/crm_contacts.csv        a CRM export: first/last name, email, phone (international format), city, updated_at
  drop/billing_accounts.json   billing: "Last, First" names, e-mails in any case, national phone numbers, the
                               balance in cents, last_modified
  drop/subscribers.jsonl       newsletter sign-ups: names in lower case or "LAST First", e-mail, city, signed_up
                               (a sign-up date, not an update time)
  drop/portal_users.csv        a self-service portal: initials or accent-free names, e-mail and mobile often
                               missing, the balance in dollars, profile_updated, last_login
  drop/support_tickets.csv     tickets that point at CRM contacts (contact_id)
  drop/account_review.md       a prose note that mentions some of the people
  truth.json                   which record is which person, in-source duplicates, planted conflicts
  questions.jsonl              questions with gold answers computed from the people below (not from ESC)

The people are the truth; every source shows a part of them in its own spelling, ids and formats. A planted
conflict gives one record of a person an older value of a field; the record holding the current value is the
most recent by its own update-time field (CRM ``updated_at``, billing ``last_modified``, portal
``profile_updated``); subscribers have no update time, so their value is never the current one when another
record disagrees.
"""

from __future__ import annotations

import json
import random
from datetime import date, datetime, timedelta

from records import (
    HERE,
    SEED,
    ascii_of,
    fmt_intl,
    memberships,
    people,
    plant_conflicts,
    render,
    tickets,
    write_files,
)
from records import records as make_records

# ------------------------------------------------------------------------------------------------ truth and questions

SOURCES = {"crm": "crm_contacts", "billing": "billing_accounts", "subs": "subscribers", "portal": "portal_users"}
FIELD_WORDS = {"city": "city", "phone": "phone number", "email": "email address", "balance": "balance"}


def shown(r: dict, field: str) -> object:
    """A record's value of ``field`` as its source writes it."""
    row = r["row"]
    col = {"crm": {"phone": "phone"}, "billing": {"email": "email_address", "balance": "balance_cents"},
           "portal": {"phone": "mobile", "balance": "account_balance"}}.get(r["source"], {}).get(field, field)  # fmt: skip
    v = row.get(col)
    return v / 100 if field == "balance" and r["source"] == "billing" and v is not None else v


def norm(field: str, v: object) -> object:
    if v is None:
        return None
    if field == "phone":
        digits = "".join(c for c in str(v) if c.isdigit())
        return digits[-9:]
    return str(v).casefold() if isinstance(v, str) else v


def current_shown(recs: list[dict], p: dict, field: str) -> object:
    """The current value as the newest record holding it writes it (a source without update time last)."""
    true = {"phone": p["phone"], "email": p["email"], "city": p["city"], "balance": p["balance"]}[field]
    want = norm(field, fmt_intl(true) if field == "phone" else true)  # type: ignore[arg-type]
    holders = [r for r in recs if r["pid"] == p["pid"] and norm(field, shown(r, field)) == want]
    holders.sort(key=lambda r: (r["time"] is not None, r["time"] or datetime.min), reverse=True)
    return shown(holders[0], field) if holders else None


def as_of(recs: list[dict], pid: int, field: str, when: date) -> object:
    dated = [r for r in recs if r["pid"] == pid and r["time"] is not None and shown(r, field) is not None]
    before = [r for r in dated if r["time"].date() <= when]
    return shown(max(before, key=lambda r: r["time"]), field) if before else None


def spelled(p: dict, style: int) -> str:
    full = f"{p['first']} {p['last']}"
    return [full, ascii_of(full), ascii_of(full).lower()][style % 3]


def crm_name(recs: list[dict], pid: int) -> str:
    mine = [r for r in recs if r["pid"] == pid and r["source"] == "crm"]
    r = max(mine, key=lambda r: r["time"])
    return f"{r['row']['first_name']} {r['row']['last_name']}"


def questions(rng: random.Random, ps: list[dict], recs: list[dict], tix: list[dict], conflicts: list[dict]) -> list[dict]:
    qs: list[dict] = []
    person = {p["pid"]: p for p in ps}
    has = {p["pid"]: set(p["in"]) for p in ps}

    def add(q: str, a: object, kind: str, cat: str, **extra: object) -> None:
        qs.append({"id": f"people-q{len(qs) + 1:03d}", "question": q, "answer": a, "kind": kind, "category": cat, **extra})

    conflicted = {(c["pid"], c["field"]) for c in conflicts}
    usable = [p for p in ps if p["pid"] not in (1, 7) and len(p["in"]) >= 2]
    picks = rng.sample(usable, len(usable))
    # cross-source lookups: the name as a user types it, the value from whichever source holds it
    templates = {"phone": "What is the phone number of {n}?", "email": "What is the email address of {n}?",
                 "city": "Which city does {n} live in?", "balance": "What is the balance of {n}?"}  # fmt: skip
    i = 0
    for field in ("phone", "email", "city", "balance"):
        chosen = [p for p in picks if (p["pid"], field) not in conflicted and current_shown(recs, p, field) is not None]
        for p in chosen[:3]:
            add(templates[field].format(n=spelled(p, i)), current_shown(recs, p, field), "lookup", "cross-source-lookup")
            i += 1
    # current value under conflict
    words = {"city": "Which city does {n} live in now?", "phone": "What is the current phone number of {n}?",
             "email": "What is the current email address of {n}?", "balance": "What is the current balance of {n}?"}  # fmt: skip
    for c in sorted(conflicts, key=lambda c: (c["field"], c["pid"]))[::2][:10]:
        p = person[c["pid"]]
        srcs = sorted({SOURCES[r["source"]] for r in c["holders"]})
        add(words[c["field"]].format(n=spelled(p, i)), current_shown(recs, p, c["field"]), "lookup", "conflict",
            conflict_field=c["field"], conflict_sources=srcs)
        i += 1
    # sums over people (each person's current balance once)
    def bal(pred) -> float:  # type: ignore[no-untyped-def]
        return round(sum(p["balance"] for p in ps if pred(p) and any(x in p["in"] for x in ("billing", "portal"))), 2)

    add("What is the total balance of all billing accounts?", bal(lambda p: "billing" in has[p["pid"]]), "aggregate", "cross-source-sum")
    city = ps[1]["city"]
    add(f"What is the total balance of the contacts in {city}?", bal(lambda p: "crm" in has[p["pid"]] and p["city"] == city), "aggregate", "cross-source-sum")
    add("What is the total balance of all subscribers?", bal(lambda p: "subs" in has[p["pid"]]), "aggregate", "cross-source-sum")
    portal = [p["balance"] for p in ps if "portal" in has[p["pid"]]]
    add("What is the average balance of the portal users?", round(sum(portal) / len(portal), 2), "aggregate", "cross-source-sum")
    # distinct counts: people, not rows
    add("How many contacts are there?", sum("crm" in has[p["pid"]] for p in ps), "count", "distinct-count")
    add("How many billing accounts are there?", sum("billing" in has[p["pid"]] for p in ps), "count", "distinct-count")
    add("How many portal users are there?", sum("portal" in has[p["pid"]] for p in ps), "count", "distinct-count")
    add(f"How many contacts live in {city}?", sum("crm" in has[p["pid"]] and p["city"] == city for p in ps), "count", "distinct-count")
    other = ps[2]["city"] if ps[2]["city"] != city else "Paris"
    add(f"How many subscribers live in {other}?", sum("subs" in has[p["pid"]] and p["city"] == other for p in ps), "count", "distinct-count")
    add("How many different cities do the contacts live in?", len({p["city"] for p in ps if "crm" in has[p["pid"]]}), "count", "distinct-count")
    add(f"How many contacts are named {ps[0]['first']} {ps[0]['last']}?", 2, "count", "distinct-count")
    # latest / earliest
    crm = [r for r in recs if r["source"] == "crm"]
    newest = max(crm, key=lambda r: r["time"])
    add("Which contact was updated most recently?", crm_name(recs, newest["pid"]), "superlative", "latest")
    add("When was the most recent support ticket opened?", max(t["opened_at"] for t in tix), "aggregate", "latest")
    add("When was the earliest support ticket opened?", min(t["opened_at"] for t in tix), "aggregate", "latest")
    loggers = [r for r in recs if r["source"] == "portal" and r["pid"] not in (1, 7)]
    r = loggers[len(loggers) // 2]
    add(f"When did {spelled(person[r['pid']], 1)} last log in?", r["row"]["last_login"], "lookup", "latest")
    # time filters
    add("How many support tickets were opened in 2023?", sum(t["opened_at"].startswith("2023") for t in tix), "count", "time")
    add("How many support tickets were opened after June 2023?", sum(t["opened_at"] > "2023-06-30" for t in tix), "count", "time")
    add("How many support tickets were opened before 2023?", sum(t["opened_at"] < "2023-01-01" for t in tix), "count", "time")
    subs = [r for r in recs if r["source"] == "subs"]
    add("How many subscribers signed up before 2022?", len({r["pid"] for r in subs if r["row"]["signed_up"] < "2022-01-01"}), "count", "time")
    # as of a date: the value the records held then
    dated = [c for c in conflicts if c["stale"]["time"] is not None]
    for c in dated[:3]:
        p = person[c["pid"]]
        when = (c["stale"]["time"] + timedelta(days=1)).date()
        q = f"What was the {FIELD_WORDS[c['field']]} of {spelled(p, i)} as of {when.isoformat()}?"
        add(q, as_of(recs, p["pid"], c["field"], when), "lookup", "as-of", conflict_field=c["field"])
        i += 1
    # tickets of a person whose CRM record is duplicated: the tickets hang off both records
    for pid in (3, 5, 11, 19, 26):
        n = sum(t["pid"] == pid for t in tix)
        if n and len({t["contact_id"] for t in tix if t["pid"] == pid}) > 1:
            add(f"How many support tickets has {spelled(person[pid], 0)} opened?", n, "count", "cross-source-traverse")
    pid = next(p["pid"] for p in picks if sum(t["pid"] == p["pid"] and t["status"] == "open" for t in tix) >= 1)
    add(f"How many open support tickets does {spelled(person[pid], 1)} have?",
        sum(t["pid"] == pid and t["status"] == "open" for t in tix), "count", "cross-source-traverse")
    # people who do not exist
    for name, field in (("Zoltan Nobody", "phone number"), ("Petra Unbekannt", "email address"),
                        ("Igor Nonexistent", "balance"), ("Hans Niemand", "city")):  # fmt: skip
        add(f"What is the {field} of {name}?", None, "abstain", "abstain", abstain=True)
    add("How many support tickets has Olga Fictional opened?", None, "abstain", "abstain", abstain=True)
    return qs


def truth(ps: list[dict], recs: list[dict], conflicts: list[dict]) -> dict:
    rec_map: dict[str, dict[str, int]] = {v: {} for v in SOURCES.values()}
    for r in recs:
        rec_map[SOURCES[r["source"]]][str(r["key"])] = r["pid"]
    dups = []
    for p in ps:
        for src in ("crm", "billing"):
            keys = sorted(str(r["key"]) for r in recs if r["pid"] == p["pid"] and r["source"] == src)
            if len(keys) > 1:
                dups.append({"source": SOURCES[src], "pid": p["pid"], "keys": keys})
    out_conflicts = []
    for c in conflicts:
        p = next(x for x in ps if x["pid"] == c["pid"])
        values = [{"source": SOURCES[r["source"]], "key": str(r["key"]), "value": shown(r, c["field"]),
                   "as_of": r["time"].isoformat(timespec="seconds") if r["time"] else None}
                  for r in c["holders"]]  # fmt: skip
        out_conflicts.append({"pid": c["pid"], "field": c["field"], "values": values,
                              "current": current_shown(recs, p, c["field"])})  # fmt: skip
    return {
        "people": [{"pid": p["pid"], "name": f"{p['first']} {p['last']}", "city": p["city"], "email": p["email"],
                    "phone": fmt_intl(p["phone"]), "balance": p["balance"], "sources": [SOURCES[s] for s in p["in"]]}
                   for p in ps],
        "records": rec_map,
        "duplicates": dups,
        "conflicts": out_conflicts,
        "units": {"billing_accounts.balance_cents": "cents", "portal_users.account_balance": "dollars"},
    }


def note_text(ps: list[dict]) -> str:
    a, b, c = ps[1], ps[8], ps[11]
    return (
        "# Account review, spring 2024\n\n"
        f"During the quarterly review we called {a['first']} {a['last']}, who confirmed living in {a['city']} and "
        f"asked us to keep the newsletter. {b['first']} {b['last']} wrote in about a disputed charge; the balance "
        f"on file after the correction is {b['balance']:.2f} dollars.\n\n"
        f"{c['first']} {c['last']} has accounts in the CRM, in billing and on the portal under slightly different "
        "spellings of the name; the records describe one customer.\n"
    )


def main() -> None:
    rng = random.Random(SEED)
    ps = people(rng)
    memberships(rng, ps)
    recs = make_records(rng, ps)
    conflicts = plant_conflicts(rng, ps, recs)
    rows = render(rng, ps, recs)
    tix = tickets(rng, recs)
    write_files(rows, tix, note_text(ps))
    (HERE / "truth.json").write_text(json.dumps(truth(ps, recs, conflicts), ensure_ascii=False, indent=1) + "\n", "utf-8")
    qs = questions(rng, ps, recs, tix, conflicts)
    (HERE / "questions.jsonl").write_text("".join(json.dumps(q, ensure_ascii=False) + "\n" for q in qs), "utf-8")
    print(f"{sum(len(v) for v in rows.values())} records about {len(ps)} people, {len(conflicts)} conflicts, "
          f"{len(tix)} tickets, {len(qs)} questions")  # fmt: skip


if __name__ == "__main__":
    main()
