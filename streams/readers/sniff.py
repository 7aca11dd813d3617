"""Sniffing: which format a file is, which text encoding it uses, which CSV dialect it speaks.

Only a bounded prefix of a file is ever looked at here.
"""

from __future__ import annotations

import codecs
import csv
import io
import json
import re
from dataclasses import dataclass, replace
from pathlib import Path

SAMPLE_BYTES = 256 << 10  # prefix used to guess an encoding (later surprises: see lines.Lines)
DIALECT_SAMPLE_CHARS = 64 << 10
DIALECT_ROWS = 50

_EXTENSIONS: dict[str, str] = {
    ".csv": "csv",
    ".tsv": "tsv",
    ".tab": "tsv",
    ".json": "json",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".xlsx": "excel",
    ".xlsm": "excel",
    ".parquet": "parquet",
    ".pq": "parquet",
    ".txt": "text",
    ".text": "text",
    ".md": "markdown",
    ".markdown": "markdown",
    ".pdf": "pdf",
}

# Single-byte Western code pages charset-normalizer likes to answer for short Western European samples; they
# all decode the common letters like cp1252 does, and cp1252 is what such files nearly always are.
_WESTERN = re.compile(
    r"^(cp12(50|52|54|57|58)|latin_?1|iso8859_(1|2|3|4|9|10|13|14|15|16)|mac_\w+|cp4\d\d|cp8[5-6]\d|cp77\d)$"
)


@dataclass(frozen=True)
class Encoding:
    """A guessed text encoding. ``confident`` is False when the sample was plain ASCII (any later byte may
    reveal a different encoding)."""

    name: str
    confident: bool
    skip: int = 0  # bytes to pass over at the start (a stray BOM that is not the file's encoding)


def format_for(path: Path) -> str | None:
    """The source format of a file: from its extension, else sniffed from its first bytes; None if unknown."""
    fmt = _EXTENSIONS.get(path.suffix.lower())
    if fmt == "json":
        return "jsonl" if _looks_like_jsonl(path) else "json"
    if fmt is not None:
        return fmt
    return sniff_format(path)


def sniff_format(path: Path) -> str | None:
    """Format of a file with no known extension, from its content."""
    try:
        with path.open("rb") as fh:
            head = fh.read(DIALECT_SAMPLE_CHARS)
    except OSError:
        return None
    if not head:
        return None
    if head.startswith(b"%PDF-"):
        return "pdf"
    if head.startswith(b"PAR1"):
        return "parquet"
    if head.startswith(b"PK\x03\x04"):
        return "excel" if b"xl/" in head or b"[Content_Types].xml" in head else None
    enc = sniff_encoding(head, whole=len(head) < DIALECT_SAMPLE_CHARS)
    if enc is None:
        return None
    text = head.decode(enc.name, errors="replace")
    stripped = text.lstrip()
    if stripped.startswith("{") and _first_line_is_object(stripped):
        return "jsonl"
    if stripped.startswith(("[", "{")):
        return "json"
    dialect = sniff_dialect(text)
    if dialect.columns > 1 and dialect.consistency >= 0.9:
        return "tsv" if dialect.delimiter == "\t" else "csv"
    return "text"


def _looks_like_jsonl(path: Path) -> bool:
    """A ``.json`` file that holds one JSON object per line (a common mislabel) is read as JSONL."""
    try:
        with path.open("rb") as fh:
            head = fh.read(DIALECT_SAMPLE_CHARS)
    except OSError:
        return False
    text = head.decode("utf-8", errors="replace").lstrip("\ufeff \t\r\n")
    return text.startswith("{") and _first_line_is_object(text)


def _first_line_is_object(text: str) -> bool:
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if len(lines) < 2:
        return False
    try:
        first = json.loads(lines[0])
    except ValueError:
        return False
    return isinstance(first, dict) and lines[1].lstrip().startswith("{")


def sniff_encoding(sample: bytes, *, whole: bool) -> Encoding | None:
    """Guess the encoding of ``sample`` (a file prefix, or the whole file when ``whole``). None: binary junk.

    BOMs win; then strict UTF-8; then charset-normalizer, with Western single-byte answers mapped to cp1252.
    """
    if sample.startswith(codecs.BOM_UTF8):
        return Encoding("utf-8-sig", True)
    if sample.startswith((codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE)):
        return Encoding("utf-32", True)
    if sample.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        if b"\x00" in sample[2:] or len(sample) <= 2:
            return Encoding("utf-16", True)
        # UTF-16 text of Latin script has NULs in nearly every other byte (CJK text may have none): a BOM before
        # NUL-free bytes that are valid UTF-8 is a stray before UTF-8 text
        rest = sniff_encoding(sample[2:], whole=whole)
        if rest is None or rest.name != "utf-8":
            return Encoding("utf-16", True)
        return replace(rest, skip=2)
    if b"\x00" in sample:
        return None
    try:
        codecs.getincrementaldecoder("utf-8")().decode(sample, final=whole)
        return Encoding("utf-8", not sample.isascii())
    except UnicodeDecodeError:
        pass
    try:  # UTF-8 whose only flaw is encoded surrogates (CESU-8 / WTF-8): UTF-8, and the lines holding them fail
        codecs.getincrementaldecoder("utf-8")(errors="surrogatepass").decode(sample, final=whole)
        return Encoding("utf-8", True)
    except UnicodeDecodeError:
        pass
    # Mostly valid UTF-8 with a few broken bytes is still UTF-8 (the broken lines get rejected); legacy
    # single-byte text almost never forms valid multi-byte sequences.
    decoded = codecs.getincrementaldecoder("utf-8")(errors="replace").decode(sample, final=whole)
    bad = decoded.count("\ufffd")
    good = sum(1 for ch in decoded if ord(ch) > 127) - bad
    if good > 0 and good >= bad:
        return Encoding("utf-8", True)
    return _guess_legacy(sample)


def _guess_legacy(sample: bytes) -> Encoding | None:
    from charset_normalizer import from_bytes  # imported lazily: only non-UTF-8 input pays for it

    best = from_bytes(sample).best()
    if best is None:
        return None
    name = best.encoding
    if _WESTERN.match(name):
        try:
            sample.decode("cp1252")
            return Encoding("cp1252", True)
        except UnicodeDecodeError:
            return Encoding("latin-1", True)
    return Encoding(name, True)


@dataclass(frozen=True)
class Dialect:
    delimiter: str
    columns: int  # fields in the first row
    consistency: float  # share of sampled rows with exactly that many fields


def sniff_dialect(text: str, *, prefer: str = ",") -> Dialect:
    """Pick the delimiter under which the sampled rows agree best on a field count (> 1 field preferred).

    ``csv.Sniffer`` guesses from character frequencies and often picks a letter or a space; parsing the sample
    with each candidate and scoring the agreement is slower but robust to quoting and multi-line fields.
    """
    if len(text) > DIALECT_SAMPLE_CHARS:
        cut = text.rfind("\n", 0, DIALECT_SAMPLE_CHARS)
        text = text[: cut + 1] if cut > 0 else text[:DIALECT_SAMPLE_CHARS]
    candidates = [prefer] + [d for d in (",", ";", "\t", "|") if d != prefer]
    best: tuple[tuple[bool, float, int], Dialect] | None = None
    for delim in candidates:
        try:
            rows = []
            for row in csv.reader(io.StringIO(text, newline=""), delimiter=delim, quotechar='"'):
                if row:
                    rows.append(row)
                if len(rows) >= DIALECT_ROWS:
                    break
        except csv.Error:
            continue
        if not rows:
            continue
        columns = len(rows[0])
        consistency = sum(1 for r in rows if len(r) == columns) / len(rows)
        key = (columns > 1, round(consistency, 3), columns)
        if best is None or key > best[0]:
            best = (key, Dialect(delim, columns, consistency))
    return best[1] if best is not None else Dialect(prefer, 1, 1.0)
