"""Where the tests find their data: inside the repository, so a bare clone passes its tests with nothing beside it.

The evaluation packs the tests use are vendored under ``tests/data/eval`` (sources, commits and licences in its
README); ``tests/unit/test_self_contained.py`` fails on any test, script or benchmark that reads outside the checkout.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
EVAL = REPO / "tests" / "data" / "eval"
RELATIONAL = EVAL / "relational"
TATQA = EVAL / "tatqa"
CHINOOK = RELATIONAL / "chinook"


def degrade_module() -> Any:
    """``tests/data/degrade.py`` (the dirty-variant generator, a script rather than a package module), loaded once."""
    if "degrade" not in sys.modules:
        spec = importlib.util.spec_from_file_location("degrade", REPO / "tests" / "data" / "degrade.py")
        assert spec is not None and spec.loader is not None
        mod = importlib.util.module_from_spec(spec)
        sys.modules["degrade"] = mod
        spec.loader.exec_module(mod)
    return sys.modules["degrade"]
