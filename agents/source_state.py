"""What the contract agent knows of one source: its evidence per file version, and the profile that counts.

A file in a drop folder changes: a row is edited, a column added, rows removed, the file deleted. The file connector
then re-sends the whole file (every record stamped with the new file version, its content hash) and announces its
end with a :class:`~agents.contract_agent.SourceComplete` for that version. Profiles are merged sketches and cannot
subtract a row, so the evidence is kept per **generation** (file, content hash):

* the generation in use for a file counts; a newer one is collected beside it and replaces it, whole, once it is
  complete (the profile counted every record its completion announced). Until then the source keeps answering from
  the older version: an edit never counts a row twice, and never shows a half-read file as the source;
* a completion announcing 0 records (the file was deleted, or no longer yields this source) removes the file's
  evidence from the source;
* records without a file (pushed to the records topic) add up in one ``loose`` profile, as before;
* a completion may carry the key candidates its connector saw repeat in that version (``contract/key_witness.py``):
  they count while that version is in use (``SourceProfile.witnessed``).

The effective profile is the merge of the generations in use and the loose profile; it is rebuilt only when a
generation is replaced, otherwise extended in place.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from esc.contract.field_profile import Caps
from esc.contract.key_witness import witnessed
from esc.contract.profile import SourceProfile

UNVERSIONED = ""
"""The generation of records whose file version is unknown (a connector that does not stamp ``file_hash``)."""


@dataclass
class Generation:
    profile: SourceProfile
    records: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {"profile": self.profile.to_dict(), "records": self.records}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], caps: Caps) -> Generation:
        return cls(SourceProfile.from_dict(d["profile"], caps), int(d["records"]))


def _merged(name: str, parts: list[SourceProfile]) -> SourceProfile:
    parts = [p for p in parts if p.records]
    if not parts:
        return SourceProfile.empty(name)
    out = parts[0]
    for p in parts[1:]:
        out = out.merge(p)
    return out


@dataclass
class SourceState:
    name: str
    format: str
    parent: str | None = None
    array_path: str | None = None
    gens: dict[str, dict[str, Generation]] = field(default_factory=dict)  # file -> file hash -> evidence
    current: dict[str, str] = field(default_factory=dict)  # file -> the hash whose evidence counts
    # file -> the latest (hash, records announced); hash None: a completion that names no version (any, in use)
    completed: dict[str, tuple[str | None, int]] = field(default_factory=dict)
    loose: SourceProfile | None = None  # records without a file
    # file -> (hash, candidates that repeat in that version): from the version's completion (contract/key_witness.py)
    conflicts: dict[str, tuple[str | None, dict[str, int]]] = field(default_factory=dict)
    last_seen: float = 0.0
    settled: bool = False  # keys/links may be inferred now
    ever_settled: bool = False
    flushed: bool = False  # a producer said a batch of this topic source is complete (``esc push --embedded``)
    _profile: SourceProfile | None = field(default=None, repr=False)

    # -- the evidence that counts ----------------------------------------------------------------------------------
    @property
    def profile(self) -> SourceProfile:
        if self._profile is None:
            parts = [self.gens[f][h].profile for f, h in sorted(self.current.items())]
            merged = _merged(self.name, [*parts, *([self.loose] if self.loose is not None else [])])
            found = witnessed(c for f, (h, c) in sorted(self.conflicts.items())
                              if f in self.current and (h is None or h == self.current[f]))  # fmt: skip
            self._profile = replace(merged, witnessed=found) if found else merged
        return self._profile

    @property
    def files(self) -> dict[str, int]:
        """Records counted per file (the generation in use)."""
        return {f: self.gens[f][h].records for f, h in sorted(self.current.items())}

    @property
    def file_fed(self) -> bool:
        """Some of its evidence comes from files (or a completion announced some)."""
        return bool(self.gens or self.completed)

    def meta(self) -> dict[str, Any]:
        return {"format": self.format, "files": sorted(self.current), "parent": self.parent,
                "array_path": self.array_path}

    # -- intake ------------------------------------------------------------------------------------------------------
    def add(self, prof: SourceProfile, records: int, file: str | None, file_hash: str | None) -> bool:
        """One delta's evidence; True if the profile that counts changed."""
        if file is None:
            self.loose = prof if self.loose is None else self.loose.merge(prof)
            self._extend(prof)
            return True
        h = file_hash or UNVERSIONED
        by_hash = self.gens.setdefault(file, {})
        gen = by_hash.get(h)
        if gen is None:
            gen = by_hash[h] = Generation(prof, records)
        else:
            gen.profile, gen.records = gen.profile.merge(prof), gen.records + records
        if file not in self.current:  # the file's first version counts as it arrives
            self.current[file] = h
            self._profile = None
            return True
        if self.current[file] == h:
            self._extend(prof)
            return True
        return self._maybe_switch(file)

    def complete(
        self, file: str, file_hash: str | None, records: int, conflicts: Mapping[str, int] | None = None
    ) -> bool:
        """The connector's end-of-file for one version; True if the profile that counts changed."""
        h = file_hash
        if records == 0:  # deleted, or the file no longer yields this source
            self.completed.pop(file, None)
            self.conflicts.pop(file, None)
            dropped = self.current.pop(file, None) is not None
            self.gens.pop(file, None)
            self._profile = None if dropped else self._profile
            return dropped
        prev = self.completed.get(file)
        self.completed[file] = (h, max(records, prev[1]) if prev is not None and prev[0] == h else records)
        before = self.conflicts.get(file)
        if conflicts:
            self.conflicts[file] = (h, dict(sorted(conflicts.items())))
        else:
            self.conflicts.pop(file, None)
        changed = before != self.conflicts.get(file)
        if changed:
            self._profile = None
        return self._maybe_switch(file) or (changed and file in self.current)

    def _maybe_switch(self, file: str) -> bool:
        """Put the announced version of ``file`` in use once every record it announced was profiled."""
        done = self.completed.get(file)
        if done is None or done[0] is None or self.current.get(file) == done[0]:
            return False
        gen = self.gens.get(file, {}).get(done[0])
        if gen is None or gen.records < done[1]:
            return False
        self.current[file] = done[0]
        self.gens[file] = {done[0]: gen}  # older versions are gone for good
        self._profile = None
        return True

    def _extend(self, prof: SourceProfile) -> None:
        if self._profile is not None:
            self._profile = prof if self._profile.records == 0 else self._profile.merge(prof)

    # -- settling ----------------------------------------------------------------------------------------------------
    def waiting(self) -> list[str]:
        """Files whose latest announced version is not in use yet (not all its records were profiled), and files
        with records but no completion."""
        def done(f: str) -> bool:
            if f not in self.completed or f not in self.current:
                return False
            h, n = self.completed[f]
            h = self.current[f] if h is None else h
            return self.current[f] == h and self.gens[f][h].records >= n

        return sorted(f for f in set(self.gens) | set(self.completed) if not done(f))

    def check_settled(self, now: float, settle_records: int, settle_seconds: float) -> bool:
        if self.gens or self.completed:
            return not self.waiting()
        if self.flushed and self.profile.records:
            return True
        return self.profile.records >= settle_records or (now - self.last_seen) >= settle_seconds

    # -- state -------------------------------------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        return {
            "format": self.format,
            "parent": self.parent,
            "array_path": self.array_path,
            "gens": {f: {h: g.to_dict() for h, g in sorted(by.items())} for f, by in sorted(self.gens.items())},
            "current": dict(sorted(self.current.items())),
            "completed": {f: list(v) for f, v in sorted(self.completed.items())},
            **({"conflicts": {f: [h, c] for f, (h, c) in sorted(self.conflicts.items())}} if self.conflicts else {}),
            "loose": self.loose.to_dict() if self.loose is not None else None,
            "last_seen": self.last_seen,
            "settled": self.settled,
            "ever_settled": self.ever_settled,
            "flushed": self.flushed,
        }

    @classmethod
    def from_dict(cls, name: str, d: Mapping[str, Any], caps: Caps) -> SourceState:
        st = cls(name=name, format=d["format"], parent=d.get("parent"), array_path=d.get("array_path"),
                 last_seen=float(d.get("last_seen", 0.0)), settled=bool(d.get("settled", False)),
                 ever_settled=bool(d.get("ever_settled", False)), flushed=bool(d.get("flushed", False)))
        if "gens" not in d:  # state version 1: one additive profile, records counted per file
            st.loose = SourceProfile.from_dict(d["profile"], caps)
            empty = SourceProfile.empty(name)
            for f, n in dict(d.get("files", {})).items():
                st.gens[f] = {UNVERSIONED: Generation(empty, int(n))}
                st.current[f] = UNVERSIONED
            st.completed = {f: (UNVERSIONED, int(n)) for f, n in dict(d.get("completed", {})).items()}
            return st
        st.gens = {f: {h: Generation.from_dict(g, caps) for h, g in by.items()} for f, by in d["gens"].items()}
        st.current = dict(d.get("current", {}))
        st.completed = {f: (None if v[0] is None else str(v[0]), int(v[1]))
                        for f, v in dict(d.get("completed", {})).items()}
        st.loose = SourceProfile.from_dict(d["loose"], caps) if d.get("loose") is not None else None
        st.conflicts = {f: (None if v[0] is None else str(v[0]), {k: int(n) for k, n in dict(v[1]).items()})
                        for f, v in dict(d.get("conflicts", {})).items()}  # fmt: skip
        return st
