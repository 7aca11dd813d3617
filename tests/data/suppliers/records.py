"""Suppliers, their records in each source, planted conflicts and purchase orders (used by build.py)."""

from __future__ import annotations

import csv
import io
import json
import random
import unicodedata
from datetime import date, datetime, timedelta
from pathlib import Path

HERE = Path(__file__).resolve().parent
DROP = HERE / "drop"
SEED = 2024
N_SUPPLIERS = 40

ROOTS = ["Müller", "Lefèvre", "Hartmann", "Okafor", "Lindgren", "Brightwater", "Nordstern", "Castillo", "Weber",
         "Dupont", "Ashford", "Kowalczyk", "Riverside", "Fontaine", "Greenfield", "Vogel", "Marlow", "Sørensen",
         "Bianchi", "Halvorsen", "Ironbridge", "Kessler", "Moreau", "Oakridge", "Petrov", "Quill", "Redstone",
         "Silverline", "Thornton", "Underwood"]  # fmt: skip
TRADES = ["Logistics", "Foods", "Metals", "Textiles", "Plastics", "Electronics", "Paper", "Chemicals", "Tools",
          "Packaging", "Glass", "Timber"]  # fmt: skip
PLACES = {"DE": ("49", "de", ["GmbH", "AG"], [("Stuttgart", "711"), ("Hamburg", "40"), ("Berlin", "30")]),
          "FR": ("33", "fr", ["SA", "SAS"], [("Lyon", "4"), ("Lille", "3")]),
          "GB": ("44", "co.uk", ["Ltd", "PLC"], [("Leeds", "113"), ("Bristol", "117")]),
          "US": ("1", "com", ["Inc", "LLC"], [("Austin", "512"), ("Chicago", "312")]),
          "NL": ("31", "nl", ["BV", "NV"], [("Utrecht", "30"), ("Eindhoven", "40")])}  # fmt: skip
MAILBOXES = ["sales", "orders", "info", "contact", "office"]


def ascii_of(s: str) -> str:
    return "".join(c for c in unicodedata.normalize("NFKD", s.replace("ø", "o")) if not unicodedata.combining(c))


def day(rng: random.Random, lo: date = date(2021, 6, 1), span: int = 1000) -> date:
    return lo + timedelta(days=rng.randrange(span))


def moment(rng: random.Random, lo: date = date(2021, 6, 1), span: int = 1000) -> datetime:
    base = datetime.combine(day(rng, lo, span), datetime.min.time())
    return base + timedelta(minutes=rng.randrange(7 * 60, 19 * 60), seconds=rng.randrange(60))


def phone(rng: random.Random, country: str, area: str) -> tuple[str, str, str]:
    digits = 8 if country == "FR" else 7
    return PLACES[country][0], area, str(rng.randrange(2, 10)) + "".join(str(rng.randrange(10)) for _ in range(digits - 1))


def fmt_intl(p: tuple[str, str, str]) -> str:
    return f"+{p[0]} {p[1]} {p[2]}"


def fmt_national(p: tuple[str, str, str]) -> str:
    if p[0] == "1":
        return f"({p[1]}) {p[2][:3]}-{p[2][3:]}"
    return f"0{p[1]} {p[2]}"


def suppliers(rng: random.Random) -> list[dict]:
    out: list[dict] = []
    used: set[tuple[str, str]] = set()
    for sid in range(1, N_SUPPLIERS + 1):
        country = rng.choice(["DE", "DE", "FR", "GB", "US", "NL"])
        while True:
            root, trade = rng.choice(ROOTS), rng.choice(TRADES)
            if (root, trade) not in used and root not in {r for r, _ in used if len(used) < 20}:
                break
        used.add((root, trade))
        _code, tld, forms, cities = PLACES[country]
        city, area = rng.choice(cities)
        slug = f"{ascii_of(root)}-{trade}".lower()
        out.append({
            "sid": sid, "root": root, "trade": trade, "legal": rng.choice(forms), "country": country, "city": city,
            "area": area, "email": f"{rng.choice(MAILBOXES)}@{slug}.{tld}", "phone": phone(rng, country, area),
            "balance": round(rng.uniform(100, 60000), 2), "credit": rng.choice([10, 25, 50, 75, 100, 150]) * 1000,
            "rating": rng.randrange(1, 6), "onboarded": f"{rng.randrange(2018, 2024)}-{rng.randrange(1, 13):02d}",
        })  # fmt: skip
    return out


def full_name(s: dict) -> str:
    return f"{s['root']} {s['trade']} {s['legal']}"


def memberships(rng: random.Random, ss: list[dict]) -> None:
    for s in ss:
        while True:
            s["in"] = {x for x, pr in (("erp", 0.9), ("proc", 0.7), ("portal", 0.6)) if rng.random() < pr}
            if len(s["in"]) >= 2 or rng.random() < 0.2:
                break
        s["in"] = sorted(s["in"] or {"erp"})
    for sid in (3, 8, 15, 22):  # two ERP vendor records for one supplier
        ss[sid - 1]["in"] = sorted(set(ss[sid - 1]["in"]) | {"erp", "proc"})
        ss[sid - 1]["erp_dup"] = True
    for sid in (5, 12):  # in every source
        ss[sid - 1]["in"] = ["erp", "portal", "proc"]
    ss[16]["in"] = ["portal", "proc"]  # a supplier the ERP does not know


def records(rng: random.Random, ss: list[dict]) -> list[dict]:
    """Abstract records: source, supplier, update time (None: the source has none), values in true form."""
    out: list[dict] = []
    for s in ss:
        for src in s["in"]:
            for k in range(2 if src == "erp" and s.get("erp_dup") else 1):
                vals = {"email": s["email"], "phone": s["phone"], "city": s["city"], "balance": s["balance"]}
                t = moment(rng) if src != "portal" else None
                r = {"source": src, "sid": s["sid"], "time": t, "vals": vals, "dup": k == 1, "missing": set()}
                if src == "erp" and k == 1:
                    r["missing"].add("phone" if rng.random() < 0.5 else "email")
                if src == "proc" and rng.random() < 0.2:
                    r["missing"].add("email")
                if src == "portal":
                    del vals["phone"], vals["balance"]
                out.append(r)
    return out


def old_value(rng: random.Random, s: dict, field: str) -> object:
    if field == "city":
        return rng.choice([c for c, _ in PLACES[s["country"]][3] if c != s["city"]])
    if field == "phone":
        return phone(rng, s["country"], s["area"])
    if field == "email":
        return s["email"].replace(s["email"].split("@")[0], rng.choice([m for m in MAILBOXES if not s["email"].startswith(m)]))
    return round(s["balance"] + rng.choice([-1, 1]) * rng.uniform(200, 5000), 2)


def plant_conflicts(rng: random.Random, ss: list[dict], recs: list[dict], want: int = 16) -> list[dict]:
    """Give one dated record of a supplier an older value of one field; every record stays linkable."""
    by_sid: dict[int, list[dict]] = {}
    for r in recs:
        by_sid.setdefault(r["sid"], []).append(r)
    order = list(ss)
    rng.shuffle(order)
    conflicts: list[dict] = []
    for s in order:
        if len(conflicts) >= want:
            break
        rs = by_sid[s["sid"]]
        options = []
        for field in ("city", "phone", "email", "balance"):
            holders = [r for r in rs if field in r["vals"] and field not in r["missing"]]
            dated = [r for r in holders if r["time"] is not None]
            other = "phone" if field == "email" else "email"
            stale = [r for r in dated if field not in ("email", "phone") or (other in r["vals"] and other not in r["missing"])]
            if len(holders) >= 2 and len(dated) >= 2 and stale:
                options.append((field, holders, stale))
        if not options:
            continue
        field, holders, stale = rng.choice(options)
        st = rng.choice(stale)
        newest = max((r for r in holders if r is not st and r["time"] is not None), key=lambda r: r["time"])
        if st["time"] >= newest["time"]:
            st["time"], newest["time"] = newest["time"] - timedelta(days=150 + rng.randrange(300)), newest["time"]
        st["vals"][field] = old_value(rng, s, field)
        conflicts.append({"sid": s["sid"], "field": field, "stale": st, "holders": holders})
    return conflicts


def drop_legal(name: str) -> str:
    return name.rsplit(" ", 1)[0]


def render(rng: random.Random, ss: list[dict], recs: list[dict]) -> dict[str, list[dict]]:
    """Source rows in each source's own spelling; each abstract record gets ``key`` (its id) and ``row``."""
    sup = {s["sid"]: s for s in ss}
    rows: dict[str, list[dict]] = {"erp": [], "proc": [], "portal": []}
    for r in sorted(recs, key=lambda r: (r["source"], rng.random())):
        s, v, miss = sup[r["sid"]], r["vals"], r["missing"]

        def get(f: str, v: dict = v, miss: set = miss) -> object:
            return None if f in miss else v.get(f)

        n = len(rows[r["source"]])
        ph = get("phone")
        if r["source"] == "erp":
            r["key"] = f"V-{2001 + n}"
            name = full_name(s)
            if r["dup"]:
                name = drop_legal(name) if rng.random() < 0.5 else ascii_of(name)
            row = {"vendor_id": r["key"], "vendor_name": name, "email": get("email"),
                   "phone": fmt_intl(ph) if ph else None, "city": get("city"), "country": s["country"],
                   "credit_limit": s["credit"], "balance": get("balance"), "changed_on": r["time"].date().isoformat()}  # fmt: skip
        elif r["source"] == "proc":
            r["key"] = 7001 + n
            x = rng.random()
            name = ascii_of(full_name(s)).upper() if x < 0.35 else drop_legal(full_name(s)) if x < 0.7 else ascii_of(full_name(s))
            email = get("email")
            if isinstance(email, str) and rng.random() < 0.3:
                email = email.upper()
            bal = get("balance")
            row = {"supplier_key": r["key"], "supplier": name, "contact_email": email,
                   "tel": fmt_national(ph) if ph else None, "town": get("city"),
                   "outstanding_balance": round(bal * 100) if isinstance(bal, float) else None,
                   "onboarded": s["onboarded"], "revised_at": r["time"].isoformat(sep=" ", timespec="seconds")}  # fmt: skip
        else:
            r["key"] = f"acct-{301 + n}"
            reg = day(rng, date(2021, 1, 1), 900)
            seen = datetime.combine(reg, datetime.min.time()) + timedelta(days=rng.randrange(30, 700), minutes=rng.randrange(1440))
            row = {"account": r["key"], "company": drop_legal(full_name(s)) if rng.random() < 0.6 else full_name(s),
                   "login_email": get("email"), "city": get("city"), "rating": s["rating"],
                   "registered_on": reg.isoformat(), "last_seen": seen.isoformat(timespec="seconds")}  # fmt: skip
        r["row"] = row
        rows[r["source"]].append(row)
    return rows


def purchase_orders(rng: random.Random, recs: list[dict]) -> list[dict]:
    out: list[dict] = []
    erp = sorted((r for r in recs if r["source"] == "erp"), key=lambda r: r["key"])
    for r in erp:
        for _ in range(rng.choice([0, 1, 1, 2, 3, 4])):
            ordered = day(rng, date(2022, 1, 1), 800)
            status = rng.choice(["open", "delivered", "delivered", "delivered", "cancelled"])
            delivered = None
            if status == "delivered":
                delivered = datetime.combine(ordered, datetime.min.time()) + timedelta(
                    days=rng.randrange(2, 40), minutes=rng.randrange(6 * 60, 20 * 60))
            out.append({"vendor_id": r["key"], "sid": r["sid"], "ordered_on": ordered.isoformat(),
                        "delivered_at": delivered.isoformat(timespec="seconds") if delivered else None,
                        "status": status, "amount": round(rng.uniform(50, 9000), 2)})  # fmt: skip
    rng.shuffle(out)
    for i, po in enumerate(out):
        po["po_number"] = f"PO-{10001 + i}"
    return out


def write_files(rows: dict[str, list[dict]], pos: list[dict]) -> None:
    DROP.mkdir(parents=True, exist_ok=True)

    def csv_text(records: list[dict], cols: list[str]) -> str:
        buf = io.StringIO()
        w = csv.DictWriter(buf, fieldnames=cols, lineterminator="\n")
        w.writeheader()
        for rec in records:
            w.writerow({c: ("" if rec.get(c) is None else rec[c]) for c in cols})
        return buf.getvalue()

    (DROP / "erp_vendors.csv").write_text(csv_text(rows["erp"], list(rows["erp"][0])), "utf-8")
    (DROP / "procurement_suppliers.json").write_text(json.dumps(rows["proc"], ensure_ascii=False, indent=1) + "\n", "utf-8")
    (DROP / "vendor_portal_accounts.csv").write_text(csv_text(rows["portal"], list(rows["portal"][0])), "utf-8")
    cols = ["po_number", "vendor_id", "ordered_on", "delivered_at", "status", "amount"]
    (DROP / "purchase_orders.csv").write_text(csv_text(sorted(pos, key=lambda p: p["po_number"]), cols), "utf-8")
