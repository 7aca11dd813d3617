"""Hostile text encodings: legacy code pages, UTF-16 and UTF-32 with and without a BOM, invalid UTF-8, BOMs in odd
places, lone surrogates (as JSON escapes and as raw bytes)."""

from __future__ import annotations

import codecs
import json
from collections.abc import Callable
from pathlib import Path

from tests.hostile.model import Case, Env, Expect, Numbering, write

# Per encoding: words it can write, and whether the values must come back exactly (a BOM or a Western code page
# says what the bytes mean; other legacy code pages are guessed, so only the record count is held).
ENCODINGS: dict[str, tuple[tuple[str, ...], bool]] = {
    "utf-8": (("Zoë", "Ångström", "naïve café", "日本語", "€5"), True),
    "utf-8-sig": (("Zoë", "Ångström", "naïve café", "日本語"), True),
    "latin-1": (("Zoë", "Ångström", "naïve café", "señor"), True),
    "cp1252": (("Zoë", "“quoted”", "€5 – dash", "naïve café"), True),
    "utf-16": (("Zoë", "Ångström", "日本語", "€5"), True),  # with a BOM
    "utf-16-be-bom": (("Zoë", "Ångström", "日本語"), True),
    "utf-16-le": (("Zoë", "Ångström", "日本語"), False),  # no BOM
    "utf-32": (("Zoë", "日本語"), True),
    "cp1251": (("привет", "мир", "данные"), False),
    "shift_jis": (("日本語", "テスト", "データ"), False),
}
ROWS = 8


def _encode(text: str, encoding: str) -> bytes:
    if encoding == "utf-16-be-bom":
        return codecs.BOM_UTF16_BE + text.encode("utf-16-be")
    return text.encode(encoding)


def _rows(words: tuple[str, ...]) -> list[tuple[int, str]]:
    return [(i, f"{words[i % len(words)]} {i}") for i in range(1, ROWS + 1)]


def _csv(words: tuple[str, ...]) -> str:
    return "id,name\n" + "".join(f"{i},{w}\n" for i, w in _rows(words))


def _jsonl(words: tuple[str, ...]) -> str:
    return "".join(json.dumps({"id": i, "name": w}, ensure_ascii=False) + "\n" for i, w in _rows(words))


def _json(words: tuple[str, ...]) -> str:
    return json.dumps([{"id": i, "name": w} for i, w in _rows(words)], ensure_ascii=False, indent=1)


def _md(words: tuple[str, ...]) -> str:
    return "# " + words[0] + "\n\n" + "\n\n".join(w for _, w in _rows(words)) + "\n"


FORMATS: dict[str, tuple[Callable[[tuple[str, ...]], str], int]] = {
    "csv": (_csv, ROWS),
    "jsonl": (_jsonl, ROWS),
    "json": (_json, ROWS),
    "md": (_md, 1),
    "txt": (_md, 1),
}


def _case(ids: Numbering, encoding: str, ext: str) -> Case:
    words, exact = ENCODINGS[encoding]
    render, rows = FORMATS[ext]
    text = render(words)

    def build(folder: Path, env: Env) -> None:
        write(folder, f"{folder.name}_{encoding}.{ext}", _encode(text, encoding))

    checked = tuple(w for _, w in _rows(words)) if rows > 1 else (words[0],)  # a document's title
    if not exact:  # a guessed code page, or UTF-16 without a BOM: every row, or the file refused with a reason
        return Case(ids.next(), "encoding", f"{encoding} {ext}", build, Expect(rows=rows, all_or_nothing=True))
    return Case(ids.next(), "encoding", f"{encoding} {ext}", build,
                Expect(rows=rows, records=rows, dead=0, present=checked))


def _raw(ids: Numbering, kind: str, title: str, data: bytes, ext: str, expect: Expect) -> Case:
    def build(folder: Path, env: Env) -> None:
        write(folder, f"{folder.name}_raw.{ext}", data)

    return Case(ids.next(), kind, title, build, expect)


def invalid_utf8_cases(ids: Numbering) -> list[Case]:
    good = [f"{i},name {i} é\n".encode() for i in range(1, 11)]
    broken = list(good)
    broken[3] = b"4,bad \xff\xfe byte\n"
    broken[7] = b"8,cut \xc3\n"
    csv = b"id,name\n" + b"".join(broken)
    jsonl = b"".join(
        (b'{"id": %d, "name": "bad \xff"}\n' % i) if i in (2, 6) else (b'{"id": %d, "name": "ok \xc3\xa9"}\n' % i)
        for i in range(1, 11)
    )
    surrogate_bytes = b"id,name\n1,a\n2,\xed\xa0\x80 raw surrogate\n3,c\n"
    late = b"id,name\n" + b"".join(b"%d,plain ascii text %d\n" % (i, i) for i in range(1, 20_001)) + b"20001,caf\xe9\n"
    return [
        _raw(ids, "encoding", "invalid UTF-8 in two csv rows", csv, "csv", Expect(rows=10, records=8, dead=2)),
        _raw(ids, "encoding", "invalid UTF-8 in two jsonl lines", jsonl, "jsonl", Expect(rows=10, records=8, dead=2)),
        _raw(ids, "encoding", "a lone surrogate as UTF-8 bytes", surrogate_bytes, "csv",
             Expect(rows=3, records=2, dead=1)),
        _raw(ids, "encoding", "a latin-1 byte after 400 KiB of ASCII", late, "csv",
             Expect(rows=20_001, records=20_001, dead=0, present=("café",))),
    ]


def bom_cases(ids: Numbering) -> list[Case]:
    bom = codecs.BOM_UTF8
    return [
        _raw(ids, "bom", "BOM before a csv header", bom + b"id,name\n1,a\n2,b\n", "csv",
             Expect(rows=2, records=2, dead=0, present=("id",))),
        _raw(ids, "bom", "two BOMs before a csv header", bom + bom + b"id,name\n1,a\n", "csv",
             Expect(rows=1, records=1, dead=0)),
        _raw(ids, "bom", "BOM before JSON lines", bom + b'{"id": 1}\n{"id": 2}\n', "jsonl",
             Expect(rows=2, records=2, dead=0)),
        _raw(ids, "bom", "BOM before a JSON array", bom + b'[{"id": 1}, {"id": 2}]', "json",
             Expect(rows=2, records=2, dead=0)),
        _raw(ids, "bom", "a BOM inside a value", "id,name\n1,a\ufeffb\n".encode(), "csv",
             Expect(rows=1, records=1, dead=0)),
        _raw(ids, "bom", "a UTF-16 BOM before UTF-8 text", codecs.BOM_UTF16_LE + b"id,name\n1,a\n", "csv",
             Expect(rows=1, all_or_nothing=True)),
    ]


def surrogate_cases(ids: Numbering) -> list[Case]:
    lines = [json.dumps({"id": i, "v": f"fine {i}"}) for i in range(1, 7)]
    value = list(lines)
    value[2] = '{"id": 3, "v": "\\ud800 lone"}'
    key = list(lines)
    key[4] = '{"id": 5, "\\udfff": "lone key"}'
    pair = '{"id": 1, "v": "\\ud83d\\ude00 a pair"}\n{"id": 2, "v": "\\ud83d"}\n'
    nested = '[{"id": 1, "a": {"b": "\\udc80"}}, {"id": 2, "a": {"b": "ok"}}]'
    return [
        _raw(ids, "surrogate", "a lone surrogate escape in a value", ("\n".join(value) + "\n").encode(), "jsonl",
             Expect(rows=6, records=5, dead=1, reason="serializ")),
        _raw(ids, "surrogate", "a lone surrogate escape in a key", ("\n".join(key) + "\n").encode(), "jsonl",
             Expect(rows=6, min_records=5)),
        _raw(ids, "surrogate", "a valid pair and a lone high surrogate", pair.encode(), "jsonl",
             Expect(rows=2, records=1, dead=1, present=("\U0001f600 a pair",))),
        _raw(ids, "surrogate", "a lone surrogate in a nested value", nested.encode(), "json",
             Expect(rows=2, records=1, dead=1)),
    ]


def cases(ids: Numbering) -> list[Case]:
    out = [_case(ids, enc, ext) for enc in ENCODINGS for ext in FORMATS]
    return [*out, *invalid_utf8_cases(ids), *bom_cases(ids), *surrogate_cases(ids)]
