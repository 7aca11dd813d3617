"""The record messages of a whole CSV/TSV file, built from its columns: what the file connector's record path
sends for each row (``file_watcher.emission_for``: one ``RecordEnvelope`` per row, serialized by pydantic), at a
fraction of the cost.

The record path builds a ``Record``, a ``Location`` and a ``RecordEnvelope`` per row and serializes each (~35 us a
row with reading, in the worker's interpreter). Here each column is converted once, each distinct cell is
serialized once as its ``"name":value`` fragment, and a row's message is its fragments joined between a constant
head and tail: the same JSON document (same fields, order and values; `tests/unit/test_csv_envelopes.py` compares
them on the packs' files) and the same keys, in row order. Only for tables the columnar reader took
(``streams/readers/csv_table.py``: the record reader's cells and locations, one row per line after the header).
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pyarrow as pa

from esc.contract.labels import record_label, source_label
from esc.streams.events import record_key


def payload_fragments(name: str, col: list[str | None], separators: tuple[str, str] = (",", ":")) -> list[str]:
    """Each cell's ``"name":value`` JSON fragment, each distinct cell serialized once."""
    memo: dict[str | None, str] = {}
    out = []
    for v in col:
        frag = memo.get(v)
        if frag is None:
            frag = memo[v] = json.dumps({name: v}, ensure_ascii=False, separators=separators)[1:-1]
        out.append(frag)
    return out


def _json(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)


def csv_envelopes(
    source: str, rel: str, fmt: str, digest: str, table: pa.Table, event_time: str
) -> Iterator[tuple[bytes, bytes]]:
    """``(key, value)`` of every row's record message, in row order (``event_time``: ISO 8601 with ``Z``, as the
    envelope serializes its timestamp)."""
    src = source_label(source)
    names = table.schema.names
    frags = [payload_fragments(c, table.column(c).to_pylist()) for c in names]
    head = '{"source":' + _json(src) + ',"record_id":'
    mid = ',"event_time":"' + event_time + '","format":' + _json(fmt) + ',"location":{"file":' + _json(rel) + ',"row":'
    tail = '},"parent":null,"file_hash":' + _json(digest) + ',"deleted":false}'
    for i in range(table.num_rows):
        rid = record_label(f"{rel}:row={i + 1}:line={i + 2}")
        payload = ",".join([f[i] for f in frags])
        value = f'{head}{_json(rid)},"payload":{{{payload}}}{mid}{i + 1},"line":{i + 2}{tail}'
        yield record_key(src, rid).encode("utf-8"), value.encode("utf-8")
