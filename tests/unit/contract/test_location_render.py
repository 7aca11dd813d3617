"""``render_location``: a record envelope's location rendered as ``Location.render`` does, without the model when
its values already have their types (the planner's hot path), through the model otherwise."""

from __future__ import annotations

from typing import Any

import pytest

from esc.contract.records import Location, render_location

SAME = [
    {"file": "a.csv", "row": 3, "line": 4},
    {"file": "x.json", "json_path": "$[1].a", "line": 2},
    {"file": "s.xlsx", "sheet": "S1", "row": 2},
    {"file": "p.pdf", "page": 3},
    {"file": "a.csv", "row": "3"},  # read by the model (lax int)
    {"file": "a.csv", "row": True},
    {"file": "a.csv", "extra": 5, "row": 1},  # ignored, as by the model
    {"file": "a.csv", "row": None, "line": 9},
]


@pytest.mark.parametrize("loc", SAME)
def test_renders_as_the_model_does(loc: dict[str, Any]) -> None:
    assert render_location(loc) == Location(**loc).render()


@pytest.mark.parametrize("loc", [{"row": 1}, {"file": "a", "row": "x"}, {"file": 3}])
def test_raises_where_the_model_does(loc: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        Location(**loc)
    with pytest.raises(ValueError):
        render_location(loc)
