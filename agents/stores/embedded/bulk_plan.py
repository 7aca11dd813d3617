"""Planning a whole table of one CSV source for the embedded graph store (issue 15.3, the columnar path).

What ``agents.extractors.plan`` decides per envelope, decided here per row of an Arrow table, with the same
functions on the values (``coerce``, ``coerce_lenient``, ``fold_key``, ``to_properties``, the store's endpoint ids)
but without building an envelope, an ``EntityWrite`` or an ``EdgeWrite`` per record: each column is converted
to Python once and each distinct value coerced once. The rows come out as :class:`BulkRows` for
``bulk.write_bulk``. Rows whose identity key is null or does not coerce are returned by index: the caller sends
them through the record path, which dead-letters them with its own reasons.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import pyarrow as pa

from esc.agents.coerce import CoercionError, coerce, coerce_lenient
from esc.agents.extract_compiled import SourcePlan
from esc.agents.extractors import RECORD_KEY
from esc.agents.stores.cypher import to_properties
from esc.agents.stores.embedded.bulk import BulkRows
from esc.agents.stores.embedded.ids import EndpointMemo, _dumps, _finite
from esc.agents.types import EntityWrite, SourceRecordRef, build
from esc.contract.fk_match import fold_key

_BAD = object()


def _coerced(values: list[Any], type_: str, strict: bool) -> list[Any]:
    """Each value coerced, once per distinct value (``strict``: a value that does not fit is ``_BAD``)."""
    memo: dict[Any, Any] = {}
    out: list[Any] = []
    for v in values:
        if v is None:
            out.append(None)
            continue
        hit = memo.get(v, memo)
        if hit is memo:
            if strict:
                try:
                    hit = coerce(v, type_)
                except CoercionError:
                    hit = _BAD
            else:
                hit = coerce_lenient(v, type_)
            memo[v] = hit
        out.append(hit)
    return out


def plan_rows(
    sp: SourcePlan,
    table: pa.Table | dict[str, list[Any]],
    source: str,
    ids: Sequence[str],
    locations: Sequence[str],
    file: str,
    file_hash: str,
    version: int,
    endpoints: EndpointMemo,
    rows: BulkRows,
    entities: list[EntityWrite] | None = None,
) -> list[int]:
    """Add the table's entities, provenance and edges to ``rows`` (and, when ``entities`` is given, each entity
    as the record path's ``EntityWrite`` for entity resolution); returns the rows the record path must take."""
    if isinstance(table, dict):  # the columns as Python lists already
        raw, n = table, len(ids)
    else:
        raw, n = {c: table.column(c).to_pylist() for c in table.schema.names}, table.num_rows
    none = [None] * n
    attrs = [(a, _coerced(raw.get(a, none), t, False)) for a, t in sp.attributes]
    key_cols = [(k, _coerced(raw.get(k, none), t, True)) for k, t in sp.key]
    fks = [(fk, [(to, _coerced(raw.get(frm, none), t, True)) for frm, to, t in fk.pairs]) for fk in sp.fks]
    # Properties as JSON from one fragment per (attribute, distinct value), when the key adds nothing the
    # attributes do not hold already (what _dumps(_finite({**to_properties(props), **to_properties(key)})) gives).
    keyed = {k for k, _ in sp.key}
    fast_props = not sp.fold_key and bool(sp.key) and keyed <= {a for a, _ in sp.attributes}
    frags = [_fragments(a, col) for a, col in attrs] if fast_props else []
    fk_memo: list[dict[tuple[Any, ...], tuple[int, str, str]]] = [{} for _ in fks]
    bad: list[int] = []
    index: dict[int, int] = {}  # eid -> position in rows (the same entity twice: later values win)
    props_of: list[dict[str, Any] | None] = []
    first = len(rows.eid)
    for i in range(n):
        if sp.key:
            key: dict[str, Any] = {}
            for name, col in key_cols:
                v = col[i]
                if v is None or v is _BAD:
                    key = {}
                    break
                key[name] = v
            if not key:
                bad.append(i)
                continue
            if sp.fold_key:
                key = fold_key(key)
        else:
            key = {RECORD_KEY: ids[i]}
        eid, kj, _ = endpoints.get(sp.label, key)
        props = {a: col[i] for a, col in attrs if col[i] is not None}
        at = index.get(eid)
        if at is None:
            index[eid] = len(rows.eid)
            rows.eid.append(eid)
            rows.label.append(sp.label)
            rows.key_json.append(kj)
            if fast_props:
                props_of.append(None)
                rows.props.append("{" + ",".join([f[i] for f in frags if f[i]]) + "}")
            else:
                props_of.append(_finite({**to_properties(props), **to_properties(key)}))
                rows.props.append("")
        else:  # the same entity twice: later values win, as sequential upserts would leave it
            before = props_of[at - first]
            if before is None:
                before = json.loads(rows.props[at])
            props_of[at - first] = {**before, **_finite({**to_properties(props), **to_properties(key)})}
        sid = f"{source}\x1f{ids[i]}"
        rows.sid.append(sid)
        rows.source.append(source)
        rows.record_id.append(ids[i])
        rows.location.append(locations[i])
        rows.file.append(file)
        rows.link_eid.append(eid)
        rows.link_sid.append(sid)
        rows.keys.add((sp.label, tuple(key)))
        if entities is not None:
            prov = build(SourceRecordRef, source=source, record_id=ids[i], location=locations[i], file=file,
                         file_hash=file_hash)  # fmt: skip
            entities.append(build(EntityWrite, label=sp.label, key=key, properties=props, provenance=prov,
                                  contract_version=version))  # fmt: skip
        for j, (fk, pairs) in enumerate(fks):
            values = tuple([col[i] for _, col in pairs])
            hit = fk_memo[j].get(values)
            if hit is None:
                if any(v is None or v is _BAD for v in values):
                    continue  # a null (or unreadable) foreign key value: no edge
                to_key = {name: v for (name, _), v in zip(pairs, values, strict=True)}
                if fk.fold:
                    to_key = fold_key(to_key)
                hit = fk_memo[j][values] = endpoints.get(fk.to_label, to_key)
            dst, dkj, dprops = hit
            rows.edges[(fk.rel, eid, dst)] = version
            rows.stubs[dst] = (fk.to_label, dkj, dprops)
    for j, merged in enumerate(props_of):
        if merged is not None:
            rows.props[first + j] = _dumps(merged)
    return bad


def _fragments(name: str, col: list[Any]) -> list[str]:
    """``"name":value`` as ``_dumps`` writes it inside an object, per row ("" where the property is absent)."""
    memo: dict[tuple[type, Any], str] = {}
    out: list[str] = []
    for v in col:
        if v is None:
            out.append("")
            continue
        try:
            k = (type(v), v)
            frag = memo.get(k)
        except TypeError:  # unhashable (a JSON value kept as it was)
            k, frag = None, None
        if frag is None:
            prop = _finite(to_properties({name: v}))
            frag = _dumps(prop)[1:-1] if prop else ""
            if k is not None:
                memo[k] = frag
        out.append(frag)
    return out
