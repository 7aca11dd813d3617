"""Decoded, bounded lines from a binary file: the streaming base of the CSV, JSONL and text readers.

A line longer than the record limit is never held whole: it is skipped up to its newline and reported. A line
that does not decode is reported and skipped, except when the encoding was only a guess from a plain-ASCII
prefix: then the file is taken to be cp1252 from that line on (the usual case of a Western legacy file whose
first accented letter comes late).
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from typing import BinaryIO

from esc.contract.records import Rejected
from esc.streams.readers.base import ReadContext, truncate
from esc.streams.readers.sniff import SAMPLE_BYTES, Encoding, sniff_encoding

_SKIP_CHUNK = 1 << 16


class Lines:
    """Iterate decoded lines (newline kept); problems go to ``pending`` for the caller to yield in order."""

    def __init__(self, fh: BinaryIO, enc: Encoding, ctx: ReadContext) -> None:
        self.fh = fh
        self.enc = enc
        self.ctx = ctx
        self.lineno = 0  # physical line number of the last line read
        self.bytes_read = 0
        self.bytes_skipped = 0  # of lines dropped as over the limit: not part of any record
        self.pending: list[Rejected] = []
        self.sample: list[str] = []  # raw text of the current record, capped, for Rejected.raw
        self._sample_len = 0
        if enc.skip:
            fh.seek(enc.skip)
        elif enc.name == "utf-8-sig" and fh.read(3) != b"\xef\xbb\xbf":
            fh.seek(0)
        if enc.name == "utf-8-sig":
            self.enc = Encoding("utf-8", True)

    def start_record(self) -> None:
        self.sample = []
        self._sample_len = 0

    def __iter__(self) -> Iterator[str]:
        if self.enc.name.startswith(("utf-16", "utf-32")):
            yield from self._wide()
            return
        limit = self.ctx.max_record_bytes
        while True:
            raw = self.fh.readline(limit + 1)
            if not raw:
                return
            self.lineno += 1
            self.bytes_read += len(raw)
            if len(raw) > limit and not raw.endswith(b"\n"):
                skipped = self._skip_rest()
                self.bytes_skipped += len(raw) + skipped
                self.pending.append(
                    self.ctx.reject(
                        f"line is over the record limit ({len(raw) + skipped} > {limit} bytes)",
                        raw[:200],
                        line=self.lineno,
                    )
                )
                continue
            text = self._decode(raw)
            if text is None:
                continue
            self._keep(text)
            yield text

    def _keep(self, text: str) -> None:
        if self._sample_len < 4000:
            self.sample.append(text)
            self._sample_len += len(text)

    def _skip_rest(self) -> int:
        skipped = 0
        while True:
            chunk = self.fh.readline(_SKIP_CHUNK)
            skipped += len(chunk)
            self.bytes_read += len(chunk)
            if not chunk or chunk.endswith(b"\n"):
                return skipped

    def _decode(self, raw: bytes) -> str | None:
        try:
            return raw.decode(self.enc.name)
        except UnicodeDecodeError as exc:
            if not self.enc.confident:
                self.enc = Encoding("cp1252", True)
                try:
                    return raw.decode("cp1252")
                except UnicodeDecodeError:
                    self.enc = Encoding("latin-1", True)
                    return raw.decode("latin-1")
            self.pending.append(
                self.ctx.reject(
                    f"line is not valid {self.enc.name}: {exc.reason} at byte {exc.start}",
                    raw,
                    line=self.lineno,
                )
            )
            return None

    def _wide(self) -> Iterator[str]:
        """UTF-16/32 text: newlines are not single bytes, so let a text wrapper split the lines."""
        limit = self.ctx.max_record_bytes
        text = io.TextIOWrapper(self.fh, encoding=self.enc.name, errors="replace", newline="")
        while True:
            line = text.readline(limit + 1)
            if not line:
                return
            self.lineno += 1
            self.bytes_read += len(line.encode("utf-8"))
            if len(line) > limit and not line.endswith("\n"):
                while True:
                    more = text.readline(_SKIP_CHUNK)
                    if not more or more.endswith("\n"):
                        break
                self.pending.append(
                    self.ctx.reject(
                        f"line is over the record limit ({limit} bytes)", line[:200], line=self.lineno
                    )
                )
                continue
            self._keep(line)
            yield line


def open_text(ctx: ReadContext, fh: BinaryIO) -> Encoding | Rejected:
    """Sniff the encoding from the file's prefix; a Rejected for empty or binary files."""
    sample = fh.read(SAMPLE_BYTES)
    fh.seek(0)
    if not sample.strip():
        return ctx.reject("empty file")
    enc = sniff_encoding(sample, whole=len(sample) < SAMPLE_BYTES)
    if enc is None:
        return ctx.reject(
            "binary or undecodable content (not text in any known encoding)", truncate(sample[:200])
        )
    return enc
