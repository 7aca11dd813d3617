"""Contract text in, values out: deterministic YAML and JSON, and stored-format migrations.

Determinism: the same contract always gives byte-identical text. Keys of the contract follow the model's
declaration order (``version``, ``sources``, ``foreign_keys``... as in DESIGN.md §3); sources are sorted by name,
foreign keys by what they link and hierarchy edges by (parent, child, path); free-form dicts (evidence, details)
are sorted by key. Lists whose order means something are kept: fields (column order), identity keys, entities and
relationships (append order across versions). Floats are rounded to :data:`FLOAT_DIGITS` significant digits and
non-finite floats become the strings ``"NaN"``, ``"Infinity"``, ``"-Infinity"``; optional values that are unset
(``None``, empty lists/dicts) are left out, except the keys DESIGN.md §3 promises (``identity_key`` is ``[]``
when no key was proven). The key ``from`` of a foreign key is written as ``from``.

Format versions: ``format_version`` is the version of this stored shape, not of the contract's content.
:func:`migrate` upgrades an older dict one format step at a time through :data:`MIGRATIONS`.
"""

from __future__ import annotations

import datetime
import json
import math
from collections.abc import Callable
from typing import Any

import yaml
from pydantic import ValidationError

from esc.contract.errors import ContractFormatError
from esc.contract.model import FORMAT_VERSION, Contract, ContractDiff

FLOAT_DIGITS = 6

_KEEP_EMPTY = frozenset(
    {
        "identity_key",
        "fields",
        "sources",
        "foreign_keys",
        "hierarchy",
        "entities",
        "relationships",
        "key",
        "attributes",
        "from_fields",
        "to_fields",
        "added",
    }
)
_FREE_FORM = frozenset({"key_evidence", "evidence", "detail"})


MIGRATIONS: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {}
"""``MIGRATIONS[n]`` turns a format-``n`` dict into a format-``n+1`` dict. Empty while only format 1 exists."""


# ------------------------------------------------------------------------------------------------- to values


def _number(x: float) -> float | str:
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    if x == 0:
        return 0.0
    return float(f"{x:.{FLOAT_DIGITS}g}")


def _clean(value: Any, free: bool = False) -> Any:
    """Plain, canonical data: rounded floats, unset optionals dropped, free-form dicts sorted by key."""
    if isinstance(value, bool) or value is None or isinstance(value, int | str):
        return value
    if isinstance(value, float):
        return _number(value)
    if isinstance(value, dict):
        out = {}
        for k, v in sorted(value.items(), key=lambda kv: str(kv[0])) if free else value.items():
            cleaned = _clean(v, free or k in _FREE_FORM)
            if not free and k not in _KEEP_EMPTY and (cleaned is None or cleaned == [] or cleaned == {}):
                continue
            out[str(k)] = cleaned
        return out
    if isinstance(value, list | tuple | set | frozenset):
        items = sorted(value, key=repr) if isinstance(value, set | frozenset) else value
        return [_clean(v, free) for v in items]
    if isinstance(value, datetime.date | datetime.time):
        return value.isoformat()
    return str(value)


def _sort_key_fk(fk: dict[str, Any]) -> tuple[Any, ...]:
    return (fk["from"]["source"], fk["from"]["fields"], fk["to"]["source"], fk["to"]["fields"])


def to_dict(contract: Contract) -> dict[str, Any]:
    """The canonical plain-data form of a contract (what YAML and JSON hold)."""
    raw = contract.model_dump(mode="python", by_alias=True)
    raw["sources"] = {name: raw["sources"][name] for name in sorted(raw["sources"])}
    raw["foreign_keys"] = sorted(raw["foreign_keys"], key=_sort_key_fk)
    raw["hierarchy"] = sorted(raw["hierarchy"], key=lambda h: (h["parent"], h["child"], h["path"]))
    cleaned: dict[str, Any] = _clean(raw)
    return cleaned


def diff_to_dict(diff: ContractDiff) -> dict[str, Any]:
    cleaned: dict[str, Any] = _clean(diff.model_dump(mode="python"))
    return cleaned


def diff_added_by_kind(diff: ContractDiff) -> dict[str, list[dict[str, Any]]]:
    """The added items grouped by kind (``{"field": [...], "foreign_key": [...]}``), as schema-diff events carry them."""
    added: dict[str, list[dict[str, Any]]] = {}
    for item in diff_to_dict(diff).get("added", []):
        kind = item.pop("kind")
        added.setdefault(kind, []).append(item)
    return added


# --------------------------------------------------------------------------------------------------- YAML


_Loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _Dumper(yaml.SafeDumper):
    """Block style for structure, flow style for short lists of scalars (keys, field lists, examples)."""


def _represent_list(dumper: yaml.SafeDumper, data: list[Any]) -> yaml.Node:
    flow = all(not isinstance(x, dict | list) for x in data) and len(data) <= 20
    return dumper.represent_sequence("tag:yaml.org,2002:seq", data, flow_style=flow)


_Dumper.add_representer(list, _represent_list)


def _yaml(data: Any) -> str:
    return yaml.dump(
        data, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=100, default_flow_style=False
    )


def dump_yaml(contract: Contract) -> str:
    return _yaml(to_dict(contract))


def dump_diff_yaml(diff: ContractDiff) -> str:
    return _yaml(diff_to_dict(diff))


def dump_json(contract: Contract) -> str:
    return json.dumps(to_dict(contract), indent=2, ensure_ascii=False, allow_nan=False) + "\n"


# -------------------------------------------------------------------------------------------------- loading


def migrate(data: dict[str, Any]) -> dict[str, Any]:
    """Upgrade a stored contract dict to :data:`FORMAT_VERSION`, one format step at a time.

    A dict without ``format_version`` is format 1 (the first published shape). A newer format than this code
    knows is refused rather than guessed at. The input is not modified.
    """
    out = dict(data)
    version = out.get("format_version", 1)
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise ContractFormatError(f"format_version must be a positive integer, got {version!r}")
    if version > FORMAT_VERSION:
        raise ContractFormatError(
            f"contract format_version {version} is newer than this ESC understands ({FORMAT_VERSION})"
        )
    while version < FORMAT_VERSION:
        step = MIGRATIONS.get(version)
        if step is None:
            raise ContractFormatError(f"no migration from format_version {version} to {version + 1}")
        out = step(out)
        version += 1
        out["format_version"] = version
    out["format_version"] = version
    return out


def _fill_minimal(data: dict[str, Any]) -> dict[str, Any]:
    """Accept the hand-written minimal shape of DESIGN.md §3: a field may give only ``path`` (name = path)."""
    sources = data.get("sources")
    if isinstance(sources, dict):
        for src in sources.values():
            if isinstance(src, dict) and isinstance(src.get("fields"), list):
                for f in src["fields"]:
                    if isinstance(f, dict) and "name" not in f and isinstance(f.get("path"), str):
                        f["name"] = f["path"]
    return data


def from_dict(data: Any) -> Contract:
    if not isinstance(data, dict):
        raise ContractFormatError(f"a contract must be a mapping at the top level, got {type(data).__name__}")
    try:
        return Contract.model_validate(_fill_minimal(migrate(data)))
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc'])}: {err['msg']}" for err in exc.errors()[:10]
        )
        raise ContractFormatError(f"invalid contract: {problems}") from exc


def load_yaml(text: str) -> Contract:
    try:
        data = yaml.load(text, Loader=_Loader)  # a safe loader (the C build when available)
    except yaml.YAMLError as exc:
        raise ContractFormatError(f"not valid YAML: {exc}") from exc
    return from_dict(data)


def load_json(text: str) -> Contract:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ContractFormatError(f"not valid JSON: {exc}") from exc
    return from_dict(data)


def loads(text: str, name: str = "") -> Contract:
    """Load by file name (``.json`` is JSON, anything else YAML, which also reads JSON)."""
    return load_json(text) if name.lower().endswith(".json") else load_yaml(text)


def dumps(contract: Contract, name: str = "") -> str:
    """Dump by file name: ``.json`` gives JSON, anything else YAML."""
    return dump_json(contract) if name.lower().endswith(".json") else dump_yaml(contract)
