"""Profiler step: a batch of record envelopes (one partition) in, one mergeable profile delta per source out.

Profilers are partitioned by source (the records topic is keyed by source + record id), keep no state between
batches beyond what the runtime commits, and publish :class:`ProfileDelta` values: a ``SourceProfile`` of just
this batch plus the meta the contract agent needs (format, files, parent, array path, records per file) and a
watermark (stream = topic/partition, first and last offset) so the agent can drop a re-delivered delta.

Memory is bounded by :data:`STREAM_CAPS` (exact sets, sketches and samples per field and key-candidate combination
have fixed caps), whatever the batch or source size.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, Field

from esc.agents import metrics
from esc.agents.llm_samples import sample_records
from esc.contract.field_profile import Caps
from esc.contract.profile import SourceProfile
from esc.contract.records import Location, ParentLink, Record
from esc.streams.events import RecordEnvelope

STREAM_CAPS = Caps(exact=1 << 14, combo=1 << 16)
"""Caps for streaming profiles: exact distinct sets up to 16,384 values per field (128 KiB) and 65,536 tuples per
key-candidate pair (512 KiB), then HyperLogLog; a source's profile stays a few MiB however long it streams."""


class Watermark(BaseModel):
    stream: str  # e.g. "esc.records/3" (topic/partition) or "inprocess"
    offset: int  # last offset covered by the delta
    first: int | None = None  # first offset covered (None: unknown)
    also: dict[str, int] = Field(default_factory=dict)  # other streams the delta covers -> their last offset

    def marks(self) -> dict[str, int]:
        """Every stream the delta covers and its last offset."""
        return {**self.also, self.stream: self.offset}


class ProfileMeta(BaseModel):
    format: str
    files: list[str] = Field(default_factory=list)
    parent: str | None = None
    array_path: str | None = None
    file_records: dict[str, int] = Field(default_factory=dict)  # records of this source per file in the batch
    file_hash: str | None = None  # the file version (one file per delta from a file connector)


class ProfileDelta(BaseModel):
    """What one profiler batch learned about one source."""

    source: str
    profile: dict[str, Any]  # SourceProfile.to_dict()
    meta: ProfileMeta
    watermark: Watermark
    records: int
    samples: list[dict[str, Any]] = Field(default_factory=list)  # a few records, cut (agents/llm_samples.py)

    def source_profile(self, caps: Caps = STREAM_CAPS) -> SourceProfile:
        return SourceProfile.from_dict(self.profile, caps)


def _location(env: RecordEnvelope) -> Location:
    loc = dict(env.location)
    loc.setdefault("file", env.source)
    try:
        return Location(**loc)
    except (TypeError, ValueError):
        return Location(file=str(loc.get("file") or env.source))


def _parent(env: RecordEnvelope) -> ParentLink | None:
    p = env.parent
    if not p or not p.get("source"):
        return None
    rid = str(p.get("record_id") or "")
    file = str(env.location.get("file") or p["source"])
    values = p.get("values")
    tail = rid.split(":", 1)[1] if ":" in rid else ""
    return ParentLink(
        source=str(p["source"]),
        location=Location(file=file, json_path=tail if tail.startswith("$") else None),
        values=values if isinstance(values, dict) else {},
    )


def _array_path(env: RecordEnvelope) -> str | None:
    """``$[*].InvoiceLine`` for a child whose record id ends in ``$[3].InvoiceLine[1]`` (the file connector)."""
    if not env.parent:
        return None
    path = env.location.get("json_path")
    if not isinstance(path, str) or not path.startswith("$"):
        child = env.source.rsplit(".", 1)[-1]
        return f"$[*].{child}"
    parts = path.split(".")
    out = []
    for part in parts:
        name = part.split("[", 1)[0]
        out.append(
            name + ("[*]" if "[" in part else "") if name else ("$[*]" if part.startswith("$[") else part)
        )
    joined = ".".join(out)
    return joined[:-3] if joined.endswith("[*]") else joined


def records_from_envelopes(envs: Sequence[RecordEnvelope]) -> list[Record]:
    """Records as readers would have produced them (deleted envelopes are not observations and are skipped)."""
    out = []
    for env in envs:
        if env.deleted:
            continue
        out.append(
            Record(
                source=env.source,
                format=env.format,
                values=env.payload,
                location=_location(env),
                parent=_parent(env),
                array_path=_array_path(env),
            )
        )
    return out


def profile_batch(
    envs: Sequence[RecordEnvelope], watermark: Watermark | dict[str, Any], caps: Caps = STREAM_CAPS
) -> list[ProfileDelta]:
    """One delta per source and file version in the batch (pushed records: per source), in that order; the same
    watermark on each. A file's versions are kept apart so that a new version can replace an old one whole
    (agents/source_state.py)."""
    wm = watermark if isinstance(watermark, Watermark) else Watermark.model_validate(watermark)
    groups: dict[tuple[str, str, str], list[RecordEnvelope]] = defaultdict(list)
    for env in envs:
        if env.deleted:
            continue
        file = "" if env.format == "topic" else str(env.location.get("file") or env.source)
        groups[(env.source, file, (env.file_hash or "") if file else "")].append(env)
    deltas = []
    for (source, file, file_hash), group in sorted(groups.items()):
        recs = records_from_envelopes(group)
        files = {file: len(recs)} if file else {}  # pushed records have no file; their Location names the source
        first = recs[0]
        linked = next((r for r in recs if r.parent is not None), None)
        meta = ProfileMeta(
            format=first.format,
            files=sorted(files),
            parent=linked.parent.source if linked is not None and linked.parent is not None else None,
            array_path=linked.array_path if linked is not None else None,
            file_records=files,
            file_hash=file_hash or None,
        )
        prof = SourceProfile.of_records(source, recs, caps)
        deltas.append(ProfileDelta(source=source, profile=prof.to_dict(), meta=meta, watermark=wm, records=len(recs),
                                   samples=sample_records(recs)))  # fmt: skip
        metrics.PROFILE_UPDATES.labels(metrics.source_label(source)).inc()
    return deltas
