"""Hostile CSV and TSV: bad quoting, ragged rows, odd line ends, NUL bytes, huge lines, very wide files, columns
mixing numbers and text."""

from __future__ import annotations

from pathlib import Path

from esc.contract.field_cap import MAX_FIELDS_PER_SOURCE
from tests.hostile.model import Case, Env, Expect, Numbering, csv_text, write

ROWS = 9
WHERE = {"first": 1, "middle": 5, "last": ROWS}


def _broken(cid: str, at: int, line: str, sep: str = ",") -> str:
    """``ROWS`` good rows with row ``at`` replaced by ``line``."""
    lines = csv_text(cid, ROWS, sep).splitlines()
    lines[at] = line
    return "\n".join(lines) + "\n"


def _row_defect(ids: Numbering, title: str, line: str, ext: str, at: int, expect: Expect) -> Case:
    sep = "\t" if ext == "tsv" else ","
    text = line.replace(",", sep)

    def build(folder: Path, env: Env) -> None:
        write(folder, f"{folder.name}_rows.{ext}", _broken(folder.name, at, text, sep))

    return Case(ids.next(), "csv-quoting", f"{title} ({ext}, row {at})", build, expect)


def _whole(ids: Numbering, kind: str, title: str, data: str | bytes, expect: Expect, ext: str = "csv") -> Case:
    def build(folder: Path, env: Env) -> None:
        write(folder, f"{folder.name}_file.{ext}", data if isinstance(data, bytes) else data.replace("{cid}", folder.name))

    return Case(ids.next(), kind, title, build, expect)


def quoting_cases(ids: Numbering) -> list[Case]:
    out: list[Case] = []
    for ext in ("csv", "tsv"):
        for where, at in WHERE.items():
            out.append(_row_defect(ids, f"too many cells {where}", f"{at},x,y,z,extra", ext, at,
                                   Expect(rows=ROWS, records=ROWS - 1, dead=1, reason="cells")))
            out.append(_row_defect(ids, f"too few cells {where}", f"{at}", ext, at,
                                   Expect(rows=ROWS, records=ROWS - 1, dead=1, reason="cells")))
            # an unterminated quote swallows the rest of the file into one field: the rows before it must stay
            out.append(_row_defect(ids, f"unterminated quote {where}", f'{at},"never closed,note', ext, at,
                                   Expect(rows=ROWS, min_records=at - 1, min_dead=1)))
            out.append(_row_defect(ids, f"NUL byte {where}", f"{at},a\x00b,note", ext, at,
                                   Expect(rows=ROWS, min_dead=1)))
        out.append(_row_defect(ids, "quote inside an unquoted field", '4,ab"cd,note', ext, 4,
                               Expect(rows=ROWS, records=ROWS, dead=0, present=('ab"cd',))))
        out.append(_row_defect(ids, "text after a closing quote", '4,"ab"cd,note', ext, 4,
                               Expect(rows=ROWS, records=ROWS, dead=0)))
    multiline = 'id,name,note\n1,"two\nlines",x\n2,"a ""quoted"" word",y\n3,"comma, inside",z\n'
    out.append(_whole(ids, "csv-quoting", "quoted newline, doubled quotes, comma inside", multiline,
                      Expect(rows=3, records=3, dead=0, present=("two\nlines", 'a "quoted" word', "comma, inside"))))
    out.append(_whole(ids, "csv-quoting", "carriage returns only", csv_text("{cid}", 6).replace("\n", "\r"),
                      Expect(rows=6, records=6, dead=0)))
    mixed = "id,name,note\r\n1,a,x\n2,b,y\r\n3,c,z\r4,d,w\n"
    out.append(_whole(ids, "csv-quoting", "mixed line ends", mixed, Expect(rows=4, records=4, dead=0)))
    out.append(_whole(ids, "csv-quoting", "blank and whitespace lines between rows",
                      "id,name\n1,a\n\n   \n2,b\n\n", Expect(rows=2, records=2, dead=0)))
    out.append(_whole(ids, "csv-quoting", "duplicate and blank header names", "id,id,,name,\n1,2,3,4,5\n",
                      Expect(rows=1, records=1, dead=0, present=("id__2", "col_3", "col_5"))))
    out.append(_whole(ids, "csv-quoting", "header only", "id,name,note\n", Expect(rows=0, records=0)))
    out.append(_whole(ids, "csv-quoting", "unbalanced quote at the end of the file", 'id,name\n1,a\n2,"b\n',
                      Expect(rows=2, min_records=1)))
    out.append(_whole(ids, "csv-quoting", "semicolons with commas in values", "id;name\n1;a,b\n2;c,d\n3;e\n",
                      Expect(rows=3, records=3, dead=0, present=("a,b",))))
    out.append(_whole(ids, "csv-quoting", "one column, no delimiter", "name\nalpha\nbeta\ngamma\n",
                      Expect(rows=3, records=3, dead=0)))
    long_name = "h" * 100_000
    out.append(_whole(ids, "csv-quoting", "a header name of 100,000 characters", f"id,{long_name}\n1,a\n2,b\n",
                      Expect(rows=2, records=2, dead=0)))
    return out


def huge_line_cases(ids: Numbering) -> list[Case]:
    big = "y" * (3 << 20)
    out = [
        _whole(ids, "huge-line", "one 3 MiB row among five (csv)", f"id,v\n1,a\n2,{big}\n3,c\n4,d\n5,e\n",
               Expect(rows=5, records=4, dead=1, reason="over")),
        _whole(ids, "huge-line", "one 3 MiB row among five (tsv)", f"id\tv\n1\ta\n2\t{big}\n3\tc\n4\td\n5\te\n",
               Expect(rows=5, records=4, dead=1, reason="over"), ext="tsv"),
        _whole(ids, "huge-line", "a 20 MiB file without a newline", "z" * (20 << 20),
               Expect(rows=0, records=0, min_dead=1)),
        _whole(ids, "huge-line", "a 2 MiB header", "h" * (2 << 20) + ",id\n1,2\n",
               Expect(rows=1, records=0, min_dead=1)),
        _whole(ids, "huge-line", "a 900 KiB cell under the limit", f"id,v\n1,{'w ' * (450 << 10)}\n2,b\n",
               Expect(rows=2, records=2, dead=0)),
    ]
    return out


def _wide_csv(cid: str, width: int, rows: int, sep: str) -> str:
    header = sep.join(["id", *(f"col{i}" for i in range(width))])
    body = [sep.join([str(r), *(f"{cid}-{r}-{i}" for i in range(width))]) for r in range(1, rows + 1)]
    return "\n".join([header, *body]) + "\n"


def wide_cases(ids: Numbering) -> list[Case]:
    out = []
    for width, rows, ext in ((10_000, 5, "csv"), (1_500, 20, "tsv")):
        sep = "\t" if ext == "tsv" else ","

        def build(folder: Path, env: Env, width: int = width, rows: int = rows, ext: str = ext, sep: str = sep) -> None:
            write(folder, f"{folder.name}_wide.{ext}", _wide_csv(folder.name, width, rows, sep))

        cid = ids.next()
        out.append(Case(cid, "wide", f"{width:,} columns ({ext})", build,
                        Expect(rows=rows, records=rows, dead=0, max_fields=MAX_FIELDS_PER_SOURCE + 1,
                               present=(f"{cid}-{rows}-{width - 1}", f"col{width - 1}")), heavy=True))
    return out


def mixed_type_cases(ids: Numbering) -> list[Case]:
    """Columns whose values change type, within a batch and across profile batches (500 records each)."""
    kinds = ["1", "abc", "2.5", "", "1e5", "true", "2020-01-01", "-0", "007", "NaN", "inf", "12:30", "1,5",
             "123456789012345678901234567890", "$4.50", "50%", "2020-01-01T10:00:00Z", "[1, 2]", "{}", "null"]
    n = 1_300

    def mixed(folder: Path, env: Env) -> None:
        lines = ["id,v,w"] + [f'{i},"{kinds[i % len(kinds)]}",{i if i < 650 else "t" + str(i)}' for i in range(n)]
        write(folder, f"{folder.name}_mixed.csv", "\n".join(lines) + "\n")

    def key_mix(folder: Path, env: Env) -> None:
        lines = ["id,name"] + [f"{i if i % 3 else 'k' + str(i)},n{i}" for i in range(1, 40)]
        write(folder, f"{folder.name}_keymix.csv", "\n".join(lines) + "\n")

    return [
        Case(ids.next(), "mixed-types", "a column cycling through 20 kinds of value, 1,300 rows", mixed,
             Expect(rows=n, records=n, dead=0)),
        Case(ids.next(), "mixed-types", "an id column of numbers and codes", key_mix, Expect(rows=39, records=39, dead=0)),
    ]


def cases(ids: Numbering) -> list[Case]:
    return [*quoting_cases(ids), *huge_line_cases(ids), *wide_cases(ids), *mixed_type_cases(ids)]
