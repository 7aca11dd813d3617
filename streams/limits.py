"""Limits the runtimes take from the environment and hand to the pure core (``contract/`` reads no environment).

``ESC_MAX_FIELDS``: fields per source before the rest of a record's values go to its overflow field
(``contract.field_cap``; default ``MAX_FIELDS_PER_SOURCE``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from esc.contract.field_cap import MAX_FIELDS_PER_SOURCE

MAX_FIELDS_VAR = "ESC_MAX_FIELDS"


def max_fields(environ: Mapping[str, str] | None = None) -> int:
    """The field cap per source: ``ESC_MAX_FIELDS`` when set (a whole number of at least 1), else the default."""
    raw = (os.environ if environ is None else environ).get(MAX_FIELDS_VAR, "").strip()
    if not raw:
        return MAX_FIELDS_PER_SOURCE
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value < 1:
        raise ValueError(f"{MAX_FIELDS_VAR} must be a whole number of at least 1, not {raw!r}")
    return value
