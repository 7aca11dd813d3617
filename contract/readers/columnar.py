"""Columnar fast path for large CSV files (placeholder until implemented)."""

from __future__ import annotations

from contract.field_profile import Caps
from contract.profile import SourceProfile
from contract.readers.base import SourceFile
from contract.records import Rejected


def profile_csv_columnar(sf: SourceFile, caps: Caps) -> SourceProfile | list[Rejected]:
    return [Rejected(file=sf.rel, reason="columnar path not available; read record by record")]
