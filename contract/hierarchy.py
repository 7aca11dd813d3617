"""Source hierarchy from nesting: one edge per nested child source, linked by the parent's key.

The edge's ``path`` is the JSON path of the embedded array; ``parent_fields`` is the parent's identity key and
``child_fields`` are the child's columns that equal it in (nearly) every child record (compared against the
parent values each child record carries). A child that does not repeat the key gets ``child_fields == []``.
"""

from __future__ import annotations

from collections.abc import Mapping

from esc.contract.keys import KeyResult
from esc.contract.model import HierarchyEdge
from esc.contract.profile import SourceProfile


def infer_hierarchy(
    profiles: Mapping[str, SourceProfile],
    keys: Mapping[str, KeyResult | None],
    nesting: list[tuple[str, str, list[str], list[str], float]],
) -> list[HierarchyEdge]:
    linked = {child: (cf, pf) for child, _parent, cf, pf, _share in nesting}
    edges: list[HierarchyEdge] = []
    for child, p in sorted(profiles.items()):
        if p.parent is None:
            continue
        key = keys.get(p.parent.parent)
        cf, pf = linked.get(child, ([], list(key.fields) if key is not None else []))
        edges.append(
            HierarchyEdge(
                parent=p.parent.parent,
                child=child,
                path=p.parent.array_path,
                parent_fields=pf,
                child_fields=cf,
            )
        )
    return edges
