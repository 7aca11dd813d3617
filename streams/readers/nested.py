"""Nested objects as records: flatten nested objects to dotted names, split arrays of objects into child sources.

For an object read as a record of source ``S`` at JSON path ``P``:

* a nested object ``{"address": {"city": ...}}`` becomes the value ``address.city``;
* an array whose items are all objects, under key ``k``, becomes records of the child source ``S.k`` (nested
  keys give ``S.address.phones``), each with ``parent`` = the record of ``S`` (its source, location and scalar
  values) and ``array_path`` = ``<array path of S>.k`` (``$[*].InvoiceLine``), located at ``P.k[i]``; deeper
  arrays recurse (``Invoice.InvoiceLine.Taxes``);
* any other array (scalars, mixed, arrays of arrays) stays one list value;
* an empty array is neither a value nor a child: it cannot tell a list of scalars from a list of objects.

Parents come before their children. Flattened names that collide (``"a.b"`` next to ``{"a": {"b": ...}}``)
are made unique like CSV headers.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from esc.contract.records import Location, ParentLink, Record
from esc.streams.readers.base import ReadContext, unique_names


def explode(
    ctx: ReadContext,
    obj: Any,
    *,
    location: Location,
    source: str | None = None,
    array_path: str | None = None,
    parent: ParentLink | None = None,
    records_path: str = "$[*]",
) -> Iterator[Record]:
    """The record for ``obj`` (a non-object becomes ``{"value": obj}``), then its child records, depth first.

    ``records_path`` is the JSON path of the top-level records (``$[*]``, or ``$.data[*]`` for ``{"data": [...]}``).
    """
    source = source or ctx.source
    if not isinstance(obj, dict):
        yield Record(
            source=source,
            format=ctx.format,
            values={"value": obj},
            location=location,
            parent=parent,
            array_path=array_path,
        )
        return
    names: list[str] = []
    vals: list[Any] = []
    arrays: list[tuple[str, list[dict[str, Any]]]] = []
    _flatten(obj, "", names, vals, arrays)
    values = dict(zip(unique_names(names), vals, strict=True))
    yield Record(
        source=source,
        format=ctx.format,
        values=values,
        location=location,
        parent=parent,
        array_path=array_path,
    )
    if not arrays:
        return
    link = ParentLink(
        source=source,
        location=location,
        values={k: v for k, v in values.items() if not isinstance(v, list | dict)},
    )
    base_path = array_path if array_path is not None else records_path
    here = location.json_path or "$"
    for key, items in arrays:
        child_source = f"{source}.{key}"
        child_array = f"{base_path}.{key}"
        for i, item in enumerate(items):
            child_loc = location.model_copy(update={"json_path": f"{here}.{key}[{i}]"})
            yield from explode(
                ctx, item, location=child_loc, source=child_source, array_path=child_array, parent=link
            )


def _flatten(
    obj: dict[str, Any], prefix: str, names: list[str], vals: list[Any], arrays: list[tuple[str, list[Any]]]
) -> None:
    for key, value in obj.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            if value:
                _flatten(value, f"{name}.", names, vals, arrays)
            else:
                names.append(name)
                vals.append(None)
        elif isinstance(value, list):
            if not value:
                continue
            if all(isinstance(v, dict) for v in value):
                arrays.append((name, value))
            else:
                names.append(name)
                vals.append(value)
        else:
            names.append(name)
            vals.append(value)
