"""People, their records in each source, planted conflicts and tickets (used by build.py)."""

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
SEED = 16
N_PEOPLE = 48

FIRST = ["María", "José", "François", "Zoë", "Jürgen", "Anna", "Lukas", "Sophie", "Émile", "Hélène", "Björn",
         "Renée", "Thomas", "Laura", "Felix", "Clara", "Noah", "Mia", "Paul", "Lena", "Chloé", "Inès", "Sébastien",
         "Günter", "Oskar", "Marta", "Jonas", "Elif", "David", "Nora"]  # fmt: skip
LAST = ["Keller", "Müller", "Schäfer", "Núñez", "Dubois", "Lefèvre", "Öztürk", "García", "Weiß", "Brandt",
        "Hoffmann", "Martin", "Bernard", "Kowalski", "Nowak", "Fischer", "Wagner", "Becker", "Laurent", "Moreau",
        "Rossi", "Costa", "Novák", "Jensen", "Lindqvist", "Horvat", "Petrović", "Ferreira", "Dumont", "Carter"]  # fmt: skip
CITIES = {"DE": [("Berlin", "30"), ("Hamburg", "40"), ("Munich", "89"), ("Cologne", "221")],
          "FR": [("Paris", "1"), ("Lyon", "4")], "US": [("Boston", "617"), ("Denver", "303")]}  # fmt: skip
CODES = {"DE": "49", "FR": "33", "US": "1"}
DOMAINS = ["mail.de", "web.de", "posteo.de", "orange.fr", "gmail.com", "example.com", "outlook.com"]
SUBJECTS = ["Invoice question", "Password reset", "Address change", "Refund request", "Login problem",
            "Cancel subscription", "Wrong amount charged", "Update phone number"]  # fmt: skip


def ascii_of(s: str) -> str:
    return "".join(c for c in unicodedata.normalize("NFKD", s.replace("ß", "ss")) if not unicodedata.combining(c))


def day(rng: random.Random, lo: date = date(2021, 1, 1), span: int = 1270) -> date:
    return lo + timedelta(days=rng.randrange(span))


def phone_parts(rng: random.Random, country: str, area: str) -> tuple[str, str, str]:
    """(country code, area, subscriber number)."""
    return CODES[country], area, "".join(str(rng.randrange(10)) for _ in range(7 if country != "FR" else 8))


def fmt_intl(p: tuple[str, str, str]) -> str:
    return f"+{p[0]} {p[1]} {p[2]}"


def fmt_national(p: tuple[str, str, str]) -> str:
    if p[0] == "1":
        return f"({p[1]}) {p[2][:3]}-{p[2][3:]}"
    return f"0{p[1]} {p[2]}"


def fmt_compact(p: tuple[str, str, str]) -> str:
    return f"+{p[0]}{p[1]}{p[2]}"


def people(rng: random.Random) -> list[dict]:
    out: list[dict] = []
    used: set[tuple[str, str]] = set()
    for pid in range(1, N_PEOPLE + 1):
        country = rng.choice(["DE", "DE", "DE", "FR", "US"])
        while True:
            first, last = rng.choice(FIRST), rng.choice(LAST)
            if (first, last) not in used:
                break
        if pid == 7:  # a namesake of person 1: same name, another person
            first, last = out[0]["first"], out[0]["last"]
        if pid == 8:  # a sibling of person 2: same family name and city
            last, country = out[1]["last"], out[1]["country"]
        used.add((first, last))
        city, area = rng.choice(CITIES[country])
        if pid == 8:
            city, area = out[1]["city"], out[1]["area"]
        local = f"{ascii_of(first)}.{ascii_of(last)}".lower() + ("2" if pid == 7 else "")
        out.append({
            "pid": pid, "first": first, "last": last, "country": country, "city": city, "area": area,
            "email": f"{local}@{rng.choice(DOMAINS)}", "phone": phone_parts(rng, country, area),
            "balance": round(rng.uniform(0, 2000), 2),
        })  # fmt: skip
    return out


def memberships(rng: random.Random, ps: list[dict]) -> None:
    for p in ps:
        while True:
            p["in"] = {s for s, pr in (("crm", 0.85), ("billing", 0.7), ("subs", 0.6), ("portal", 0.6)) if rng.random() < pr}
            if len(p["in"]) >= 2 or rng.random() < 0.15:
                break
        p["in"] = sorted(p["in"] or {"crm"})
    for pid in (1, 7):
        ps[pid - 1]["in"] = sorted(set(ps[pid - 1]["in"]) | {"crm"})
    for pid in (3, 5, 11, 19, 26):  # in-source duplicates in the CRM
        ps[pid - 1]["in"] = sorted(set(ps[pid - 1]["in"]) | {"crm"})
        ps[pid - 1]["crm_dup"] = True
    for pid in (4, 14, 29):  # two billing accounts
        ps[pid - 1]["in"] = sorted(set(ps[pid - 1]["in"]) | {"billing"})
        ps[pid - 1]["billing_dup"] = True
    for pid in (2, 9, 12):  # everywhere
        ps[pid - 1]["in"] = ["billing", "crm", "portal", "subs"]


# ------------------------------------------------------------------------------------------------ records


def records(rng: random.Random, ps: list[dict]) -> list[dict]:
    """Abstract records: source, person, update time (None: the source has none), values in true form."""
    out: list[dict] = []
    for p in ps:
        for src in p["in"]:
            copies = 2 if p.get(f"{src}_dup") else 1
            for k in range(copies):
                dated = src != "subs"
                t = datetime.combine(day(rng), datetime.min.time()) + timedelta(minutes=rng.randrange(8 * 60, 18 * 60))
                vals = {"email": p["email"], "phone": p["phone"], "city": p["city"], "balance": p["balance"]}
                r = {"source": src, "pid": p["pid"], "time": t if dated else None, "vals": vals, "dup": k == 1,
                     "missing": set()}  # fmt: skip
                if src == "crm":
                    del vals["balance"]
                    if k == 1:
                        r["missing"].add("phone" if rng.random() < 0.5 else "email")
                    elif rng.random() < 0.05:
                        r["missing"].add("city")
                elif src == "billing":
                    del vals["city"]
                    x = rng.random()
                    r["missing"] |= {"email"} if x < 0.15 else {"phone"} if x < 0.25 else set()
                elif src == "subs":
                    del vals["phone"], vals["balance"]
                elif src == "portal":
                    del vals["city"]
                    x = rng.random()
                    r["missing"] |= {"email"} if x < 0.3 else {"phone"} if x < 0.55 else set()
                out.append(r)
    return out


def old_value(rng: random.Random, p: dict, field: str) -> object:
    if field == "city":
        return rng.choice([c for c, _ in CITIES[p["country"]] if c != p["city"]])
    if field == "phone":
        return phone_parts(rng, p["country"], p["area"])
    if field == "email":
        return f"{ascii_of(p['first'])[0]}{ascii_of(p['last'])}".lower() + f"@{rng.choice(DOMAINS)}"
    return round(p["balance"] + rng.choice([-1, 1]) * rng.uniform(20, 400), 2)


def plant_conflicts(rng: random.Random, ps: list[dict], recs: list[dict], want: int = 24) -> list[dict]:
    """Give one record of a person an older value of one field; keep every record linkable by another field."""
    by_pid: dict[int, list[dict]] = {}
    for r in recs:
        by_pid.setdefault(r["pid"], []).append(r)
    order = [p for p in ps if p["pid"] not in (1, 7)]
    rng.shuffle(order)
    conflicts: list[dict] = []
    for p in order:
        if len(conflicts) >= want:
            break
        rs = by_pid[p["pid"]]
        options = []
        for field in ("city", "phone", "email", "balance"):
            holders = [r for r in rs if field in r["vals"] and field not in r["missing"]]
            dated = [r for r in holders if r["time"] is not None]
            if len(holders) < 2 or not dated:
                continue
            other = "phone" if field == "email" else "email"
            stale = [r for r in holders if not (field in ("email", "phone") and r["source"] == "subs")]
            stale = [r for r in stale if field not in ("email", "phone") or other in r["vals"]]
            if len(stale) >= 1 and len(holders) >= 2:
                options.append((field, holders, stale))
        if not options:
            continue
        field, holders, stale = rng.choice(options)
        s = rng.choice(stale)
        newest = max((r for r in holders if r is not s and r["time"] is not None), key=lambda r: r["time"], default=None)
        if newest is None:
            continue
        if s["time"] is not None and s["time"] >= newest["time"]:
            s["time"], newest["time"] = newest["time"] - timedelta(days=200 + rng.randrange(300)), newest["time"]
        if field in ("email", "phone"):
            s["missing"].discard("phone" if field == "email" else "email")
        s["vals"][field] = old_value(rng, p, field)
        conflicts.append({"pid": p["pid"], "field": field, "stale": s, "holders": holders})
    return conflicts


def typo(rng: random.Random, s: str) -> str:
    i = rng.randrange(1, len(s) - 1)
    return s[:i] + s[i + 1 :]


def render(rng: random.Random, ps: list[dict], recs: list[dict]) -> dict[str, list[dict]]:
    """Source rows in each source's own spelling; each abstract record gets ``key`` (its id) and ``row``."""
    person = {p["pid"]: p for p in ps}
    rows: dict[str, list[dict]] = {"crm": [], "billing": [], "subs": [], "portal": []}
    for r in sorted(recs, key=lambda r: (r["source"], rng.random())):
        p, v, miss = person[r["pid"]], r["vals"], r["missing"]
        first, last = p["first"], p["last"]

        def get(f: str, v: dict = v, miss: set = miss) -> object:
            return None if f in miss else v.get(f)

        n = len(rows[r["source"]])
        if r["source"] == "crm":
            r["key"] = f"C-{1001 + n}"
            if r["dup"]:
                first, last = (ascii_of(first), last) if rng.random() < 0.5 else (first, typo(rng, last))
            email = get("email")
            if r["dup"] and isinstance(email, str) and rng.random() < 0.5:
                email = email.upper()
            ph = get("phone")
            row = {"contact_id": r["key"], "first_name": first, "last_name": last, "email": email,
                   "phone": fmt_intl(ph) if ph else None, "city": get("city"), "country": p["country"],
                   "updated_at": r["time"].isoformat(timespec="seconds")}  # fmt: skip
        elif r["source"] == "billing":
            r["key"] = 50001 + n
            f, la = (ascii_of(first), ascii_of(last)) if rng.random() < 0.5 else (first, last)
            name = f"{la}, {f}"
            email = get("email")
            if isinstance(email, str) and rng.random() < 0.3:
                email = email.upper()
            ph = get("phone")
            bal = get("balance")
            row = {"account_no": r["key"], "customer": name.upper() if rng.random() < 0.15 else name,
                   "email_address": email, "phone": fmt_national(ph) if ph else None,
                   "balance_cents": round(bal * 100) if isinstance(bal, float) else None,
                   "last_modified": r["time"].date().isoformat()}  # fmt: skip
        elif r["source"] == "subs":
            r["key"] = "S-" + "".join(rng.choice("0123456789abcdef") for _ in range(6))
            x = rng.random()
            name = f"{first} {last}".lower() if x < 0.5 else f"{last.upper()} {first}" if x < 0.8 else ascii_of(f"{first} {last}")
            row = {"sub_id": r["key"], "name": name, "email": get("email"), "city": get("city"),
                   "signed_up": day(rng, date(2020, 3, 1), 1500).isoformat()}  # fmt: skip
        else:
            r["key"] = f"u{70001 + n}"
            name = f"{first[0]}. {last}" if rng.random() < 0.5 else ascii_of(f"{first} {last}")
            ph = get("phone")
            bal = get("balance")
            row = {"user_id": r["key"], "display_name": name, "email": get("email"),
                   "mobile": fmt_compact(ph) if ph else None, "account_balance": bal,
                   "profile_updated": r["time"].date().isoformat(),
                   "last_login": (r["time"] + timedelta(days=rng.randrange(1, 90), minutes=rng.randrange(600))).isoformat(timespec="seconds")}  # fmt: skip
        r["row"] = row
        rows[r["source"]].append(row)
    return rows


def tickets(rng: random.Random, recs: list[dict]) -> list[dict]:
    out: list[dict] = []
    crm = sorted((r for r in recs if r["source"] == "crm"), key=lambda r: r["key"])
    for r in crm:
        for _ in range(rng.choice([0, 0, 1, 1, 2, 3])):
            out.append({"contact_id": r["key"], "pid": r["pid"], "opened_at": day(rng, date(2022, 1, 1), 900).isoformat(),
                        "subject": rng.choice(SUBJECTS), "status": rng.choice(["open", "closed", "closed"]),
                        "minutes_spent": rng.randrange(5, 240)})  # fmt: skip
    rng.shuffle(out)
    for i, t in enumerate(out):
        t["ticket_id"] = f"T-{i + 1:05d}"
    return out


def write_files(rows: dict[str, list[dict]], tix: list[dict], note: str) -> None:
    DROP.mkdir(parents=True, exist_ok=True)

    def csv_text(records: list[dict], cols: list[str]) -> str:
        buf = io.StringIO()
        w = csv.DictWriter(buf, fieldnames=cols, lineterminator="\n")
        w.writeheader()
        for rec in records:
            w.writerow({c: ("" if rec.get(c) is None else rec[c]) for c in cols})
        return buf.getvalue()

    (DROP / "crm_contacts.csv").write_text(csv_text(rows["crm"], list(rows["crm"][0])), "utf-8")
    (DROP / "billing_accounts.json").write_text(json.dumps(rows["billing"], ensure_ascii=False, indent=1) + "\n", "utf-8")
    (DROP / "subscribers.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows["subs"]), "utf-8")
    (DROP / "portal_users.csv").write_text(csv_text(rows["portal"], list(rows["portal"][0])), "utf-8")
    cols = ["ticket_id", "contact_id", "opened_at", "subject", "status", "minutes_spent"]
    (DROP / "support_tickets.csv").write_text(csv_text(sorted(tix, key=lambda t: t["ticket_id"]), cols), "utf-8")
    (DROP / "account_review.md").write_text(note, "utf-8")
