"""Dirty variants of a relational pack (a ``drop/`` folder and its ``truth.json``), deterministically.

    python tests/data/degrade.py tests/data/eval/relational/chinook /tmp/chinook-dirty          # every variant
    python tests/data/degrade.py tests/data/eval/relational/sakila /tmp/sak --variants rename,dangling

Each variant is written to ``OUT/<variant>/drop`` with its own ``OUT/<variant>/truth.json`` (keys, foreign keys
and hierarchy rewritten to match what was done). The same input always gives the same bytes (seeded by the
variant and source names, never by time or hash order). Variants:

* ``rename``: every foreign-key column (child side) whose target has at least ``RENAME_MIN_ROWS`` rows gets an
  unrelated name (``ArtistId`` -> ``amber``), so only the values can say what it refers to (a reference to a
  table of two or five rows cannot be told from any small code by its values: ``rename_all`` renames those too);
* ``dangling``: 10 % of the rows of every referenced source are deleted (rows nested in them go too), so the
  references to them dangle;
* ``duplicates``: 2 % of the rows of every top-level source (at least one) appear twice;
* ``case``: string codes in the child columns of foreign keys are upper- or lower-cased (the other way round
  from their parent) in one source;
* ``composite``: one referenced source loses its single-column key for a pair of new non-id columns
  (``batch``, ``slot``) that only together identify a row; every reference to it becomes that pair;
* ``shuffle``: the column order of every source (and of nested records) is shuffled.

Formats are kept (CSV with its delimiter, JSON arrays, JSON lines, nested JSON); values are copied as read (CSV
text stays text).
"""

from __future__ import annotations

import argparse
import copy
import csv
import io
import json
import random
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

VARIANTS = ("rename", "dangling", "duplicates", "case", "composite", "shuffle")
EXTRA_VARIANTS = ("rename_all",)
RENAME_MIN_ROWS = 20
WORDS = (
    "amber", "basalt", "cobalt", "dune", "ember", "fjord", "garnet", "harbor", "indigo", "juniper", "kelp",
    "lagoon", "marble", "nectar", "opal", "pebble", "quartz", "russet", "saffron", "tundra", "umber", "velvet",
    "willow", "yarrow", "zephyr", "alder", "birch", "cedar", "dahlia", "elm",
)  # fmt: skip
PAIR = ("batch", "slot")
SLOT_SIZE = 20


@dataclass
class Pack:
    """A pack in memory: per file its records (nested children inside their parents) and the truth."""

    files: dict[str, list[dict[str, Any]]]  # file name -> records
    meta: dict[str, dict[str, Any]]  # source -> truth["sources"][source]
    truth: dict[str, Any]

    def file_of(self, source: str) -> str:
        m = self.meta[source]
        return str(m["file"])

    def rows(self, source: str) -> list[dict[str, Any]]:
        """The records of ``source`` (nested children collected from their parents; the same dicts)."""
        m = self.meta[source]
        top = self.files[self.file_of(source)]
        if not m.get("embedded_in"):
            return top
        key = m["array_key"]
        return [c for r in top for c in (r.get(key) or [])]


def _seed(*parts: str) -> int:
    return zlib.crc32("\x1f".join(parts).encode())


# ------------------------------------------------------------------------------------------------ reading / writing
def load(pack_dir: Path) -> Pack:
    truth = json.loads((pack_dir / "truth.json").read_text(encoding="utf-8"))
    drop = pack_dir / truth.get("drop_folder", "drop")
    files: dict[str, list[dict[str, Any]]] = {}
    for m in truth["sources"].values():
        name = m["file"]
        if name in files:
            continue
        path = drop / name
        fmt = m["format"]
        if fmt == "csv":
            text = path.read_text(encoding="utf-8-sig")
            reader = csv.DictReader(io.StringIO(text, newline=""), delimiter=m.get("delimiter", ","))
            files[name] = [{k: (v if v != "" else None) for k, v in row.items()} for row in reader]
        elif fmt == "jsonl":
            lines = path.read_text(encoding="utf-8").splitlines()
            files[name] = [json.loads(line) for line in lines if line.strip()]
        else:
            files[name] = json.loads(path.read_text(encoding="utf-8"))
    return Pack(files, dict(truth["sources"]), truth)


def save(pack: Pack, out: Path) -> None:
    drop = out / "drop"
    drop.mkdir(parents=True, exist_ok=True)
    written: set[str] = set()
    for _source, m in sorted(pack.meta.items()):
        name = m["file"]
        if name in written:
            continue
        written.add(name)
        recs = pack.files[name]
        fmt = m["format"]
        if fmt == "csv":
            cols: list[str] = []
            for r in recs:
                cols.extend(c for c in r if c not in cols)
            buf = io.StringIO(newline="")
            w = csv.writer(buf, delimiter=m.get("delimiter", ","), lineterminator="\n")
            w.writerow(cols)
            for r in recs:
                w.writerow(["" if r.get(c) is None else r.get(c) for c in cols])
            (drop / name).write_text(buf.getvalue(), encoding="utf-8")
        elif fmt == "jsonl":
            text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in recs)
            (drop / name).write_text(text, encoding="utf-8")
        else:
            (drop / name).write_text(json.dumps(recs, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    truth = dict(pack.truth)
    truth["sources"] = pack.meta
    (out / "truth.json").write_text(json.dumps(truth, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


# ------------------------------------------------------------------------------------------------ helpers
def _fks(pack: Pack) -> list[dict[str, Any]]:
    return [f for f in pack.truth["foreign_keys"] if f.get("child_nonnull_rows", 1) > 0]


def _rename_in(rows: list[dict[str, Any]], old: str, new: str) -> None:
    for i, r in enumerate(rows):
        if old in r:
            rows[i] = {(new if k == old else k): v for k, v in r.items()}


def _replace_rows(pack: Pack, source: str, fn: Callable[[dict[str, Any]], dict[str, Any]]) -> None:
    """Apply ``fn`` to every record of ``source`` in place (nested ones inside their parents)."""
    m = pack.meta[source]
    top = pack.files[m["file"]]
    if not m.get("embedded_in"):
        top[:] = [fn(r) for r in top]
        return
    key = m["array_key"]
    for r in top:
        if isinstance(r.get(key), list):
            r[key] = [fn(c) for c in r[key]]


def _rename_field(pack: Pack, source: str, old: str, new: str) -> None:
    _replace_rows(pack, source, lambda r: {(new if k == old else k): v for k, v in r.items()})
    m = pack.meta[source]
    m["identity_key"] = [new if f == old else f for f in m["identity_key"]]
    for f in pack.truth["foreign_keys"]:
        for end in ("from", "to"):
            if f[end]["source"] == source:
                f[end]["fields"] = [new if x == old else x for x in f[end]["fields"]]
    for h in pack.truth.get("hierarchy", []):
        if h["child"] == source:
            h["child_fields"] = [new if x == old else x for x in h["child_fields"]]
        if h["parent"] == source:
            h["parent_fields"] = [new if x == old else x for x in h["parent_fields"]]


def _columns(pack: Pack, source: str) -> set[str]:
    return {k for r in pack.rows(source) for k in r}


# ------------------------------------------------------------------------------------------------ variants
def rename(pack: Pack, min_rows: int = RENAME_MIN_ROWS) -> None:
    words = iter(WORDS)
    done: set[tuple[str, str]] = set()
    for f in _fks(pack):
        src = f["from"]["source"]
        if len(pack.rows(f["to"]["source"])) < min_rows:
            continue
        for col in list(f["from"]["fields"]):
            if (src, col) in done:
                continue
            taken = _columns(pack, src)
            new = next(w for w in words if w not in taken)
            _rename_field(pack, src, col, new)
            done.add((src, new))


def _is_parent_of_nested(pack: Pack, source: str) -> str | None:
    for s, m in pack.meta.items():
        if m.get("embedded_in") == source:
            return s
    return None


def dangling(pack: Pack) -> None:
    targets = sorted({f["to"]["source"] for f in _fks(pack)})
    for t in targets:
        m = pack.meta[t]
        rng = random.Random(_seed("dangling", t))
        if m.get("embedded_in"):
            key = m["array_key"]
            for r in pack.files[m["file"]]:
                kids = r.get(key) or []
                n = int(len(kids) * 0.1)
                for i in sorted(rng.sample(range(len(kids)), n), reverse=True):
                    del kids[i]
            continue
        rows = pack.files[m["file"]]
        n = int(len(rows) * 0.1)
        drop = set(rng.sample(range(len(rows)), n))
        rows[:] = [r for i, r in enumerate(rows) if i not in drop]


def duplicates(pack: Pack) -> None:
    for name in sorted(pack.files):
        rows = pack.files[name]
        if len(rows) < 2:
            continue
        rng = random.Random(_seed("duplicates", name))
        n = max(1, len(rows) // 50)
        picks = set(rng.sample(range(len(rows)), n))
        out: list[dict[str, Any]] = []
        for i, r in enumerate(rows):
            out.append(r)
            if i in picks:
                out.append(copy.deepcopy(r))
        rows[:] = out


def _has_letters(values: list[Any]) -> bool:
    s = [v for v in values if isinstance(v, str)]
    return bool(s) and len(s) == len([v for v in values if v is not None]) and any(
        any(ch.isalpha() for ch in v) for v in s
    )


def case(pack: Pack) -> None:
    """The first child source (by name) holding string codes in a foreign key: those codes change case."""
    by_source: dict[str, list[str]] = {}
    for f in _fks(pack):
        if len(f["from"]["fields"]) != 1:
            continue
        src, col = f["from"]["source"], f["from"]["fields"][0]
        if _has_letters([r.get(col) for r in pack.rows(src)]):
            by_source.setdefault(src, []).append(col)
    if not by_source:
        return
    src = sorted(by_source)[0]
    cols = by_source[src]

    def flip(v: Any) -> Any:
        if not isinstance(v, str):
            return v
        return v.lower() if sum(c.isupper() for c in v) >= sum(c.islower() for c in v) else v.upper()

    _replace_rows(pack, src, lambda r: {k: (flip(v) if k in cols else v) for k, v in r.items()})


def _composite_target(pack: Pack) -> str | None:
    """The referenced source whose key becomes a pair: single-column key, >= 50 rows, top level, referenced by
    at least one child column that is not part of that child's own key (nor a nesting link); most references
    first, then most rows, then name."""
    refs: dict[str, int] = {}
    blocked: set[str] = set()
    for f in _fks(pack):
        t, src = f["to"]["source"], f["from"]["source"]
        if pack.meta[src].get("embedded_in") == t or len(f["to"]["fields"]) != 1:
            blocked.add(t)
            continue
        if set(f["from"]["fields"]) & set(pack.meta[src]["identity_key"]):
            blocked.add(t)
            continue
        refs[t] = refs.get(t, 0) + 1
    ok = [
        t
        for t in refs
        if t not in blocked
        and not pack.meta[t].get("embedded_in")
        and len(pack.meta[t]["identity_key"]) == 1
        and len(pack.rows(t)) >= 50
        and not any(c in PAIR for c in _columns(pack, t))
    ]
    if not ok:
        return None
    return sorted(ok, key=lambda t: (-refs[t], -len(pack.rows(t)), t))[0]


def _sort_key(v: Any) -> tuple[int, Any]:
    try:
        return (0, float(v))
    except (TypeError, ValueError):
        return (1, str(v))


def _splice(r: dict[str, Any], col: str, pair: tuple[Any, Any] | None) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in r.items():
        if k == col:
            out[PAIR[0]], out[PAIR[1]] = pair if pair is not None else (None, None)
        else:
            out[k] = v
    return out


def composite(pack: Pack) -> None:
    t = _composite_target(pack)
    if t is None:
        return
    key = pack.meta[t]["identity_key"][0]
    values = sorted({str(r[key]) for r in pack.rows(t) if r.get(key) is not None}, key=_sort_key)
    mapping: dict[str, tuple[str, int]] = {}
    for i, v in enumerate(values):
        block = i // SLOT_SIZE
        label = chr(ord("A") + block % 26) + (str(block // 26) if block >= 26 else "")
        mapping[v] = (label, i % SLOT_SIZE + 1)
    _replace_rows(pack, t, lambda r: _splice(r, key, mapping.get(str(r.get(key)))))
    pack.meta[t]["identity_key"] = list(PAIR)
    for f in pack.truth["foreign_keys"]:
        if f["to"]["source"] != t:
            continue
        src, col = f["from"]["source"], f["from"]["fields"][0]
        _replace_rows(
            pack, src, lambda r, col=col: _splice(r, col, mapping.get(str(r.get(col))) if r.get(col) is not None else None)
        )
        f["from"]["fields"], f["to"]["fields"] = list(PAIR), list(PAIR)


def shuffle(pack: Pack) -> None:
    for source in sorted(pack.meta):
        cols = sorted(_columns(pack, source))
        nested = {m["array_key"] for s, m in pack.meta.items() if m.get("embedded_in") == source}
        order = [c for c in cols if c not in nested]
        random.Random(_seed("shuffle", source)).shuffle(order)
        order += sorted(nested)
        rank = {c: i for i, c in enumerate(order)}
        _replace_rows(pack, source, lambda r, rank=rank: dict(sorted(r.items(), key=lambda kv: rank[kv[0]])))


APPLY: dict[str, Callable[[Pack], None]] = {
    "rename": rename,
    "rename_all": lambda pack: rename(pack, 0),
    "dangling": dangling,
    "duplicates": duplicates,
    "case": case,
    "composite": composite,
    "shuffle": shuffle,
}


def degrade(pack_dir: Path, variant: str, out: Path) -> dict[str, Any]:
    """Write one variant of the pack at ``pack_dir`` to ``out`` (``out/drop``, ``out/truth.json``); its truth."""
    pack = load(pack_dir)
    for step in variant.split("+"):
        APPLY[step](pack)
    pack.truth["variant"] = variant
    save(pack, out)
    return json.loads((out / "truth.json").read_text(encoding="utf-8"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("pack", type=Path, help="folder with truth.json and drop/")
    ap.add_argument("out", type=Path, help="where OUT/<variant>/ is written")
    ap.add_argument("--variants", default=",".join(VARIANTS), help="comma list; a+b applies both")
    args = ap.parse_args()
    for v in [v for v in args.variants.split(",") if v]:
        degrade(args.pack, v, args.out / v)
        print(args.out / v)


if __name__ == "__main__":
    main()
