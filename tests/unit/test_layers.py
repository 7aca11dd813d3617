"""The import-linter layers contract in pyproject.toml names every module of the ``esc`` package.

import-linter checks only the modules a layer names, so a new module outside every layer would escape the rule;
this test makes that a failure. It also checks that nothing imports the folders by their bare names
(``contract``, ``agents``, ``streams``): they are installed as ``esc.contract``, ``esc.agents``, ``esc.streams``.
"""

from __future__ import annotations

import pkgutil
import re
import tomllib

import esc
from tests.paths import REPO


def _layers() -> list[list[str]]:
    config = tomllib.loads((REPO / "pyproject.toml").read_text("utf-8"))
    contracts = config["tool"]["importlinter"]["contracts"]
    (layered,) = [c for c in contracts if c["type"] == "layers"]
    return [[m.strip() for m in re.split(r"[|:]", layer)] for layer in layered["layers"]]


def _modules() -> list[str]:
    names = [m.name for m in pkgutil.walk_packages(esc.__path__, "esc.")]
    assert len(names) > 150  # the walk found the package (contract, agents and streams included)
    return names


def _owner(module: str, entries: list[str]) -> list[str]:
    return [e for e in entries if module == e or module.startswith(e + ".")]


def test_every_module_is_in_exactly_one_layer() -> None:
    entries = [e for layer in _layers() for e in layer]
    assert len(entries) == len(set(entries))
    unlisted = [m for m in _modules() if m != "esc" and not _owner(m, entries)]
    twice = [m for m in _modules() if len(_owner(m, entries)) > 1]
    # the package roots themselves hold nothing (empty __init__ files) and belong to no layer
    unlisted = [m for m in unlisted if m not in {"esc.agents", "esc.agents.stores", "esc.streams"}]
    assert unlisted == [], f"add these modules to a layer in pyproject.toml: {unlisted}"
    assert twice == [], f"modules in two layers: {twice}"


def test_the_check_sees_a_module_outside_every_layer() -> None:
    entries = [e for layer in _layers() for e in layer]
    assert not _owner("esc.agents.brand_new_stage", entries)
    assert _owner("esc.agents.query.plan", entries) == ["esc.agents.query"]


def test_package_roots_hold_no_code() -> None:
    for pkg in ("agents", "streams", "agents/stores"):
        text = (REPO / pkg / "__init__.py").read_text("utf-8")
        assert not [
            ln for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith(("#", '"'))
        ], pkg


_BARE = re.compile(r"^\s*(?:from|import)\s+(?:contract|agents|streams)(?:\.|\s)", re.M)


def test_nothing_imports_the_bare_folder_names() -> None:
    hits = []
    for folder in ("contract", "agents", "streams", "esc", "tests", "bench"):
        for path in sorted((REPO / folder).rglob("*.py")):
            if path.is_relative_to(REPO / "esc") and path.resolve() != path:
                continue  # esc/contract etc. are links to the folders, scanned once under their own names
            for m in _BARE.finditer(path.read_text("utf-8")):
                hits.append(f"{path.relative_to(REPO)}: {m.group(0).strip()}")
    assert hits == []
