"""Foreign keys: name evidence + containment + key target; dangling references under a strong name, text codes by their values; inclusion dependencies of numbers without names are not FKs."""

from __future__ import annotations

from typing import Any

from esc.contract.fk_match import fk_match, fold_key
from esc.contract.foreign_keys import name_evidence
from esc.contract.inference import infer
from esc.contract.profile import SourceProfile


def contract_of(tables: dict[str, list[dict[str, Any]]]) -> Any:
    return infer({n: SourceProfile.of_rows(n, rows) for n, rows in tables.items()})


def sigs(c: Any) -> set[tuple[str, tuple[str, ...], str, tuple[str, ...]]]:
    return {fk.signature() for fk in c.foreign_keys}


def test_name_evidence_rules() -> None:
    assert name_evidence("AlbumId", "", "Album", "AlbumId", "") == (1.0, "same_name")
    assert name_evidence("o_custkey", "o_", "customer", "c_custkey", "c_")[1] == "same_name_after_prefix"
    assert name_evidence("manager_staff_id", "", "staff", "staff_id", "")[1] == "role_prefix"
    assert name_evidence("ShipVia", "", "Shippers", "ShipperID", "")[1] == "names_target"
    assert name_evidence("SupportRepId", "", "Employee", "EmployeeId", "")[1] == "person_role"
    assert name_evidence("ReportsTo", "", "Employees", "EmployeeID", "")[1] == "person_role"
    assert name_evidence("rental_duration", "", "rental", "rental_id", "") is None
    assert name_evidence("Quantity", "", "Genre", "GenreId", "") is None
    assert name_evidence("SupportRepId", "", "MediaType", "MediaTypeId", "") is None


def _music() -> dict[str, list[dict[str, Any]]]:
    return {
        "Genre": [{"GenreId": i, "Name": f"g{i}"} for i in range(1, 26)],
        "MediaType": [{"MediaTypeId": i, "Name": f"m{i}"} for i in range(1, 6)],
        "Employee": [
            {"EmployeeId": i, "LastName": f"e{i}", "ReportsTo": None if i == 1 else 1} for i in range(1, 9)
        ],
        "Customer": [{"CustomerId": i, "SupportRepId": 3 + i % 3, "Country": "X"} for i in range(1, 60)],
        "Track": [
            {
                "TrackId": i,
                "GenreId": 1 + i % 25,
                "MediaTypeId": 1 + i % 5,
                "Quantity": 1 + i % 3,
                "Bytes": i * 1000,
            }
            for i in range(1, 300)
        ],
    }


def test_same_name_role_and_self_references_without_inclusion_noise() -> None:
    c = contract_of(_music())
    assert sigs(c) == {
        ("Track", ("GenreId",), "Genre", ("GenreId",)),
        ("Track", ("MediaTypeId",), "MediaType", ("MediaTypeId",)),
        ("Customer", ("SupportRepId",), "Employee", ("EmployeeId",)),
        ("Employee", ("ReportsTo",), "Employee", ("EmployeeId",)),
    }
    fk = next(f for f in c.foreign_keys if f.from_.fields == ["GenreId"])
    assert fk.evidence["containment"] == 1.0 and fk.evidence["containment_exact"] and fk.confidence > 0.9


def test_no_fk_when_values_are_not_contained() -> None:
    t = _music()
    t["Track"].extend(
        {"TrackId": 1000 + i, "GenreId": 100 + i, "MediaTypeId": 1, "Quantity": 1, "Bytes": 0}
        for i in range(20)  # 25 of 45 genre ids exist: a coincidence of names, not a reference
    )
    assert ("Track", ("GenreId",), "Genre", ("GenreId",)) not in sigs(contract_of(t))


def test_dangling_references_are_kept_with_their_share() -> None:
    t = _music()
    t["Track"].extend(
        {"TrackId": 1000 + i, "GenreId": 100 + i, "MediaTypeId": 1, "Quantity": 1, "Bytes": 0}
        for i in range(3)  # 3 genres deleted from the parent table: 25 of 28 ids still resolve
    )
    c = contract_of(t)
    fk = next(f for f in c.foreign_keys if f.from_.fields == ["GenreId"])
    assert fk.to.source == "Genre" and fk.evidence["containment"] == round(25 / 28, 4)
    assert (
        fk.confidence
        < next(f for f in contract_of(_music()).foreign_keys if f.from_.fields == ["GenreId"]).confidence
    )


def test_codes_named_unlike_their_target_are_found_by_their_values() -> None:
    codes = [f"{a}{b}{c}" for a in "ABC" for b in "DEFG" for c in "HIJ"]  # 36 airport-like codes
    t = {
        "airports": [{"faa": code, "name": f"Airport {code}", "alt": i} for i, code in enumerate(codes)],
        "flights": [
            {"flight_id": i, "origin": codes[i % 3], "dest": codes[3 + i % 30], "seats": 100 + i % 7}
            for i in range(1, 200)
        ],
    }
    got = sigs(contract_of(t))
    assert ("flights", ("origin",), "airports", ("faa",)) in got
    assert ("flights", ("dest",), "airports", ("faa",)) in got
    assert not any(s[1] == ("seats",) or s[1] == ("flight_id",) for s in got)  # numbers never by values alone


def test_prefix_style_and_composite_foreign_keys() -> None:
    part = [{"p_partkey": i, "p_name": f"p{i}"} for i in range(1, 41)]
    supp = [{"s_suppkey": i, "s_name": f"s{i}"} for i in range(1, 11)]
    ps = [
        {"ps_partkey": p, "ps_suppkey": 1 + (p + j) % 10, "ps_cost": 1.5}
        for p in range(1, 41)
        for j in range(3)
    ]
    orders = [{"o_orderkey": i, "o_total": 2.5} for i in range(1, 30)]
    li = []
    for o in range(1, 30):
        for n in range(1, 1 + o % 4 + 1):
            row = ps[(o * 5 + n) % len(ps)]
            li.append(
                {
                    "l_orderkey": o,
                    "l_partkey": row["ps_partkey"],
                    "l_suppkey": row["ps_suppkey"],
                    "l_linenumber": n,
                }
            )
    c = contract_of({"part": part, "supplier": supp, "partsupp": ps, "orders": orders, "lineitem": li})
    assert c.sources["partsupp"].identity_key == ["ps_partkey", "ps_suppkey"]
    assert c.sources["lineitem"].identity_key == ["l_orderkey", "l_linenumber"]
    assert sigs(c) == {
        ("partsupp", ("ps_partkey",), "part", ("p_partkey",)),
        ("partsupp", ("ps_suppkey",), "supplier", ("s_suppkey",)),
        ("lineitem", ("l_orderkey",), "orders", ("o_orderkey",)),
        ("lineitem", ("l_partkey",), "part", ("p_partkey",)),
        ("lineitem", ("l_suppkey",), "supplier", ("s_suppkey",)),
        ("lineitem", ("l_partkey", "l_suppkey"), "partsupp", ("ps_partkey", "ps_suppkey")),
    }


def test_composite_fk_needs_names_for_every_column() -> None:
    orders = [{"OrderID": i, "Freight": 1.0} for i in range(1, 20)]
    products = [{"ProductID": i, "Name": f"p{i}"} for i in range(1, 10)]
    details = [
        {"OrderID": o, "ProductID": 1 + (o + j) % 9, "Quantity": j} for o in range(1, 20) for j in range(2)
    ]
    other = [{"ReturnID": i, "OrderID": 1 + i % 19, "ProductID": 1 + i % 9} for i in range(1, 15)]
    c = contract_of({"Orders": orders, "Products": products, "Details": details, "Returns": other})
    assert c.sources["Details"].identity_key == ["OrderID", "ProductID"]
    # Returns names both columns of Details' key, but its pairs are not contained in Details: no composite FK
    assert {s for s in sigs(c) if len(s[1]) > 1} == set()
    assert ("Returns", ("OrderID",), "Orders", ("OrderID",)) in sigs(c)
    assert ("Details", ("ProductID",), "Products", ("ProductID",)) in sigs(c)


def test_ambiguous_targets_give_no_fk() -> None:
    a = [{"code_id": i, "x": 1} for i in range(1, 10)]
    b = [{"code_id": i, "y": 2} for i in range(1, 10)]
    child = [{"child_id": i, "code_id": 1 + i % 9} for i in range(30)]
    c = contract_of({"a_things": a, "b_things": b, "child": child})
    assert not {s for s in sigs(c) if s[0] == "child"}


def test_integer_references_renamed_unlike_their_target_are_found_by_their_spread() -> None:
    t = {
        "album": [{"album_id": i, "title": f"a{i}"} for i in range(1, 301)],
        "genre": [{"genre_id": i, "label": f"g{i}"} for i in range(1, 41)],
        "song": [
            {
                "song_id": i,
                "maple": 1 + (i * 37) % 300,  # -> album: spread over 1..300
                "cedar": 1 + (i * 11) % 40,  # -> genre: the tightest key holding all of it
                "length": 120 + i % 90,  # a dense block inside 1..300: a measure, not a reference
                "year": 1990 + i % 30,
            }
            for i in range(1, 1201)
        ],
    }
    c = contract_of(t)
    got = sigs(c)
    assert ("song", ("maple",), "album", ("album_id",)) in got
    assert ("song", ("cedar",), "genre", ("genre_id",)) in got
    assert not any(s[1] in (("length",), ("year",), ("song_id",)) for s in got)
    fk = next(f for f in c.foreign_keys if f.from_.fields == ["maple"])
    assert fk.evidence["name"] == "values_only" and fk.confidence < 0.6


def test_values_alone_never_choose_between_equal_targets_nor_point_at_their_own_table() -> None:
    t = {
        "a": [{"a_id": i, "x": f"x{i}"} for i in range(1, 51)],
        "b": [{"b_id": i, "y": f"y{i}"} for i in range(1, 51)],
        "c": [{"c_id": i, "ref": 1 + (i * 7) % 50} for i in range(1, 101)],
    }
    assert not any(s[1] == ("ref",) for s in sigs(contract_of(t)))


def test_codes_in_another_case_are_matched_case_insensitively() -> None:
    codes = [f"{a}{b}{c}" for a in "ABCD" for b in "EFGH" for c in "IJK"]
    t = {
        "customers": [{"CustomerID": c, "name": f"n {c}"} for c in codes],
        "orders": [{"OrderID": i, "CustomerID": codes[i % 40].lower()} for i in range(1, 200)],
    }
    c = contract_of(t)
    fk = next(f for f in c.foreign_keys if f.from_.source == "orders")
    assert fk.to.source == "customers" and fk.evidence["case_insensitive"] is True
    assert fk.evidence["match"] == "casefold"  # writers join on it (esc.contract.fk_match)
    assert fk_match(fk) == "casefold"
    assert fold_key({"CustomerID": " aeI ", "n": 3}) == {"CustomerID": "AEI", "n": 3}


def test_a_strong_name_tolerates_one_missing_parent_among_few_references() -> None:
    t = {
        "address": [{"address_id": i, "street": f"s{i}"} for i in range(1, 40) if i != 4],
        "store": [{"store_id": 1, "address_id": 3}, {"store_id": 2, "address_id": 4}],
    }
    fk = next(f for f in contract_of(t).foreign_keys if f.from_.source == "store")
    assert fk.to.source == "address" and fk.evidence["containment"] == 0.5
