"""A whole CSV/TSV file profiled in one columnar pass: the profile update its records would have produced.

Both runtimes use it for files the columnar reader takes (``streams/readers/csv_table.py``: the same cells and
locations as the record reader, or a reason to decline): the embedded runtime's columnar lane
(``streams/runtime/embedded_columnar.py``) and the Faust worker's drop folder, which profiles each file of a scan
before it sends the file's records, so the scan's contract exists by the time its records are extracted
(``streams/connectors/file_profiles.py``). The profile equals the record path's merged batch profiles
(``contract/profile_table.py``); the key candidates that repeat in the file come with it
(``contract/key_witness.py``).
"""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa

from esc.agents.llm_samples import sample_records
from esc.agents.profiler import STREAM_CAPS, ProfileDelta, ProfileMeta, Watermark
from esc.contract.key_witness import table_conflicts
from esc.contract.profile_table import profile_table
from esc.contract.records import Location, Record
from esc.streams.readers import SourceFile
from esc.streams.readers.csv_table import read_csv_table

FILE_STREAM = "file"
"""The watermark stream of a whole-file profile update (its offset is chosen once per file version and kept by the
connector, so the contract agent drops a re-sent update of the same version: ``FileProfiles``)."""


@dataclass(frozen=True)
class FileProfile:
    delta: ProfileDelta
    conflicts: dict[str, int]  # key candidates that repeat on rows that differ


def table_delta(
    sf: SourceFile, digest: str, table: pa.Table, watermark: Watermark, batch: int
) -> ProfileDelta:
    """The profile update of a file read as ``table`` (``batch``: the record path's profile batch, which the
    sketch of frequent values follows)."""
    n = table.num_rows
    names = table.schema.names
    prof = profile_table(sf.source, table, sf.format, STREAM_CAPS, batch)
    head = table.slice(0, min(n, batch)).to_pylist()
    first = [Record(source=sf.source, format=sf.format, values={k: row[k] for k in names},
                    location=Location(file=sf.rel, row=i + 1, line=i + 2)) for i, row in enumerate(head)]  # fmt: skip
    return ProfileDelta(
        source=sf.source, profile=prof.to_dict(),
        meta=ProfileMeta(format=sf.format, files=[sf.rel], file_records={sf.rel: n}, file_hash=digest),
        watermark=watermark, records=n, samples=sample_records(first),
    )  # fmt: skip


def profile_file(
    sf: SourceFile, digest: str, offset: int, batch: int, max_fields: int | None = None
) -> FileProfile | str:
    """The file's profile update (watermark ``FILE_STREAM`` at ``offset``), or why the columnar reader declines
    it (the caller then sends its records to be profiled one by one)."""
    got = read_csv_table(sf, max_fields=max_fields)
    if isinstance(got, str):
        return got
    if got.table.num_rows == 0:
        return "no rows"
    delta = table_delta(sf, digest, got.table, Watermark(stream=FILE_STREAM, offset=offset), batch)
    return FileProfile(delta, table_conflicts(got.table))
