"""The Cypher statements of the Neo4j store's entity writes (``agents/stores/neo4j.py``): rows grouped by entity
type with the edges folded into their entity's statement, and the statement text of a group. Labels, keys and
relationship types from data are escaped with ``ident``; values travel as parameters."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from esc.agents.stores.cypher import ident, to_properties
from esc.agents.types import EdgeWrite, EntityWrite, build

DERIVED_FROM = "DERIVED_FROM"

EdgeSig = tuple[bool, str, str, tuple[str, ...]]
"""An edge kind folded into an entity statement: (outgoing from the entity, type, other label, other key names)."""
FIRST_TOGETHER = 10
FIRST_ROWS = 500
"""The first statement of up to FIRST_TOGETHER new entity types of at most FIRST_ROWS rows each goes to Neo4j as one
statement (a ``CALL () { ... }`` per type): every new label is a statement text the server has to plan, and one
statement for ten of them cost ~26 ms of planning per type against ~39 ms alone (measured, clean schema). A type's
later statements are its own, planned once and cached (a combination would be a new text every time)."""
MAX_FOLDED = 16
"""Edge kinds folded into one entity statement at most (a source has a few FKs and one parent); more go apart."""
Group = tuple[list[EdgeSig], list[dict[str, Any]]]


def node_key(label: str, key: dict[str, Any]) -> tuple[Any, ...] | None:
    node = (label, tuple(sorted(key.items())))
    try:
        hash(node)
    except TypeError:
        return None
    return node


def fold(entities: Sequence[EntityWrite], edges: Sequence[EdgeWrite]) -> tuple[dict[tuple[str, tuple[str, ...]], Group], list[EdgeWrite]]:
    """Statement parameters per (label, key names): each row's entity, provenance and, for every edge kind of
    the group, the other end's key values (or null); plus the edges that touch no entity of the batch."""
    at: dict[tuple[Any, ...], int] = {}
    same: dict[tuple[str, int], int] = {}  # (label, id of a key dict): the planner gives an entity's edges its key
    for i, row in enumerate(entities):
        node = node_key(row.label, row.key)
        if node is not None:
            same[(row.label, id(row.key))] = at.setdefault(node, i)  # a node written twice: edges go with the first row
    attached: dict[int, list[tuple[EdgeSig, list[Any]]]] = defaultdict(list)
    rest: list[EdgeWrite] = []
    for e in edges:
        hit = same.get((e.from_label, id(e.from_key)))
        if hit is None:
            hit = at.get(node_key(e.from_label, e.from_key) or ())
        if hit is not None and entities[hit].contract_version == e.contract_version:
            attached[hit].append(((True, e.type, e.to_label, tuple(e.to_key)), list(e.to_key.values())))
            continue
        hit = at.get(node_key(e.to_label, e.to_key) or ())
        if hit is not None and entities[hit].contract_version == e.contract_version:
            attached[hit].append(((False, e.type, e.from_label, tuple(e.from_key)), list(e.from_key.values())))
            continue
        rest.append(e)
    sigs: dict[tuple[str, tuple[str, ...]], dict[EdgeSig, int]] = defaultdict(dict)
    for i, pairs in attached.items():
        known = sigs[(entities[i].label, tuple(entities[i].key))]
        for sig, _ in pairs:
            if sig not in known and len(known) < MAX_FOLDED:
                known[sig] = len(known)
    groups: dict[tuple[str, tuple[str, ...]], Group] = {}
    for i, row in enumerate(entities):
        key_names = tuple(row.key)
        gkey = (row.label, key_names)
        known = sigs.get(gkey, {})
        if gkey not in groups:
            groups[gkey] = (list(known), [])
        slots: list[Any] = [None] * len(known)
        for sig, values in attached.get(i, ()):
            j = known.get(sig)
            if j is None or slots[j] is not None:  # beyond MAX_FOLDED, or a second edge of one kind: apart
                rest.append(edge_of(row, sig, values))
            else:
                slots[j] = values
        groups[gkey][1].append(
            {
                "key": [row.key[k] for k in key_names],
                "props": to_properties(row.properties),
                "sid": row.provenance.sid,
                "source": row.provenance.source,
                "record_id": row.provenance.record_id,
                "location": row.provenance.location,
                "file": row.provenance.file,
                "v": row.contract_version,
                "e": slots,
            }
        )
    return groups, rest


def edge_of(row: EntityWrite, sig: EdgeSig, values: list[Any]) -> EdgeWrite:
    outgoing, rtype, other, other_key = sig
    there = dict(zip(other_key, values, strict=True))
    ends = (row.label, row.key, other, there) if outgoing else (other, there, row.label, row.key)
    return build(
        EdgeWrite,
        type=rtype, from_label=ends[0], from_key=ends[1], to_label=ends[2], to_key=ends[3],
        contract_version=row.contract_version,
    )


First = tuple[tuple[str, tuple[str, ...]], list[dict[str, Any]]]
"""A new entity type's first rows: ((label, key names), rows)."""


def packed(first: list[First], max_rows: int) -> list[list[First]]:
    """New types' first rows in statements of at most FIRST_TOGETHER types and ``max_rows`` rows, in order."""
    out: list[list[First]] = []
    rows = 0
    for item in first:
        if not out or len(out[-1]) >= FIRST_TOGETHER or rows + len(item[1]) > max_rows:
            out.append([])
            rows = 0
        out[-1].append(item)
        rows += len(item[1])
    return out


def entity_query(
    label: str, key_names: tuple[str, ...], sigs: Sequence[EdgeSig], source_record: str, param: str = "rows"
) -> str:
    merge_map = ", ".join(f"{ident(k)}: row.key[{i}]" for i, k in enumerate(key_names))
    parts = [
        f"UNWIND ${param} AS row "
        f"MERGE (s:{ident(source_record)} {{sid: row.sid}}) "
        "SET s.source = row.source, s.record_id = row.record_id, s.location = row.location, s.file = row.file "
        f"MERGE (n:{ident(label)} {{{merge_map}}}) "
        "SET n += row.props, n._contract_version = row.v, n._stub = null "
        f"MERGE (n)-[:{DERIVED_FROM}]->(s)"
    ]
    for j, (outgoing, rtype, other, other_key) in enumerate(sigs):
        other_map = ", ".join(f"{ident(k)}: t[{i}]" for i, k in enumerate(other_key))
        rel = f"(n)-[r{j}:{ident(rtype)}]->(o{j})" if outgoing else f"(o{j})-[r{j}:{ident(rtype)}]->(n)"
        parts.append(
            f"FOREACH (t IN CASE WHEN row.e[{j}] IS NULL THEN [] ELSE [row.e[{j}]] END | "
            f"MERGE (o{j}:{ident(other)} {{{other_map}}}) ON CREATE SET o{j}._stub = true "
            f"MERGE {rel} SET r{j}._contract_version = row.v)"
        )
    return " ".join(parts)


def create_query(source_record: str) -> str:
    """The first rows of new entity types whose uniqueness constraint this store has just created (so no node of
    the type can exist yet): ``CREATE`` under a label given as a parameter (``$(row.label)``, Neo4j 5.26), one
    statement text for every type. A per-type ``MERGE`` is a new text the server plans for each new label (~26-39
    ms of server CPU); this one is planned once. The constraint is what keeps it safe: a node that exists after all
    (another worker, a stub) makes the statement fail as a whole and the caller MERGEs instead."""
    return (
        "UNWIND $rows AS row "
        f"MERGE (s:{ident(source_record)} {{sid: row.sid}}) "
        "SET s.source = row.source, s.record_id = row.record_id, s.location = row.location, s.file = row.file "
        "CREATE (n:$(row.label)) SET n += row.kp, n += row.props, n._contract_version = row.v "
        f"CREATE (n)-[:{DERIVED_FROM}]->(s)"
    )


def creatable(key_names: tuple[str, ...], rows: list[dict[str, Any]]) -> bool:
    """Whether rows of a new type can be CREATEd: no row folds an edge, every key value is a value (a null or NaN
    key is MERGE's to refuse), and no two rows share a key (``1`` and ``1.0`` are one key, as for Neo4j)."""
    seen: set[tuple[Any, ...]] = set()
    for row in rows:
        if any(e is not None for e in row["e"]) or len(row["key"]) != len(key_names):
            return False
        if any(v is None or v != v for v in row["key"]):
            return False
        try:
            key = tuple(row["key"])
            if key in seen:
                return False
            seen.add(key)
        except TypeError:
            return False
    return True


def create_rows(label: str, key_names: tuple[str, ...], rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``create_query``'s parameters for one type: each row with its stored label and its key as a map."""
    return [{**row, "label": label, "kp": dict(zip(key_names, row["key"], strict=True))} for row in rows]
