"""Where the tests find their data: inside the repository, so a bare clone passes its tests with nothing beside it.

The evaluation packs the tests use are vendored under ``tests/data/eval`` (sources, commits and licences in its
README); ``tests/unit/test_self_contained.py`` fails on any test, script or benchmark that reads outside the checkout.
"""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
EVAL = REPO / "tests" / "data" / "eval"
RELATIONAL = EVAL / "relational"
TATQA = EVAL / "tatqa"
CHINOOK = RELATIONAL / "chinook"
