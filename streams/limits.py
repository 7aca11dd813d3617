"""Limits the runtimes take from the settings and hand to the pure core (``contract/`` reads no environment).

``ESC_MAX_FIELDS``: fields per source before the rest of a record's values go to its overflow field
(``esc.contract.field_cap``; default ``MAX_FIELDS_PER_SOURCE``).
"""

from __future__ import annotations

from esc.settings import load


def max_fields() -> int:
    """The field cap per source (``ESC_MAX_FIELDS``, a whole number of at least 1)."""
    return load().max_fields
