"""The hostile input corpus (issue 14, point 8) through the embedded runtime, the one ``esc ingest --embedded`` runs.

``tests/hostile`` builds 316 cases (bad quoting, mixed encodings, BOMs, binary, truncated files, very wide files,
huge lines, zip bombs, deep nesting, lone surrogates, odd file names, links out of the folder, FIFOs, Cypher and
prompt injection). Light cases run in groups of ``GROUP`` sharing one drop folder and one ingest, so a case that
aborted or hung the run fails its whole group; heavy ones (very wide files, 500 small sources in one folder) run alone.
A group that runs past ``runner.HANG_SECONDS`` has hung and fails (the speed goal, 30 s a group, is measured by
``bench/hostile.py``, not asserted here); what each case must come to is in its ``Expect``, and
the corpus-wide rules (no abort, the good file beside each case lands whole, nothing outside the folder opened,
printable bounded NFC source names, a dead letter with a reason for every row that did not land) in
``runner.check_group``. The Kafka runtime gets a sample of every kind in ``tests/integration/test_hostile_stack.py``.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from tests.hostile import Case, corpus
from tests.hostile.runner import check_group, run_group

GROUP = 10
CASES = corpus()
LIGHT = [c for c in CASES if not c.heavy]
GROUPS: list[list[Case]] = [LIGHT[i : i + GROUP] for i in range(0, len(LIGHT), GROUP)]
GROUPS += [[c] for c in CASES if c.heavy]


def test_the_corpus_is_large_and_covers_every_kind_the_issue_names() -> None:
    kinds = Counter(c.kind for c in CASES)
    assert len(CASES) >= 200
    assert len({c.id for c in CASES}) == len(CASES)
    for kind in ("csv-quoting", "encoding", "bom", "binary", "truncated", "wide", "huge-line", "zip-bomb", "deep",
                 "surrogate", "file-name", "symlink", "fifo", "injection"):  # fmt: skip
        assert kinds[kind] >= 1, kind


@pytest.mark.parametrize("cases", GROUPS, ids=[f"{g[0].id}-{g[-1].id}" for g in GROUPS])
def test_every_hostile_case_is_handled(cases: list[Case], tmp_path: Path) -> None:
    out = run_group(cases, tmp_path)
    problems = check_group(cases, out)
    assert not problems, "\n".join(problems)


def test_the_checks_fail_a_case_that_is_not_handled(tmp_path: Path) -> None:
    """The runner is not a test that cannot fail: a case whose expectation the ingest does not meet is reported."""
    from dataclasses import replace

    from tests.hostile import Expect

    case = next(c for c in LIGHT if c.expect.dead == 0 and c.expect.records)
    wrong = replace(case, expect=Expect(records=(case.expect.records or 0) + 1, dead=1))
    out = run_group([wrong], tmp_path)
    problems = check_group([wrong], out)
    assert any("records, expected" in p for p in problems)
    assert any("dead letters, expected 1" in p for p in problems)
