"""A small bank and trade data set for question-answering tests, with abbreviated column names (acct_bal,
ext_price, ord_dt, ctry), a column name two types share (phone), accented names, countries and a tie at the top
of the account balances. Tests compute their expected answers from these rows."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

BRANCHES = [
    {"branch_no": 1, "branch_nm": "Harbour Street", "ctry": "United Kingdom"},
    {"branch_no": 2, "branch_nm": "Königsallee", "ctry": "Germany"},
    {"branch_no": 3, "branch_nm": "Rua Augusta", "ctry": "Portugal"},
]
CUSTOMERS = [
    {"cust_id": 10, "cust_name": "Amélie Durand", "phone": "+33 1 40 00 00 01", "branch_no": 1, "acct_bal": 1520.5},
    {"cust_id": 11, "cust_name": "Björn Larsson", "phone": "+46 8 000 00 02", "branch_no": 2, "acct_bal": 99.0},
    {"cust_id": 12, "cust_name": "Chidi Okafor", "phone": "+234 1 000 0003", "branch_no": 1, "acct_bal": 7300.25},
    {"cust_id": 13, "cust_name": "Dana Whitfield", "phone": "+1 212 555 0104", "branch_no": 3, "acct_bal": 7300.25},
    {"cust_id": 14, "cust_name": "Emeka Nwosu", "phone": "+234 1 000 0005", "branch_no": 3, "acct_bal": 45.75},
]
SUPPLIERS = [
    {"supp_id": 500, "supp_name": "Fjordline Paper", "phone": "+47 22 00 00 01", "ctry": "Norway"},
    {"supp_id": 501, "supp_name": "Garrison Inks", "phone": "+1 312 555 0190", "ctry": "United States"},
]
ORDERS = [
    {"ord_no": 9001, "cust_id": 10, "supp_id": 500, "qty": 3, "ext_price": 30.0, "ord_dt": "2023-01-15"},
    {"ord_no": 9002, "cust_id": 10, "supp_id": 501, "qty": 1, "ext_price": 12.5, "ord_dt": "2023-03-02"},
    {"ord_no": 9003, "cust_id": 11, "supp_id": 500, "qty": 10, "ext_price": 100.0, "ord_dt": "2023-03-20"},
    {"ord_no": 9004, "cust_id": 12, "supp_id": 501, "qty": 2, "ext_price": 25.0, "ord_dt": "2024-02-11"},
    {"ord_no": 9005, "cust_id": 12, "supp_id": 500, "qty": 4, "ext_price": 40.0, "ord_dt": "2024-06-30"},
    {"ord_no": 9006, "cust_id": 13, "supp_id": 501, "qty": 7, "ext_price": 70.0, "ord_dt": "2024-07-04"},
]


def _write_csv(path: Path, rows: list[dict[str, Any]]) -> None:
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)



def write(root: Path, tag: str = "") -> Path:
    """The four source files in ``root`` (names suffixed with ``_<tag>`` when a tag is given)."""
    suffix = f"_{tag}" if tag else ""
    root.mkdir(parents=True, exist_ok=True)
    _write_csv(root / f"branches{suffix}.csv", BRANCHES)
    _write_csv(root / f"customers{suffix}.csv", CUSTOMERS)
    (root / f"suppliers{suffix}.jsonl").write_text("\n".join(json.dumps(s) for s in SUPPLIERS) + "\n", encoding="utf-8")
    _write_csv(root / f"orders{suffix}.csv", ORDERS)
    return root
