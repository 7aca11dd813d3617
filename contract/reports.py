"""What a contract reports about its data and its own execution, beside its structure: data drift per source and
field (``Contract.drift``) and the results of the version's example queries (``Contract.examples``).

Both are statistics, not structure: they are not part of the version identity (``contract.evolve.structure``),
so they never make a new version, and both are optional in the stored format (a contract written before they
existed reads as it was). Dicts are built sorted, so the same report serialises to the same text.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class FieldDrift(_Model):
    """One field of a source, in the current window against the previous one (``previous_*`` and the shift
    measures are absent for the first window, and the shift measures when a side has too few values)."""

    id: str | None = None  # the field's catalog id
    null_rate: float
    previous_null_rate: float | None = None
    null_rate_change: float | None = None  # current - previous
    types: dict[str, float] = Field(default_factory=dict)  # share of the non-null values per physical type
    type_shift: float | None = None  # total variation distance between the two type mixes (0..1)
    distinct: int = 0  # distinct values (estimate) the source holds now
    previous_distinct: int | None = None
    numeric: int = 0  # numeric values in the current window
    psi: float | None = None  # population stability index of the numeric values (> 0.25: a significant shift)
    ks: float | None = None  # Kolmogorov-Smirnov distance of the numeric values (0..1)


class SourceDrift(_Model):
    """Drift of one source: ``window`` counts the windows closed so far (see agents/drift.py for what a window
    is); ``records`` is the size of the current window and ``previous_records`` of the one before."""

    window: int
    records: int
    previous_records: int | None = None
    fields: dict[str, FieldDrift] = Field(default_factory=dict)  # by field name


ExampleKind = Literal["lookup", "hop", "count"]


class ExampleResult(_Model):
    name: str  # e.g. "Track: count", "Track: lookup by TrackId", "Track -ALBUM-> Album"
    kind: ExampleKind
    entity: str
    ok: bool
    rows: int = 0  # result rows (count examples: the count)
    error: str | None = None  # why it failed (an error, or an empty result)


class ExampleReport(_Model):
    """The results of one version's example queries, run against a store once it holds that version."""

    version: int
    content_hash: str = ""
    store: str = ""  # which store ran them (neo4j, embedded, ...)
    ran: int = 0
    failed: int = 0
    results: list[ExampleResult] = Field(default_factory=list)
