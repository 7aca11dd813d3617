"""Build tests/data/suppliers: a deterministic multi-source pack about the same organisations (a second test set for
reconciliation, time questions and units, written before the resolver was tuned to it; issue #16).

Run ``python tests/data/suppliers/build.py`` (standard library only; two runs give identical bytes). Files:

  drop/erp_vendors.csv              the ERP vendor master: full legal names, e-mail, international phone, city,
                                    country, credit_limit, balance (dollars), changed_on (a date)
  drop/procurement_suppliers.json   procurement: names upper case or without the legal form, contact_email,
                                    national phone (tel), town, outstanding_balance (in CENTS; no unit word in
                                    the header), onboarded (a year-month string), revised_at (a datetime)
  drop/vendor_portal_accounts.csv   a supplier portal: company (often without the legal form), login_email,
                                    city, rating, registered_on, last_seen (no update time)
  drop/purchase_orders.csv          orders that point at ERP vendor ids (vendor_id), ordered_on, delivered_at,
                                    status (open / delivered / cancelled), amount (dollars)
  truth.json                        which record is which supplier, in-source duplicates, planted conflicts
  questions.jsonl                   questions with gold answers computed from the suppliers (not from ESC)

Current-value rule the gold follows: the value of the most recent record by its own update-time field (ERP
``changed_on``, procurement ``revised_at``); the portal has none, so its value is never the current one when a dated
record disagrees. Balances in dollars; phone numbers and e-mails as the record holding the current value writes them.
"""

from __future__ import annotations

import json
import random
from datetime import datetime, timedelta

from records import (
    HERE,
    SEED,
    ascii_of,
    drop_legal,
    fmt_intl,
    full_name,
    memberships,
    plant_conflicts,
    purchase_orders,
    render,
    suppliers,
    write_files,
)
from records import records as make_records

SOURCES = {"erp": "erp_vendors", "proc": "procurement_suppliers", "portal": "vendor_portal_accounts"}
FIELD_WORDS = {"city": "city", "phone": "phone number", "email": "email address", "balance": "balance"}
COLUMNS = {"erp": {}, "proc": {"email": "contact_email", "phone": "tel", "city": "town", "balance": "outstanding_balance"},
           "portal": {"email": "login_email"}}  # fmt: skip


def shown(r: dict, field: str) -> object:
    """A record's value of ``field`` as its source writes it (balances in dollars)."""
    v = r["row"].get(COLUMNS[r["source"]].get(field, field))
    return v / 100 if field == "balance" and r["source"] == "proc" and v is not None else v


def norm(field: str, v: object) -> object:
    if v is None:
        return None
    if field == "phone":
        return "".join(c for c in str(v) if c.isdigit())[-7:]
    return str(v).casefold() if isinstance(v, str) else v


def current_shown(recs: list[dict], s: dict, field: str) -> object:
    """The current value as the newest record holding it writes it (a source without update time last)."""
    true = {"phone": fmt_intl(s["phone"]), "email": s["email"], "city": s["city"], "balance": s["balance"]}[field]
    holders = [r for r in recs if r["sid"] == s["sid"] and norm(field, shown(r, field)) == norm(field, true)]
    holders.sort(key=lambda r: (r["time"] is not None, r["time"] or datetime.min), reverse=True)
    return shown(holders[0], field) if holders else None


def as_of(recs: list[dict], sid: int, field: str, when: datetime) -> object:
    dated = [r for r in recs if r["sid"] == sid and r["time"] is not None and shown(r, field) is not None]
    before = [r for r in dated if r["time"].date() <= when.date()]
    return shown(max(before, key=lambda r: r["time"]), field) if before else None


def spelled(s: dict, style: int) -> str:
    """A supplier's name as a user may type it: with or without the legal form, accents or case."""
    return [full_name(s), drop_legal(full_name(s)), ascii_of(drop_legal(full_name(s))).lower()][style % 3]


def questions(rng: random.Random, ss: list[dict], recs: list[dict], pos: list[dict], conflicts: list[dict]) -> list[dict]:
    qs: list[dict] = []
    sup = {s["sid"]: s for s in ss}
    has = {s["sid"]: set(s["in"]) for s in ss}

    def add(q: str, a: object, kind: str, cat: str, **extra: object) -> None:
        qs.append({"id": f"suppliers-q{len(qs) + 1:03d}", "question": q, "answer": a, "kind": kind, "category": cat, **extra})

    conflicted = {(c["sid"], c["field"]) for c in conflicts}
    picks = rng.sample([s for s in ss if len(s["in"]) >= 2], len([s for s in ss if len(s["in"]) >= 2]))
    templates = {"phone": "What is the phone number of {n}?", "email": "What is the email address of {n}?",
                 "city": "In which city is {n} located?", "balance": "What is the balance of {n}?"}  # fmt: skip
    i = 0
    for field in ("phone", "email", "city", "balance"):
        chosen = [s for s in picks if (s["sid"], field) not in conflicted and current_shown(recs, s, field) is not None]
        for s in chosen[:2]:
            add(templates[field].format(n=spelled(s, i)), current_shown(recs, s, field), "lookup", "cross-source-lookup")
            i += 1
    only_proc = [s for s in picks if "erp" not in s["in"] and "proc" in s["in"] and (s["sid"], "balance") not in conflicted]
    for s in only_proc[:1]:
        add(f"What is the balance of {spelled(s, 0)}?", current_shown(recs, s, "balance"), "lookup", "unit")
    portal_only_attr = [s for s in picks if "portal" in s["in"] and "erp" in s["in"]]
    s = portal_only_attr[0]
    add(f"What is the rating of {spelled(s, 0)}?", s["rating"], "lookup", "cross-source-lookup")
    s = next(s for s in picks if "erp" in s["in"] and not s.get("erp_dup"))
    add(f"What is the credit limit of {spelled(s, 1)}?", s["credit"], "lookup", "cross-source-lookup")
    # current value under conflict
    words = {"city": "In which city is {n} located now?", "phone": "What is the current phone number of {n}?",
             "email": "What is the current email address of {n}?", "balance": "What is the current balance of {n}?"}  # fmt: skip
    for c in sorted(conflicts, key=lambda c: (c["field"], c["sid"]))[::2][:7]:
        s = sup[c["sid"]]
        srcs = sorted({SOURCES[r["source"]] for r in c["holders"]})
        add(words[c["field"]].format(n=spelled(s, i)), current_shown(recs, s, c["field"]), "lookup", "conflict",
            conflict_field=c["field"], conflict_sources=srcs)
        i += 1
    # sums and counts over suppliers (each supplier once, its current balance in dollars)
    def bal(pred) -> float:  # type: ignore[no-untyped-def]
        return round(sum(s["balance"] for s in ss if pred(s) and {"erp", "proc"} & has[s["sid"]]), 2)

    add("What is the total balance of all ERP vendors?", bal(lambda s: "erp" in has[s["sid"]]), "aggregate", "cross-source-sum")
    add("What is the total balance of all vendor portal accounts?", bal(lambda s: "portal" in has[s["sid"]]), "aggregate", "cross-source-sum")
    city = ss[0]["city"]
    add(f"What is the total balance of the ERP vendors in {city}?", bal(lambda s: "erp" in has[s["sid"]] and s["city"] == city), "aggregate", "cross-source-sum")
    open_sids = {p["sid"] for p in pos if p["status"] == "open"}
    add("What is the total balance of the ERP vendors with open purchase orders?", bal(lambda s: s["sid"] in open_sids), "aggregate", "cross-source-sum")
    erp = [s for s in ss if "erp" in has[s["sid"]]]
    add("What is the average credit limit of the ERP vendors?", round(sum(s["credit"] for s in erp) / len(erp), 2), "aggregate", "cross-source-sum")
    add("How many ERP vendors are there?", len(erp), "count", "distinct-count")
    add("How many procurement suppliers are there?", sum("proc" in has[s["sid"]] for s in ss), "count", "distinct-count")
    add(f"How many ERP vendors are located in {city}?", sum(s["city"] == city for s in erp), "count", "distinct-count")
    add("How many purchase orders are there?", len(pos), "count", "distinct-count")
    # latest / earliest over dates and datetimes
    erp_recs = [r for r in recs if r["source"] == "erp"]
    newest = max(erp_recs, key=lambda r: r["time"].date())
    if sum(r["time"].date() == newest["time"].date() for r in erp_recs) == 1:
        add("Which ERP vendor was changed most recently?", full_name(sup[newest["sid"]]), "superlative", "latest")
    add("When was the most recent purchase order placed?", max(p["ordered_on"] for p in pos), "aggregate", "latest")
    add("When was the earliest purchase order delivered?", min(p["delivered_at"] for p in pos if p["delivered_at"]), "aggregate", "latest")
    portal = [r for r in recs if r["source"] == "portal"]
    first = min(portal, key=lambda r: r["row"]["registered_on"])
    if sum(r["row"]["registered_on"] == first["row"]["registered_on"] for r in portal) == 1:
        add("Which vendor portal account was registered first?", full_name(sup[first["sid"]]), "superlative", "latest")
    r = portal[len(portal) // 2]
    add(f"When was {spelled(sup[r['sid']], 0)} last seen on the vendor portal?", r["row"]["last_seen"], "lookup", "latest")
    # time filters: a date, a datetime and a year-month string
    add("How many purchase orders were delivered in 2023?", sum(bool(p["delivered_at"]) and p["delivered_at"].startswith("2023") for p in pos), "count", "time")
    add("How many purchase orders were placed before April 2023?", sum(p["ordered_on"] < "2023-04-01" for p in pos), "count", "time")
    add("How many purchase orders were placed after September 2023?", sum(p["ordered_on"] > "2023-09-30" for p in pos), "count", "time")
    add("How many vendor portal accounts were registered in 2022?", sum(r["row"]["registered_on"].startswith("2022") for r in portal), "count", "time")
    proc = [s for s in ss if "proc" in has[s["sid"]]]
    add("How many procurement suppliers were onboarded before 2021?", sum(s["onboarded"] < "2021" for s in proc), "count", "time")
    add("How many procurement suppliers were onboarded in 2022?", sum(s["onboarded"].startswith("2022") for s in proc), "count", "time")
    # as of a date: the value the records held then
    for c in [c for c in conflicts if c["field"] in ("email", "city", "phone")][:3]:
        s = sup[c["sid"]]
        when = c["stale"]["time"] + timedelta(days=1)
        q = f"What was the {FIELD_WORDS[c['field']]} of {spelled(s, i)} as of {when.date().isoformat()}?"
        add(q, as_of(recs, s["sid"], c["field"], when), "lookup", "as-of", conflict_field=c["field"])
        i += 1
    # orders of a supplier, through every ERP record it has
    for sid in (3, 8, 15, 22):
        n = sum(p["sid"] == sid for p in pos)
        if n and len({p["vendor_id"] for p in pos if p["sid"] == sid}) > 1:
            add(f"How many purchase orders does {spelled(sup[sid], 1)} have?", n, "count", "cross-source-traverse")
    sid = next(s["sid"] for s in picks if sum(p["sid"] == s["sid"] and p["status"] == "open" for p in pos) >= 1)
    add(f"How many open purchase orders does {spelled(sup[sid], 0)} have?",
        sum(p["sid"] == sid and p["status"] == "open" for p in pos), "count", "cross-source-traverse")
    add("How many cancelled purchase orders are there?", sum(p["status"] == "cancelled" for p in pos), "count", "time")
    # suppliers that do not exist
    for name, field in (("Zephyr Widgets Ltd", "phone number"), ("Phantom Foods GmbH", "email address"),
                        ("Imaginary Metals Inc", "balance")):  # fmt: skip
        add(f"What is the {field} of {name}?", None, "abstain", "abstain", abstain=True)
    add("How many purchase orders does Nowhere Textiles BV have?", None, "abstain", "abstain", abstain=True)
    return qs


def truth(ss: list[dict], recs: list[dict], conflicts: list[dict]) -> dict:
    rec_map: dict[str, dict[str, int]] = {v: {} for v in SOURCES.values()}
    for r in recs:
        rec_map[SOURCES[r["source"]]][str(r["key"])] = r["sid"]
    dups = []
    for s in ss:
        keys = sorted(str(r["key"]) for r in recs if r["sid"] == s["sid"] and r["source"] == "erp")
        if len(keys) > 1:
            dups.append({"source": "erp_vendors", "pid": s["sid"], "keys": keys})
    out_conflicts = []
    for c in conflicts:
        s = next(x for x in ss if x["sid"] == c["sid"])
        values = [{"source": SOURCES[r["source"]], "key": str(r["key"]), "value": shown(r, c["field"]),
                   "as_of": r["time"].isoformat(timespec="seconds") if r["time"] else None}
                  for r in c["holders"]]  # fmt: skip
        out_conflicts.append({"pid": c["sid"], "field": c["field"], "values": values,
                              "current": current_shown(recs, s, c["field"])})  # fmt: skip
    return {
        "people": [{"pid": s["sid"], "name": full_name(s), "city": s["city"], "email": s["email"],
                    "phone": fmt_intl(s["phone"]), "balance": s["balance"], "sources": [SOURCES[x] for x in s["in"]]}
                   for s in ss],
        "records": rec_map,
        "duplicates": dups,
        "conflicts": out_conflicts,
        "units": {"procurement_suppliers.outstanding_balance": "cents", "erp_vendors.balance": "dollars"},
    }


def main() -> None:
    rng = random.Random(SEED)
    ss = suppliers(rng)
    memberships(rng, ss)
    recs = make_records(rng, ss)
    conflicts = plant_conflicts(rng, ss, recs)
    rows = render(rng, ss, recs)
    pos = purchase_orders(rng, recs)
    write_files(rows, pos)
    (HERE / "truth.json").write_text(json.dumps(truth(ss, recs, conflicts), ensure_ascii=False, indent=1) + "\n", "utf-8")
    qs = questions(rng, ss, recs, pos, conflicts)
    (HERE / "questions.jsonl").write_text("".join(json.dumps(q, ensure_ascii=False) + "\n" for q in qs), "utf-8")
    print(f"{sum(len(v) for v in rows.values())} records about {len(ss)} suppliers, {len(conflicts)} conflicts, "
          f"{len(pos)} purchase orders, {len(qs)} questions")  # fmt: skip


if __name__ == "__main__":
    main()
