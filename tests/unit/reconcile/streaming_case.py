"""A three-source case for streaming entity resolution, shared by the embedded unit test and the stack test: Maria
Keller is in the CRM with her e-mail only and in billing with her phone only, so the two records stay apart until
a portal record with both arrives (it links them: one cluster) and go apart again when it is deleted."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

CRM = [
    {"contact_id": "C-1", "first_name": "María", "last_name": "Keller", "email": "maria.keller@mail.de", "phone": "",
     "city": "Berlin", "updated_at": "2023-01-10T09:00:00"},
    {"contact_id": "C-2", "first_name": "Jonas", "last_name": "Brandt", "email": "jonas.brandt@web.de",
     "phone": "+49 40 5550101", "city": "Hamburg", "updated_at": "2023-02-11T10:00:00"},
    {"contact_id": "C-3", "first_name": "Chloé", "last_name": "Dubois", "email": "chloe.dubois@orange.fr",
     "phone": "+33 1 55502020", "city": "Paris", "updated_at": "2022-05-01T11:30:00"},
    {"contact_id": "C-4", "first_name": "Lukas", "last_name": "Novák", "email": "lukas.novak@posteo.de",
     "phone": "+49 89 5550303", "city": "Munich", "updated_at": "2021-07-07T08:15:00"},
]  # fmt: skip
BILLING = [
    {"account_no": 501, "customer": "Keller, Maria", "email_address": None, "phone": "030 5550404",
     "city": "Munich", "last_modified": "2024-03-01"},
    {"account_no": 502, "customer": "Weber, Anna", "email_address": "anna.weber@gmail.com", "phone": "040 5550505",
     "city": "Hamburg", "last_modified": "2022-09-09"},
    {"account_no": 503, "customer": "Martin, Paul", "email_address": "paul.martin@example.com",
     "phone": "089 5550606", "city": "Munich", "last_modified": "2023-04-04"},
]  # fmt: skip
PORTAL = [
    {"user_id": "u2", "display_name": "Sofia Rossi", "email": "sofia.rossi@gmail.com", "mobile": "+4922155507070"},
    {"user_id": "u3", "display_name": "Tom Carter", "email": "tom.carter@outlook.com", "mobile": "+16175550808"},
    {"user_id": "u1", "display_name": "M. Keller", "email": "MARIA.KELLER@mail.de", "mobile": "+49305550404"},
]  # fmt: skip
"""The bridging record comes last: the file's other rows keep their places (and record ids) when it comes or goes."""
BRIDGE = ("portal_users", "u1")


def write_folder(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    with (root / "crm_contacts.csv").open("w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=list(CRM[0]))
        w.writeheader()
        w.writerows(CRM)
    (root / "billing_accounts.json").write_text(json.dumps(BILLING, ensure_ascii=False), "utf-8")
    with (root / "portal_users.csv").open("w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=list(PORTAL[0]))
        w.writeheader()
        w.writerows(PORTAL)
    return root


def push_lines(rows: list[dict[str, Any]]) -> str:
    return "".join(json.dumps({k: v for k, v in r.items() if v not in (None, "")}, ensure_ascii=False) + "\n"
                   for r in rows)  # fmt: skip
