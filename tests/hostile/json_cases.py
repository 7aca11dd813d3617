"""Hostile JSON and JSON lines: deep nesting, many keys, truncation, trailing garbage, odd numbers."""

from __future__ import annotations

import json
from pathlib import Path

from esc.contract.field_cap import MAX_FIELDS_PER_SOURCE
from tests.hostile.model import Case, Env, Expect, Numbering, write


def _text(ids: Numbering, kind: str, title: str, name: str, text: str, expect: Expect, heavy: bool = False) -> Case:
    def build(folder: Path, env: Env) -> None:
        write(folder, f"{folder.name}_{name}", text)

    return Case(ids.next(), kind, title, build, expect, heavy)


def _deep_object(depth: int) -> str:
    return '{"a": ' * depth + '"leaf"' + "}" * depth


def _deep_array(depth: int) -> str:
    return "[" * depth + "1" + "]" * depth


def _nested_children(depth: int) -> dict[str, object]:
    node: dict[str, object] = {"id": depth, "leaf": True}
    for level in range(depth - 1, 0, -1):
        node = {"id": level, "kids": [node]}
    return node


def nesting_cases(ids: Numbering) -> list[Case]:
    normal = [json.dumps({"id": i, "v": i}) for i in range(1, 4)]
    return [
        _text(ids, "deep", "an object 900 deep", "deep900.json", f'[{{"id": 1, "v": {_deep_object(900)}}}]',
              Expect(rows=1, records=1, dead=0)),
        _text(ids, "deep", "an object 5,000 deep", "deep5000.json", f'[{{"id": 1, "v": {_deep_object(5000)}}}]',
              Expect(rows=1, all_or_nothing=True)),
        _text(ids, "deep", "arrays 5,000 deep in a value", "arrays.json", f'[{{"id": 1, "v": {_deep_array(5000)}}}]',
              Expect(rows=1, all_or_nothing=True)),
        _text(ids, "deep", "a JSON line 3,000 deep among good lines", "deep.jsonl",
              "\n".join([*normal, f'{{"id": 9, "v": {_deep_object(3000)}}}']) + "\n",
              Expect(rows=4, min_records=3)),
        _text(ids, "deep", "arrays of objects nested 40 deep", "kids.json", json.dumps([_nested_children(40)]),
              Expect(rows=1, records=1, dead=0)),
        _text(ids, "deep", "20,000 records in one array", "many.json",
              json.dumps([{"id": i, "v": f"v{i}"} for i in range(20_000)]),
              Expect(rows=20_000, records=20_000, dead=0)),
    ]


def wide_cases(ids: Numbering) -> list[Case]:
    one = json.dumps({"id": 1, **{f"key{i}": i for i in range(5000)}})
    lines = "".join(json.dumps({"id": i, f"k_{i}": i}) + "\n" for i in range(20_000))
    fat = "".join(json.dumps({"id": r, **{f"f{i}": f"r{r}-{i}" for i in range(600)}}) + "\n" for r in range(5))
    cap = MAX_FIELDS_PER_SOURCE + 1
    return [
        _text(ids, "wide", "one object with 5,000 keys", "keys.json", one,
              Expect(rows=1, records=1, dead=0, max_fields=cap, present=("key4999",)), heavy=True),
        _text(ids, "wide", "JSON lines with 20,000 distinct keys", "distinct.jsonl", lines,
              Expect(rows=20_000, records=20_000, dead=0, max_fields=cap, present=("k_19999",)), heavy=True),
        _text(ids, "wide", "JSON lines of 600 keys each", "fat.jsonl", fat,
              Expect(rows=5, records=5, dead=0, max_fields=cap, present=("r4-599",)), heavy=True),
    ]


def truncation_cases(ids: Numbering) -> list[Case]:
    array = json.dumps([{"id": i, "name": f"n{i}", "tags": ["a", "b"]} for i in range(20)], indent=1)
    lines = [json.dumps({"id": i, "name": f"n{i}"}) for i in range(1, 11)]
    cut_line = "\n".join(lines[:6]) + "\n" + lines[6][: len(lines[6]) // 2]
    out = [
        _text(ids, "truncated", f"JSON array cut at {share:.0%}", "cut.json", array[: int(len(array) * share)],
              Expect(rows=20, min_dead=1))
        for share in (0.3, 0.6, 0.95)
    ]
    out += [
        _text(ids, "truncated", "JSON lines cut in the middle of a line", "cut.jsonl", cut_line,
              Expect(rows=7, records=6, dead=1)),
        _text(ids, "truncated", "JSON lines with one broken line", "broken.jsonl",
              "\n".join([*lines[:4], '{"id": 5, "name": }', *lines[5:]]) + "\n", Expect(rows=10, records=9, dead=1)),
        _text(ids, "truncated", "garbage after a JSON array", "garbage.json", '[{"id": 1}, {"id": 2}] trailing junk',
              Expect(rows=2, records=2, min_dead=1)),
        _text(ids, "truncated", "two JSON documents in one .json file", "two.json", '{"id": 1}\n\n[{"id": 2}]',
              Expect(rows=2, min_records=1)),
    ]
    return out


def number_cases(ids: Numbering) -> list[Case]:
    return [
        _text(ids, "numbers", "NaN and Infinity", "nan.jsonl",
              '{"id": 1, "v": NaN}\n{"id": 2, "v": Infinity}\n{"id": 3, "v": -Infinity}\n{"id": 4, "v": 1.5}\n',
              Expect(rows=4, records=4, dead=0)),
        _text(ids, "numbers", "integers beyond 64 bits", "bigint.jsonl",
              '{"id": 1, "v": 123456789012345678901234567890}\n{"id": 2, "v": -99999999999999999999}\n',
              Expect(rows=2, records=2, dead=0)),
        _text(ids, "numbers", "an integer of 5,000 digits", "digits.jsonl", '{"id": 1, "v": 1' + "0" * 5000 + '}\n'
              '{"id": 2, "v": 2}\n', Expect(rows=2, min_records=1)),
        _text(ids, "numbers", "duplicate keys in one object", "dupes.json", '[{"id": 1, "a": 1, "a": 2}]',
              Expect(rows=1, records=1, dead=0)),
        _text(ids, "numbers", "a key that is an object in one record and a value in the next", "shape.jsonl",
              '{"id": 1, "a": {"b": 1}}\n{"id": 2, "a": 5}\n{"id": 3, "a.b": 7, "a": {"b": 8}}\n',
              Expect(rows=3, records=3, dead=0)),
    ]


def cases(ids: Numbering) -> list[Case]:
    return [*nesting_cases(ids), *wide_cases(ids), *truncation_cases(ids), *number_cases(ids)]
